import type { Socket } from "node:net";
import { ConnectionLimitError, type DaemonInfo, type DroppedConnections, type Logger } from "@mcpd/protocol";
import type { BudgetAccount, BufferBudget } from "../infra/buffer-budget.js";
import type { ClientConn } from "./client-conn.js";
import { Farewells } from "./farewell.js";

/** The daemon-wide bounds on clients; see RUNTIME_DEFAULTS for their meaning and defaults. */
export interface SocketLimits {
  /** Connections accepted at once; the one over gets MCPD_TOO_MANY_CONNECTIONS (-32072) and is closed. */
  maxConnections: number;
  /** What set `maxConnections`, named in the refusal: `mcpd.maxConnections`, or the open-file limit. */
  maxConnectionsWhy: string;
  /** A client's line must be finished within this many ms of its first byte, or its connection is closed. */
  partialLineTimeoutMs: number;
}

/** The server's view of its clients, for `mcpd/status`. */
export type SocketServerStats = Pick<
  DaemonInfo,
  "connections" | "maxConnections" | "bufferedBytes" | "maxBufferedBytesTotal" | "partialLineTimeoutMs" | "dropped"
>;

/** A dropped connection with more unsent output than this is destroyed at once, without an error line (it is not reading). */
const FAREWELL_MAX_BACKLOG_BYTES = 64 * 1024;
/** Repeated refusals are logged at most this often, with a count, in ms. */
const LOG_EVERY_MS = 5_000;
const NO_BYTES = Buffer.alloc(0);

/**
 * The daemon-wide bounds on the socket server's clients ({@link SocketLimits}): connections over the cap
 * are refused with an error line; the bytes held for its clients (unfinished input lines, unsent output)
 * are charged by deltas as they change to the daemon-wide {@link BufferBudget}, which it serves as an
 * account: past the budget, when a socket connection holds the most of any client, that connection is
 * closed; a line not finished within the deadline closes its connection. Each is logged with the client
 * and the bytes, and counted in {@link stats}.
 *
 * The socket server calls it on its per-message path ({@link afterInput}, {@link countOutput}): those
 * allocate nothing.
 */
export class ClientLimits implements BudgetAccount {
  /** The connections being served (refused ones are never in it). */
  readonly conns = new Set<ClientConn>();
  private readonly log: Logger;
  private limits: SocketLimits;
  /** The daemon-wide budget every live connection's inBytes + outBytes is charged to. */
  private readonly budget: BufferBudget;
  /** Connections with an unfinished line, checked against the deadline by {@link sweep}. */
  private readonly midLine = new Set<ClientConn>();
  private sweepTimer: NodeJS.Timeout | undefined;
  private readonly farewells = new Farewells();
  private readonly droppedCounts: DroppedConnections = { tooManyConnections: 0, overBudget: 0, lineTimeout: 0, notReading: 0 };
  private readonly throttle = { refusedAt: 0, refused: 0 };
  /** Connections the daemon's other face (the HTTP front end) holds: they count against the same cap. */
  otherConnections: () => number = () => 0;
  /** Told of bytes let go, now garbage (a GarbagePacer's `release`): reads copied into a line, lines ended or dropped, output written. */
  released: (bytes: number) => void = () => {};

  constructor(limits: SocketLimits, budget: BufferBudget, log: Logger) {
    this.limits = { ...limits };
    this.budget = budget;
    this.log = log;
    budget.add(this);
  }

  /** Counts and bounds for `mcpd/status`. */
  stats(): SocketServerStats {
    return {
      connections: this.conns.size,
      maxConnections: this.limits.maxConnections,
      bufferedBytes: this.budget.bytes,
      maxBufferedBytesTotal: this.budget.max,
      partialLineTimeoutMs: this.limits.partialLineTimeoutMs,
      dropped: { ...this.droppedCounts },
    };
  }

  /** New bounds (after a reload). Connections already open stay. */
  setLimits(limits: SocketLimits): void {
    const timeoutChanged = limits.partialLineTimeoutMs !== this.limits.partialLineTimeoutMs;
    this.limits = { ...limits };
    if (timeoutChanged && this.sweepTimer) {
      this.stop();
      if (this.midLine.size > 0) this.armSweep();
    }
  }

  /** Starts counting a connection just accepted. */
  add(conn: ClientConn): void {
    this.conns.add(conn);
  }

  /** A connection closed: it is no longer counted. */
  remove(conn: ClientConn): void {
    this.forget(conn);
    this.conns.delete(conn);
  }

  /**
   * Whether the connections are at the cap, counting the HTTP front end's with the socket's (each holds
   * a descriptor whichever face took it): a new one is answered by {@link refuse}.
   */
  get full(): boolean {
    return this.conns.size + this.otherConnections() >= this.limits.maxConnections;
  }

  /**
   * After a chunk of a connection's input was decoded: recounts its unfinished line, starts or ends
   * that line's deadline, and enforces the budget. `ended`: the decoder's `linesEnded` before the chunk.
   */
  afterInput(conn: ClientConn, ended: number): void {
    const decoder = conn.decoder;
    const held = decoder.retainedBytes;
    const grown = held - conn.inBytes;
    if (grown !== 0) {
      this.released(Math.abs(grown));
      conn.inBytes = held;
    }
    if (decoder.inLine) {
      // The deadline runs from the line's first byte: a line that began in this chunk restarts it.
      if (conn.lineStartedAt === 0 || decoder.linesEnded !== ended) this.lineStarted(conn);
    } else if (conn.lineStartedAt !== 0) {
      conn.lineStartedAt = 0;
      this.midLine.delete(conn);
    }
    if (grown !== 0) this.budget.charge(grown);
  }

  /** Answers a connection over the cap with one error line, then closes it. */
  refuse(socket: Socket): void {
    this.droppedCounts.tooManyConnections++;
    socket.on("error", () => {});
    const { maxConnections, maxConnectionsWhy } = this.limits;
    const t = this.throttle;
    t.refused++;
    const now = Date.now();
    if (now - t.refusedAt >= LOG_EVERY_MS) {
      this.log.warn(
        {
          connections: this.conns.size,
          httpConnections: this.otherConnections(),
          maxConnections,
          why: maxConnectionsWhy,
          refused: t.refused,
        },
        "connection refused: too many connections",
      );
      t.refusedAt = now;
      t.refused = 0;
    }
    // Each waiting refusal holds a descriptor: under a storm, close the rest at once.
    if (this.farewells.full) {
      socket.destroy();
      return;
    }
    const raise = maxConnectionsWhy === "mcpd.maxConnections" ? "mcpd.maxConnections" : "the open-file limit (ulimit -n)";
    this.farewells.send(
      socket,
      new ConnectionLimitError(
        "MCPD_TOO_MANY_CONNECTIONS",
        `Too many connections: mcpd accepts at most ${maxConnections} at once (${maxConnectionsWhy}); close idle clients or raise ${raise}`,
      ),
    );
  }

  /** Recounts a connection's unsent output; while some is left, an empty write's callback recounts it once written. */
  countOutput(conn: ClientConn): void {
    const out = conn.socket.writableLength;
    if (out !== conn.outBytes) {
      this.released(conn.outBytes - out);
      const grown = out - conn.outBytes;
      conn.outBytes = out;
      this.budget.charge(grown);
    }
    if (out > 0 && !conn.gone && !conn.flushWatch) {
      conn.flushWatch = true;
      conn.socket.write(NO_BYTES, () => {
        conn.flushWatch = false;
        if (!conn.gone && !conn.socket.destroyed) this.countOutput(conn);
      });
    }
  }

  private lineStarted(conn: ClientConn): void {
    conn.lineStartedAt = Date.now();
    this.midLine.add(conn);
    if (!this.sweepTimer) this.armSweep();
  }

  /** Checks the unfinished lines against the deadline, a few times per deadline, while there are any. */
  private armSweep(): void {
    const every = Math.min(1_000, Math.max(10, Math.floor(this.limits.partialLineTimeoutMs / 4)));
    this.sweepTimer = setInterval(() => this.sweep(), every);
    this.sweepTimer.unref();
  }

  private sweep(): void {
    const now = Date.now();
    const deadline = this.limits.partialLineTimeoutMs;
    for (const conn of this.midLine) {
      if (now - conn.lineStartedAt < deadline) continue;
      conn.log.warn({ heldBytes: conn.inBytes, timeoutMs: deadline }, "line not finished within the deadline; disconnecting the client");
      this.drop(
        conn,
        "lineTimeout",
        new ConnectionLimitError(
          "MCPD_LINE_TIMEOUT",
          `Connection closed: a line was not finished within ${deadline} ms (mcpd.partialLineTimeoutMs); ` +
            "every message must end with a newline",
        ),
      );
    }
    if (this.midLine.size === 0) this.stop();
  }

  /** The bytes held by the connection holding the most (for the daemon-wide budget). */
  largestHolder(): number {
    const c = this.holdingMost();
    return c ? c.inBytes + c.outBytes : 0;
  }

  private holdingMost(): ClientConn | undefined {
    let worst: ClientConn | undefined;
    for (const c of this.conns) if (c.inBytes + c.outBytes > (worst ? worst.inBytes + worst.outBytes : 0)) worst = c;
    return worst;
  }

  /** Over the daemon-wide budget: closes the connection holding the most. */
  shedLargest(total: number, budget: number): void {
    const worst = this.holdingMost();
    if (!worst) return;
    const most = worst.inBytes + worst.outBytes;
    worst.log.warn(
      { heldBytes: most, inputBytes: worst.inBytes, outputBytes: worst.outBytes, totalBytes: total, budgetBytes: budget },
      "over the daemon-wide buffer budget; disconnecting the client holding the most",
    );
    this.drop(
      worst,
      "overBudget",
      new ConnectionLimitError(
        "MCPD_BUFFER_BUDGET_EXCEEDED",
        `Connection closed: mcpd holds ${total} bytes for its clients, over mcpd.maxBufferedBytesTotal (${budget} bytes), ` +
          `and this connection held the most (${most} bytes: ${worst.inBytes} of an unfinished line, ` +
          `${worst.outBytes} of output it has not read)`,
      ),
    );
  }

  /** Stops counting a connection (it closed, or is being closed). */
  private forget(conn: ClientConn): void {
    if (conn.gone) return;
    conn.gone = true;
    const held = conn.inBytes + conn.outBytes;
    this.released(held);
    conn.inBytes = 0;
    conn.outBytes = 0;
    if (held !== 0) this.budget.charge(-held);
    if (conn.lineStartedAt !== 0) {
      conn.lineStartedAt = 0;
      this.midLine.delete(conn);
    }
  }

  /**
   * Closes a connection on the server's own account: its held bytes stop counting at once, its unfinished
   * line is let go, and it gets `error` as its last line unless it has output it is not reading.
   */
  drop(conn: ClientConn, reason: keyof DroppedConnections, error?: ConnectionLimitError): void {
    if (conn.gone) return;
    // This tick's answers go before the farewell, as they were sent before it.
    const pending = conn.takeOutput();
    const backlog = conn.socket.writableLength + pending.length;
    this.forget(conn);
    this.droppedCounts[reason]++;
    conn.decoder.clear();
    if (error && backlog <= FAREWELL_MAX_BACKLOG_BYTES && !conn.socket.destroyed) this.farewells.send(conn.socket, error, pending);
    else conn.socket.destroy();
  }

  /** Stops the deadline's timer (the server is closing every connection). */
  stop(): void {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
  }
}
