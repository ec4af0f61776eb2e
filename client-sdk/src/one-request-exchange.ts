import type net from "node:net";
import {
  ConnectionLostError,
  Deadline,
  JsonLineDecoder,
  PROTOCOL_DEFAULTS,
  RequestTimeoutError,
  encodeLine,
  fromWireError,
  isObject,
  quote,
  type JsonObject,
  type JsonRpcErrorObject,
} from "@mcpd/protocol/core";
import { endSocket, hungUpError, NO_AUTOSTART_HINT, stuckDaemonError } from "./daemon-socket.js";
import { abortedError, CLOSING_CODES, connectionLostError, type ProgressInfo, progressInfo, wireError } from "./request-helpers.js";

/** Progress of the exchange's request: reported, and restarting its deadline as a session's request does. */
export interface ExchangeProgress {
  onProgress: (progress: ProgressInfo) => void;
  /** Restart the deadline on each progress notification. */
  reset: boolean;
  /** Ceiling of the request's life when progress keeps restarting its deadline, in ms. */
  maxTotalMs: number;
}

/** One exchange on a fresh connection: what to send, which answers matter, and its bounds. */
export interface ExchangeSpec {
  /** The daemon's socket, named in errors. */
  socketPath: string;
  /** Every line to send, written at once: the handshake's messages, then the request. */
  lines: string;
  /** Id of the `mcpd/select`: until it is answered the exchange is in its handshake. */
  selectId: number;
  /** Id of the `initialize` sent, if any: its error is the exchange's error. */
  initializeId: number | undefined;
  /** Id of the request whose answer settles the exchange (also its progress token). */
  requestId: number;
  /** The connect deadline, in ms: named when the select is not answered in time. */
  connectTimeoutMs: number;
  /** What is left of it once connected, in ms: the deadline of the select's answer. */
  handshakeLeftMs: number;
  /** The request's deadline, in ms, from the write (at or past `MAX_TIMER_MS`: none); progress restarts it ({@link Deadline}). */
  timeoutMs: number;
  maxLineBytes: number;
  /**
   * Skip a line from the daemon that cannot be read (too long, not JSON), as a session does: on an
   * initialized connection it may be any server's notification. Otherwise it can only be the answer, and
   * fails the exchange at once.
   */
  skipUnreadable: boolean;
  signal: AbortSignal | undefined;
  progress: ExchangeProgress | undefined;
  /** Send `notifications/cancelled` for the request when its deadline passes or `signal` aborts. */
  cancelOnGiveUp: boolean;
}

/**
 * Runs one exchange on `socket` (connected and trusted, nothing sent yet): writes `spec.lines` in one
 * write and settles with the request's result, then ends the connection (what was written is flushed
 * first; nobody waits for the close). The request's deadline, progress and abort work as a session's
 * (`SocketConnection`) do, with the peer's {@link Deadline} but without the peer: one request needs no
 * table of them, and a process that asks once starts without that code. Until the select is answered the errors are `connect()`'s: a hang-up is
 * `MCPD_DAEMON_UNAVAILABLE`, and the daemon's reason for closing (over its connection cap, ...) is thrown
 * as its own error; no answer within the connect deadline is `MCPD_DAEMON_UNAVAILABLE` too (its `cause` a
 * `RequestTimeoutError`).
 * @throws (rejects) a handshake request's error, the request's error (`fromWireError`; also the daemon's
 * refusal of a line it could not read), `MCPD_REQUEST_TIMEOUT`, `MCPD_ABORTED`, `MCPD_DAEMON_UNAVAILABLE`
 * (see above) or `MCPD_CONNECTION_LOST` (closed after the handshake: with the daemon's reason as the
 * `cause` when it gave one; or a line that cannot be read when unreadable lines are not skipped).
 */
export function runExchange(socket: net.Socket, spec: ExchangeSpec): Promise<JsonObject> {
  return new Promise((resolve, reject) => {
    if (spec.signal?.aborted) {
      // Aborted while connecting: nothing was sent, so there is nothing to cancel.
      socket.destroy();
      reject(abortedError(spec.signal));
      return;
    }
    let exchange: OneExchange;
    try {
      exchange = new OneExchange(socket, spec, resolve, reject);
    } catch (err) {
      socket.destroy();
      reject(err);
      return;
    }
    exchange.start();
  });
}

/** The state of one exchange: its deadlines, whether the handshake is answered, and how it settles. */
class OneExchange {
  private readonly decoder: JsonLineDecoder;
  /** The daemon's reason for closing the connection, sent as an error line with a null id. */
  private closeReason: JsonRpcErrorObject | undefined;
  private socketError: Error | undefined;
  private inHandshake = true;
  private settled = false;
  private deadline: Deadline<undefined> | undefined;
  private handshake: Deadline<undefined> | undefined;
  private readonly onAbort = (): void => this.giveUp(abortedError(this.spec.signal as AbortSignal));

  /** @throws what the line decoder throws for a bad `maxLineBytes`; nothing is armed or sent yet. */
  constructor(
    private readonly socket: net.Socket,
    private readonly spec: ExchangeSpec,
    private readonly resolve: (result: JsonObject) => void,
    private readonly reject: (error: Error) => void,
  ) {
    this.decoder = new JsonLineDecoder({
      maxLineBytes: spec.maxLineBytes,
      onValue: (v) => this.onMessage(v),
      onError: (e) => this.onUnreadable(e),
    });
  }

  /** Arms the deadlines and the abort, listens to the socket, and writes the lines. */
  start(): void {
    const { socket, spec } = this;
    this.deadline = Deadline.start(spec.timeoutMs, () => this.giveUp(new RequestTimeoutError(spec.timeoutMs)), undefined);
    // No answer to the select: the daemon is there (it accepted) but stopped or stuck, so as good as not there.
    const stuck = (): void =>
      this.finish(stuckDaemonError(spec.socketPath, spec.connectTimeoutMs, new RequestTimeoutError(spec.connectTimeoutMs)));
    this.handshake = Deadline.start(spec.handshakeLeftMs, stuck, undefined);
    spec.signal?.addEventListener("abort", this.onAbort, { once: true });
    socket.on("data", (chunk: Buffer) => this.decoder.push(chunk));
    socket.on("end", () => this.decoder.end());
    socket.on("error", (err) => {
      this.socketError = err;
    });
    socket.once("close", () => this.onClose());
    socket.write(spec.lines);
  }

  private finish(error: Error | undefined, result?: JsonObject): void {
    if (this.settled) return;
    this.settled = true;
    this.handshake?.stop();
    this.deadline?.stop();
    this.spec.signal?.removeEventListener("abort", this.onAbort);
    endSocket(this.socket);
    if (error) this.reject(error);
    else this.resolve(result as JsonObject);
  }

  /** Gives the request up: the daemon is told when asked for (it cancels the call upstream), then the caller. */
  private giveUp(error: Error): void {
    if (this.settled) return;
    if (this.spec.cancelOnGiveUp && !this.socket.destroyed) {
      const params = { requestId: this.spec.requestId, reason: error.message };
      this.socket.write(encodeLine({ jsonrpc: "2.0", method: "notifications/cancelled", params }));
    }
    this.finish(error);
  }

  private onProgress(params: JsonObject): void {
    const { progress } = this.spec;
    if (!progress || this.settled) return;
    if (progress.reset && this.deadline !== undefined && !this.deadline.restart(progress.maxTotalMs)) {
      return this.giveUp(new RequestTimeoutError(progress.maxTotalMs));
    }
    try {
      progress.onProgress(progressInfo(params));
    } catch (err) {
      // The caller's bug: surfaced like any listener's, but not inside the decoder (the rest of the chunk, perhaps the answer, would be lost).
      process.nextTick(() => {
        throw err;
      });
    }
  }

  private onMessage(value: unknown): void {
    if (!isObject(value) || this.settled) return;
    const { spec } = this;
    const { id, method } = value;
    if (typeof method === "string") {
      const params = isObject(value.params) ? value.params : undefined;
      if (typeof id === "string" || typeof id === "number") {
        // A request from the daemon: nothing was declared that would bring one; say so rather than leave it waiting.
        const message = `Method not found: ${quote(method, PROTOCOL_DEFAULTS.quotedNameChars)}`;
        this.socket.write(encodeLine({ jsonrpc: "2.0", id, error: { code: -32601, message } }));
      } else if (id === undefined && method === "notifications/progress" && params?.progressToken === spec.requestId) {
        this.onProgress(params);
      }
      return;
    }
    const error = wireError(value.error);
    if (id === spec.requestId) return this.finish(error ? fromWireError(error) : undefined, isObject(value.result) ? value.result : {});
    if (id === spec.selectId) {
      this.inHandshake = false;
      this.handshake?.stop();
    }
    if (id === null && error) {
      if (CLOSING_CODES.has(error.code)) this.closeReason = error;
      // Any other: the daemon could not read a line of ours (the request's, as nothing else is large), and dropped it.
      else this.finish(fromWireError(error));
    } else if (error && (id === spec.selectId || id === spec.initializeId)) this.finish(fromWireError(error));
  }

  private onUnreadable(err: Error): void {
    if (!this.spec.skipUnreadable)
      this.finish(new ConnectionLostError(`mcpd sent a line that cannot be read: ${err.message}`, { cause: err }));
  }

  private onClose(): void {
    if (this.settled) return;
    const { closeReason, socketError } = this;
    if (this.inHandshake) {
      // As connect(): the daemon's own reason (it is running: starting another would not help), else it is going away.
      if (closeReason) return this.finish(fromWireError(closeReason));
      return this.finish(hungUpError(NO_AUTOSTART_HINT, socketError));
    }
    this.finish(connectionLostError(closeReason, socketError, closeReason ? "" : " before it answered"));
  }
}
