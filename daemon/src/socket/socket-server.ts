import { chmodSync, renameSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { RUNTIME_DEFAULTS } from "../defaults.js";
import { GarbagePacer } from "../infra/garbage-pacer.js";
import type { BufferBudget } from "../infra/buffer-budget.js";
import { silentDaemonLogger, type DaemonLogger } from "../infra/daemon-logger.js";
import { ClientLimits, type SocketLimits, type SocketServerStats } from "./client-limits.js";
import type { Router } from "../router/router.js";
import { SocketClient, type SocketClientShared } from "./socket-client.js";
import { bindPathFor } from "./socket-path.js";

export interface SocketServerOptions {
  socketPath: string;
  router: Router;
  /** Each connection logs through a child of it; messages in and out are logged at trace level only. */
  logger?: DaemonLogger;
  /** Largest line accepted from a client, in bytes. */
  maxLineBytes: number;
  /** Bytes allowed to wait in one connection's outgoing buffer; past this the client is disconnected. */
  maxOutgoingBytes: number;
  limits: SocketLimits;
  /** The daemon-wide budget of bytes held for clients (`mcpd.maxBufferedBytesTotal`), shared with the HTTP front end. */
  budget: BufferBudget;
  /** Told of the client buffers let go. Default: one paced by RUNTIME_DEFAULTS (`gcPace*`). */
  pacer?: GarbagePacer;
}

/** Repeated accept errors are logged at most this often, with a count, in ms. */
const LOG_EVERY_MS = 5_000;

/**
 * The Unix-socket face of the daemon: newline-delimited JSON-RPC, one {@link SocketClient} (and so one
 * session) per connection.
 * Bad lines get an error and the connection stays usable; a client that stops reading is disconnected
 * once its outgoing buffer passes its bound, so it never stalls anyone else.
 *
 * Daemon-wide bounds ({@link SocketLimits}: a connection cap, a deadline for an unfinished line; and its
 * clients' share of the daemon-wide {@link BufferBudget}) are kept by {@link ClientLimits}, told of every connection, every
 * chunk read and every tick's output; each drop is counted in {@link stats}.
 */
export class SocketServer {
  private readonly server: Server;
  private readonly opts: SocketServerOptions;
  private readonly log: DaemonLogger;
  private readonly limits: ClientLimits;
  private readonly throttle = { acceptErrorAt: 0, acceptErrors: 0 };
  private readonly shared: SocketClientShared;
  private readonly pacer: GarbagePacer;

  constructor(options: SocketServerOptions) {
    this.opts = options;
    this.log = options.logger ?? silentDaemonLogger;
    this.limits = new ClientLimits(options.limits, options.budget, this.log);
    const pace = { minIntervalMs: RUNTIME_DEFAULTS.gcPaceIntervalMs, minReleasedBytes: RUNTIME_DEFAULTS.gcPaceReleasedBytes };
    this.pacer = options.pacer ?? new GarbagePacer(pace);
    this.limits.released = (bytes) => this.pacer.release(bytes);
    this.shared = {
      router: options.router,
      limits: this.limits,
      log: this.log,
      maxLineBytes: options.maxLineBytes,
      maxOutgoingBytes: options.maxOutgoingBytes,
    };
    this.server = createServer((socket) => this.accept(socket));
    this.server.on("error", (err) => this.onServerError(err));
  }

  get connections(): number {
    return this.limits.conns.size;
  }

  /** Counts `count()` (the HTTP front end's connections) against this server's connection cap too. */
  shareCapWith(count: () => number): void {
    this.limits.otherConnections = count;
  }

  /** Counts and bounds for `mcpd/status`. */
  stats(): SocketServerStats {
    return this.limits.stats();
  }

  /** New bounds (after a reload). Connections already open stay. */
  setLimits(limits: SocketLimits): void {
    this.limits.setLimits(limits);
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
    if (this.limits.full) {
      this.limits.refuse(socket);
      return;
    }
    new SocketClient(socket, this.shared);
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
    this.limits.stop();
    this.pacer.stop();
    for (const c of this.limits.conns) {
      // Its last answers (this tick's) go before the end.
      const rest = c.takeOutput();
      if (rest !== "") c.socket.write(rest);
      c.socket.end();
    }
    for (const c of this.limits.conns) setTimeout(() => c.socket.destroy(), 500).unref();
  }
}
