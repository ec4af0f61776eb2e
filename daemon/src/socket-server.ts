import { chmodSync, lstatSync, mkdirSync, renameSync, rmSync, unlinkSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { dirname, join } from "node:path";
import { JsonLineDecoder, McpdError, WireCode, encodeLine, silentLogger, type Logger } from "@mcpd/protocol";
import { checkSocketPath, checkSocketTrust } from "@mcpd/client";
import type { Router } from "./router/router.js";
import type { Session } from "./router/session.js";

export interface SocketServerOptions {
  socketPath: string;
  router: Router;
  logger?: Logger;
  /** Largest line accepted from a client, in bytes. */
  maxLineBytes: number;
  /** Bytes allowed to wait in one connection's outgoing buffer; past this the client is disconnected. */
  maxOutgoingBytes: number;
  /** Log every message in and out at trace level (payloads are never logged above trace). */
  traceMessages?: boolean;
}

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
  let existing;
  try {
    existing = lstatSync(socketPath);
  } catch {
    return;
  }
  if (await probeSocket(socketPath)) throw new SocketSetupError("MCPD_ALREADY_RUNNING", `mcpd is already running on ${socketPath}`);
  if (!existing.isSocket()) throw new SocketSetupError("MCPD_UNSAFE_SOCKET_DIR", `Refusing to start: ${socketPath} exists and is not a socket`);
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
    return encodeLine({ jsonrpc: "2.0", id, error: { code: WireCode.InternalError, message: `Response cannot be encoded as JSON: ${(err as Error).message}` } });
  }
}

/**
 * The Unix-socket face of the daemon: newline-delimited JSON-RPC, one {@link Session} per connection.
 * Bad lines get an error and the connection stays usable; a client that stops reading is disconnected
 * once its outgoing buffer passes its bound, so it never stalls anyone else.
 */
export class SocketServer {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly opts: SocketServerOptions;
  private readonly log: Logger;

  constructor(options: SocketServerOptions) {
    this.opts = options;
    this.log = options.logger ?? silentLogger;
    this.server = createServer((socket) => this.accept(socket));
    this.server.on("error", (err) => this.log.error({ err: err.message }, "socket server error"));
  }

  get connections(): number {
    return this.sockets.size;
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
        this.server.on("error", (err) => this.log.error({ err: err.message }, "socket server error"));
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

  private accept(socket: Socket): void {
    this.sockets.add(socket);
    const maxOut = this.opts.maxOutgoingBytes;
    const trace = this.opts.traceMessages === true;
    let log = this.log;
    // Every message sent in one tick leaves in one writev (see StdinWriter for the measured reason).
    let corked = false;
    const uncork = (): void => {
      corked = false;
      socket.uncork();
    };
    const session: Session = this.opts.router.attach({
      send: (message) => {
        if (socket.destroyed) return false;
        if (trace) log.trace({ message }, "send");
        const line = encodeOutgoing(message, log);
        if (line === undefined) return true;
        if (!corked) {
          corked = true;
          socket.cork();
          process.nextTick(uncork);
        }
        socket.write(line);
        if (socket.writableLength > maxOut) {
          log.warn({ buffered: socket.writableLength }, "client is not reading; disconnecting it");
          socket.destroy();
          return false;
        }
        return true;
      },
    });
    const s = session;
    log = (this.log as Logger & { child?: (b: object) => Logger }).child?.({ client: s.id }) ?? this.log;
    log.debug("client connected");
    const decoder = new JsonLineDecoder({
      maxLineBytes: this.opts.maxLineBytes,
      onValue: trace
        ? (value) => {
            log.trace({ message: value }, "recv");
            s.handle(value);
          }
        : (value) => s.handle(value),
      onError: (err) => {
        log.debug({ err: err.message, preview: err.preview.slice(0, 200) }, "bad line from client");
        if (err.code === "MCPD_MESSAGE_TOO_LARGE") {
          s.replyError(null, { code: WireCode.MessageTooLarge, message: err.message, data: { mcpdCode: err.code } });
        } else {
          s.replyError(null, { code: WireCode.ParseError, message: `Parse error: ${err.message}`, data: { mcpdCode: err.code } });
        }
      },
    });
    socket.on("data", (chunk: Buffer) => decoder.push(chunk));
    socket.on("error", (err) => log.debug({ err: err.message }, "client socket error"));
    socket.on("close", () => {
      log.debug({ clientInfo: s.clientInfo }, "client disconnected");
      this.sockets.delete(socket);
      void this.opts.router.detach(s);
    });
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
    for (const s of this.sockets) s.end();
    for (const s of this.sockets) setTimeout(() => s.destroy(), 500).unref();
  }
}
