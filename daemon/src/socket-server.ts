import { chmodSync, lstatSync, mkdirSync, renameSync, rmSync, unlinkSync, type Stats } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { dirname, join } from "node:path";
import {
  ConnectionLimitError,
  JsonLineDecoder,
  McpdError,
  WireCode,
  encodeLine,
  silentLogger,
  toWireError,
  type DaemonInfo,
  type DroppedConnections,
  type Logger,
} from "@mcpd/protocol";
import { checkSocketPath, checkSocketTrust } from "@mcpd/client";
import type { Router } from "./router/router.js";
import type { Session } from "./router/session.js";

/** The daemon-wide bounds on clients; see RUNTIME_DEFAULTS for their meaning and defaults. */
export interface SocketLimits {
  /** Connections accepted at once; the one over gets MCPD_TOO_MANY_CONNECTIONS (-32072) and is closed. */
  maxConnections: number;
  /** What set `maxConnections`, named in the refusal: `mcpd.maxConnections`, or the open-file limit. */
  maxConnectionsWhy: string;
  /** Bytes held for all clients together (unfinished input lines, unsent output); past it the largest holder is closed. */
  maxBufferedBytesTotal: number;
  /** A client's line must be finished within this many ms of its first byte, or its connection is closed. */
  partialLineTimeoutMs: number;
}

export interface SocketServerOptions {
  socketPath: string;
  router: Router;
  logger?: Logger;
  /** Largest line accepted from a client, in bytes. */
  maxLineBytes: number;
  /** Bytes allowed to wait in one connection's outgoing buffer; past this the client is disconnected. */
  maxOutgoingBytes: number;
  limits: SocketLimits;
  /** Log every message in and out at trace level (payloads are never logged above trace). */
  traceMessages?: boolean;
}

/** The server's view of its clients, for `mcpd/status`. */
export type SocketServerStats = Pick<
  DaemonInfo,
  "connections" | "maxConnections" | "bufferedBytes" | "maxBufferedBytesTotal" | "partialLineTimeoutMs" | "dropped"
>;

/** What the server tracks per connection for the daemon-wide bounds. */
interface Conn {
  readonly socket: Socket;
  readonly decoder: JsonLineDecoder;
  log: Logger;
  /** Bytes of its unfinished input line, as counted into SocketServer.buffered. */
  inBytes: number;
  /** Bytes of its unsent output, as counted into SocketServer.buffered (recounted once per tick it is written to). */
  outBytes: number;
  /** When its unfinished line began (Date.now()); 0 between lines. */
  lineStartedAt: number;
  /** An empty write is queued whose callback recounts the output once everything before it is written. */
  flushWatch: boolean;
  /** Closed, or being closed by the server: no longer counted; nothing more is read from it or sent to it. */
  gone: boolean;
}

/** A refused or dropped connection gets this long to receive its error line before it is destroyed, in ms. */
const FAREWELL_MS = 1_000;
/** At most this many refused connections wait for their error line at once; more are closed without one. */
const MAX_FAREWELLS = 16;
/** A dropped connection with more unsent output than this is destroyed at once, without an error line (it is not reading). */
const FAREWELL_MAX_BACKLOG_BYTES = 64 * 1024;
/** Repeated refusals and accept errors are logged at most this often, with a count, in ms. */
const LOG_EVERY_MS = 5_000;
const NO_BYTES = Buffer.alloc(0);

/** Refusals before listening: another daemon, unsafe directory, bad path. */
export class SocketSetupError extends McpdError {
  override name = "SocketSetupError";
  constructor(code: "MCPD_ALREADY_RUNNING" | "MCPD_UNSAFE_SOCKET_DIR", message: string) {
    super(code, message);
  }
}

/**
 * The path a daemon with that pid binds before renaming it to `socketPath` (see SocketServer.listen):
 * `<dir>/.<pid>`, or `socketPath` itself when that name would be longer. /proc/net/unix keeps showing it.
 */
export function bindPathFor(socketPath: string, pid: number): string {
  const tmp = join(dirname(socketPath), `.${pid}`);
  return Buffer.byteLength(tmp) <= Buffer.byteLength(socketPath) ? tmp : socketPath;
}

/** Whether something answers on a Unix socket path (a live daemon), within `timeoutMs`. */
export function probeSocket(path: string, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(path);
    const done = (v: boolean): void => {
      clearTimeout(t);
      s.destroy();
      resolve(v);
    };
    const t = setTimeout(() => done(false), timeoutMs);
    s.once("connect", () => done(true));
    s.once("error", () => done(false));
  });
}

/**
 * Checks the runtime directory (created 0700) and the socket path with the same rule every client applies
 * before connecting (`checkSocketTrust`: the directory is this user's and not writable by group or others,
 * the socket is this user's and not a symbolic link), then: a live daemon -> "already running"; a stale
 * socket removed; anything else refused.
 */
export async function prepareSocketPath(socketPath: string): Promise<void> {
  const tooLong = checkSocketPath(socketPath);
  if (tooLong) throw new SocketSetupError("MCPD_UNSAFE_SOCKET_DIR", tooLong);
  mkdirSync(dirname(socketPath), { recursive: true, mode: 0o700 });
  const untrusted = checkSocketTrust(socketPath);
  if (untrusted) throw new SocketSetupError("MCPD_UNSAFE_SOCKET_DIR", `Refusing to start: ${untrusted.message}`);
  let existing: Stats;
  try {
    existing = lstatSync(socketPath);
  } catch {
    return;
  }
  if (await probeSocket(socketPath)) throw new SocketSetupError("MCPD_ALREADY_RUNNING", `mcpd is already running on ${socketPath}`);
  if (!existing.isSocket())
    throw new SocketSetupError("MCPD_UNSAFE_SOCKET_DIR", `Refusing to start: ${socketPath} exists and is not a socket`);
  unlinkSync(socketPath); // stale: nothing answers
}

/**
 * The wire form of one outgoing message. A message with no JSON form (nested too deep for
 * `JSON.stringify`, from a peer's pathological value) must not throw out of whichever callback is
 * sending it (that would end the daemon): a response becomes an internal error for its id, anything
 * else is dropped; both are logged.
 */
function encodeOutgoing(message: object, log: Logger): string | undefined {
  try {
    return encodeLine(message);
  } catch (err) {
    const m = message as { id?: unknown; method?: unknown };
    const id = m.method === undefined && (typeof m.id === "string" || typeof m.id === "number") ? m.id : undefined;
    log.error({ err: (err as Error).message, id }, "outgoing message cannot be encoded as JSON");
    if (id === undefined) return undefined;
    return encodeLine({
      jsonrpc: "2.0",
      id,
      error: { code: WireCode.InternalError, message: `Response cannot be encoded as JSON: ${(err as Error).message}` },
    });
  }
}

/**
 * The Unix-socket face of the daemon: newline-delimited JSON-RPC, one {@link Session} per connection.
 * Bad lines get an error and the connection stays usable; a client that stops reading is disconnected
 * once its outgoing buffer passes its bound, so it never stalls anyone else.
 *
 * Daemon-wide bounds ({@link SocketLimits}): connections over the cap are refused with an error line;
 * the bytes held for all clients (unfinished input lines, unsent output) are counted by deltas as they
 * change, and past the budget the connection holding the most is closed, then the next, until the total
 * is under it; a line not finished within the deadline closes its connection. Each is logged with the
 * client and the bytes, and counted in {@link stats}.
 */
export class SocketServer {
  private readonly server: Server;
  private readonly conns = new Set<Conn>();
  private readonly opts: SocketServerOptions;
  private readonly log: Logger;
  private limits: SocketLimits;
  /** Bytes held for all clients: the sum of every live connection's inBytes + outBytes. */
  private buffered = 0;
  /** Connections with an unfinished line, checked against the deadline by {@link sweep}. */
  private readonly midLine = new Set<Conn>();
  private sweepTimer: NodeJS.Timeout | undefined;
  private farewells = 0;
  private readonly droppedCounts: DroppedConnections = { tooManyConnections: 0, overBudget: 0, lineTimeout: 0, notReading: 0 };
  private readonly throttle = { refusedAt: 0, refused: 0, acceptErrorAt: 0, acceptErrors: 0 };

  constructor(options: SocketServerOptions) {
    this.opts = options;
    this.limits = { ...options.limits };
    this.log = options.logger ?? silentLogger;
    this.server = createServer((socket) => this.accept(socket));
    this.server.on("error", (err) => this.onServerError(err));
  }

  get connections(): number {
    return this.conns.size;
  }

  /** Counts and bounds for `mcpd/status`. */
  stats(): SocketServerStats {
    return {
      connections: this.conns.size,
      maxConnections: this.limits.maxConnections,
      bufferedBytes: this.buffered,
      maxBufferedBytesTotal: this.limits.maxBufferedBytesTotal,
      partialLineTimeoutMs: this.limits.partialLineTimeoutMs,
      dropped: { ...this.droppedCounts },
    };
  }

  /** New bounds (after a reload). Connections already open stay; a lower budget is enforced at once. */
  setLimits(limits: SocketLimits): void {
    const timeoutChanged = limits.partialLineTimeoutMs !== this.limits.partialLineTimeoutMs;
    this.limits = { ...limits };
    if (timeoutChanged && this.sweepTimer) {
      clearInterval(this.sweepTimer);
      this.sweepTimer = undefined;
      if (this.midLine.size > 0) this.armSweep();
    }
    if (this.buffered > this.limits.maxBufferedBytesTotal) this.enforceBudget();
  }

  listen(): Promise<void> {
    const target = this.opts.socketPath;
    // bind() creates the file a moment before listen() accepts: a client that sees the file then may be
    // refused. Binding a temporary name in the same directory and renaming it into place makes the path
    // appear only once it answers. (Skipped when the temporary name would be longer than the path.)
    const path = bindPathFor(target, process.pid);
    if (path !== target) rmSync(path, { force: true });
    return new Promise((resolve, reject) => {
      // umask makes the socket 0600 from its first instant; chmod afterwards is belt and braces.
      const old = process.umask(0o177);
      this.server.once("error", (err) => {
        process.umask(old);
        reject(err);
      });
      this.server.listen(path, () => {
        process.umask(old);
        this.server.removeAllListeners("error");
        this.server.on("error", (err) => this.onServerError(err));
        try {
          chmodSync(path, 0o600);
          if (path !== target) renameSync(path, target);
          resolve();
        } catch (err) {
          reject(err as Error);
        }
      });
    });
  }

  /**
   * An error of the listening socket, such as accept() failing: logged (at most every few seconds, with
   * a count), never fatal; the server keeps listening. (Out of descriptors, EMFILE or ENFILE, libuv
   * accepts the waiting connections on a descriptor it keeps in reserve and closes them itself.)
   */
  private onServerError(err: NodeJS.ErrnoException): void {
    const t = this.throttle;
    t.acceptErrors++;
    const now = Date.now();
    if (now - t.acceptErrorAt < LOG_EVERY_MS) return;
    this.log.error({ err: err.message, code: err.code, count: t.acceptErrors }, "socket server error; still listening");
    t.acceptErrorAt = now;
    t.acceptErrors = 0;
  }

  private accept(socket: Socket): void {
    if (this.conns.size >= this.limits.maxConnections) {
      this.refuse(socket);
      return;
    }
    const maxOut = this.opts.maxOutgoingBytes;
    const trace = this.opts.traceMessages === true;
    // Assigned right below; the decoder's callbacks only run once data arrives.
    let s: Session;
    const decoder = new JsonLineDecoder({
      maxLineBytes: this.opts.maxLineBytes,
      onValue: trace
        ? (value) => {
            conn.log.trace({ message: value }, "recv");
            s.handle(value);
          }
        : (value) => s.handle(value),
      onError: (err) => {
        conn.log.debug({ err: err.message, preview: err.preview.slice(0, 200) }, "bad line from client");
        if (err.code === "MCPD_MESSAGE_TOO_LARGE") {
          s.replyError(null, { code: WireCode.MessageTooLarge, message: err.message, data: { mcpdCode: err.code } });
        } else {
          s.replyError(null, { code: WireCode.ParseError, message: `Parse error: ${err.message}`, data: { mcpdCode: err.code } });
        }
      },
    });
    const conn: Conn = { socket, decoder, log: this.log, inBytes: 0, outBytes: 0, lineStartedAt: 0, flushWatch: false, gone: false };
    this.conns.add(conn);
    // Every message sent in one tick leaves in one writev (see StdinWriter for the measured reason).
    let corked = false;
    const uncork = (): void => {
      corked = false;
      socket.uncork();
      // Output is counted once per tick, after the kernel took what it would: a broadcast to many
      // clients in one tick is not mistaken for clients that do not read.
      if (!conn.gone) this.countOutput(conn);
    };
    s = this.opts.router.attach({
      send: (message) => {
        if (conn.gone || socket.destroyed) return false;
        if (trace) conn.log.trace({ message }, "send");
        const line = encodeOutgoing(message, conn.log);
        if (line === undefined) return true;
        if (!corked) {
          corked = true;
          socket.cork();
          process.nextTick(uncork);
        }
        socket.write(line);
        if (socket.writableLength > maxOut) {
          conn.log.warn({ buffered: socket.writableLength }, "client is not reading; disconnecting it");
          this.drop(conn, "notReading");
          return false;
        }
        return true;
      },
    });
    const session = s;
    conn.log = (this.log as Logger & { child?: (b: object) => Logger }).child?.({ client: session.id }) ?? this.log;
    conn.log.debug("client connected");
    socket.on("data", (chunk: Buffer) => {
      if (conn.gone) return;
      const ended = decoder.linesEnded;
      decoder.push(chunk);
      if (conn.gone) return;
      const held = decoder.bufferedBytes;
      if (held !== conn.inBytes) {
        this.buffered += held - conn.inBytes;
        conn.inBytes = held;
      }
      if (decoder.inLine) {
        // The deadline runs from the line's first byte: a line that began in this chunk restarts it.
        if (conn.lineStartedAt === 0 || decoder.linesEnded !== ended) this.lineStarted(conn);
      } else if (conn.lineStartedAt !== 0) {
        conn.lineStartedAt = 0;
        this.midLine.delete(conn);
      }
      if (this.buffered > this.limits.maxBufferedBytesTotal) this.enforceBudget();
    });
    socket.on("error", (err) => conn.log.debug({ err: err.message }, "client socket error"));
    socket.on("close", () => {
      conn.log.debug({ clientInfo: session.clientInfo }, "client disconnected");
      this.forget(conn);
      this.conns.delete(conn);
      void this.opts.router.detach(session);
    });
  }

  /** Answers a connection over the cap with one error line, then closes it. */
  private refuse(socket: Socket): void {
    this.droppedCounts.tooManyConnections++;
    socket.on("error", () => {});
    const { maxConnections, maxConnectionsWhy } = this.limits;
    const t = this.throttle;
    t.refused++;
    const now = Date.now();
    if (now - t.refusedAt >= LOG_EVERY_MS) {
      this.log.warn(
        { connections: this.conns.size, maxConnections, why: maxConnectionsWhy, refused: t.refused },
        "connection refused: too many connections",
      );
      t.refusedAt = now;
      t.refused = 0;
    }
    // Each waiting refusal holds a descriptor: under a storm, close the rest at once.
    if (this.farewells >= MAX_FAREWELLS) {
      socket.destroy();
      return;
    }
    const raise = maxConnectionsWhy === "mcpd.maxConnections" ? "mcpd.maxConnections" : "the open-file limit (ulimit -n)";
    this.farewell(
      socket,
      new ConnectionLimitError(
        "MCPD_TOO_MANY_CONNECTIONS",
        `Too many connections: mcpd accepts at most ${maxConnections} at once (${maxConnectionsWhy}); close idle clients or raise ${raise}`,
      ),
    );
  }

  /**
   * Sends `error` as the connection's last line (id null), ends it, and destroys it {@link FAREWELL_MS}
   * later. Nothing more is read from it (a client streaming a huge line must not keep the daemon reading
   * garbage). Not destroyed at once: a client that writes after our close would get EPIPE and drop the
   * line unread.
   */
  private farewell(socket: Socket, error: ConnectionLimitError): void {
    this.farewells++;
    socket.once("close", () => this.farewells--);
    socket.pause();
    socket.end(encodeLine({ jsonrpc: "2.0", id: null, error: toWireError(error) }));
    setTimeout(() => socket.destroy(), FAREWELL_MS).unref();
  }

  /** Recounts a connection's unsent output; while some is left, an empty write's callback recounts it once written. */
  private countOutput(conn: Conn): void {
    const out = conn.socket.writableLength;
    if (out !== conn.outBytes) {
      this.buffered += out - conn.outBytes;
      conn.outBytes = out;
      if (this.buffered > this.limits.maxBufferedBytesTotal) this.enforceBudget();
    }
    if (out > 0 && !conn.gone && !conn.flushWatch) {
      conn.flushWatch = true;
      conn.socket.write(NO_BYTES, () => {
        conn.flushWatch = false;
        if (!conn.gone && !conn.socket.destroyed) this.countOutput(conn);
      });
    }
  }

  private lineStarted(conn: Conn): void {
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
    if (this.midLine.size === 0 && this.sweepTimer) {
      clearInterval(this.sweepTimer);
      this.sweepTimer = undefined;
    }
  }

  /** Closes the connections holding the most until the total held is within the budget. */
  private enforceBudget(): void {
    const budget = this.limits.maxBufferedBytesTotal;
    while (this.buffered > budget) {
      let worst: Conn | undefined;
      let most = 0;
      for (const c of this.conns) {
        const held = c.inBytes + c.outBytes;
        if (held > most) {
          most = held;
          worst = c;
        }
      }
      if (!worst) return;
      const total = this.buffered;
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
  }

  /** Stops counting a connection (it closed, or is being closed). */
  private forget(conn: Conn): void {
    if (conn.gone) return;
    conn.gone = true;
    this.buffered -= conn.inBytes + conn.outBytes;
    conn.inBytes = 0;
    conn.outBytes = 0;
    if (conn.lineStartedAt !== 0) {
      conn.lineStartedAt = 0;
      this.midLine.delete(conn);
    }
  }

  /**
   * Closes a connection on the server's own account: its held bytes stop counting at once, its unfinished
   * line is let go, and it gets `error` as its last line unless it has output it is not reading.
   */
  private drop(conn: Conn, reason: keyof DroppedConnections, error?: ConnectionLimitError): void {
    if (conn.gone) return;
    const backlog = conn.socket.writableLength;
    this.forget(conn);
    this.droppedCounts[reason]++;
    conn.decoder.clear();
    if (error && backlog <= FAREWELL_MAX_BACKLOG_BYTES && !conn.socket.destroyed) this.farewell(conn.socket, error);
    else conn.socket.destroy();
  }

  /**
   * Stops accepting new connections. Resolves at once: `server.close()` only calls back once every
   * existing connection has ended, and those are still being served during a graceful shutdown.
   */
  stopAccepting(): void {
    this.server.close();
  }

  /** Ends every connection (after their last answers were written). */
  closeAll(): void {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
    for (const c of this.conns) c.socket.end();
    for (const c of this.conns) setTimeout(() => c.socket.destroy(), 500).unref();
  }
}
