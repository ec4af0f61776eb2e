import type net from "node:net";
import {
  ConnectionLostError,
  JsonLineDecoder,
  QueueFullError,
  TickBatch,
  checkTimeoutMs,
  encodeLine,
  fromWireError,
  silentLogger,
  type JsonObject,
  type JsonRpcErrorObject,
  type LineError,
  type Logger,
  type RequestId,
} from "@mcpd/protocol/core";
import { JsonRpcPeer } from "@mcpd/protocol/peer";
import { endSocket } from "./daemon-socket.js";
import { CLIENT_DEFAULTS } from "./defaults.js";
import { abortedError, CLOSING_CODES, connectionLostError, type ProgressInfo, progressInfo, wireError } from "./request-helpers.js";

/** Per-request options. Every duration is in ms. */
export interface RequestOptions {
  /** Aborting it rejects the call with `MCPD_ABORTED` (the abort reason as `cause`) and sends `notifications/cancelled`. */
  signal?: AbortSignal;
  /**
   * Deadline in ms (default {@link CLIENT_DEFAULTS.requestTimeoutMs}). Past it the call rejects with
   * `MCPD_REQUEST_TIMEOUT` and `notifications/cancelled` is sent. `Infinity`: no deadline.
   */
  timeout?: number;
  /** Called for each progress notification of this request. Giving it sends a `progressToken`. */
  onProgress?: (progress: ProgressInfo) => void;
  /** Restart the deadline on each progress notification (default true), up to `maxTotalTimeout`. */
  resetTimeoutOnProgress?: boolean;
  /** Ceiling of the call's life when progress keeps restarting the deadline, in ms (default {@link CLIENT_DEFAULTS.maxTotalTimeoutMs}). */
  maxTotalTimeout?: number;
}

/** Callbacks of a {@link SocketConnection}. They must not throw (errors are re-thrown asynchronously). */
export interface SocketConnectionHandlers {
  /** A notification other than progress for one of this connection's own requests. */
  onNotification(method: string, params: JsonObject | undefined): void;
  /** A request from the daemon (server-to-client); answer with {@link SocketConnection.respond}. */
  onRequest(id: RequestId, method: string, params: JsonObject | undefined): void;
  /** Called once when the socket closes, with the error in-flight requests were rejected with. */
  onClose(error: ConnectionLostError): void;
}

/** Limits of one connection; defaults from {@link CLIENT_DEFAULTS}. */
export interface SocketConnectionLimits {
  maxLineBytes?: number;
  maxWriteBufferBytes?: number;
  maxPendingRequests?: number;
  /** Deadline used when a request gives none, in ms. */
  requestTimeoutMs?: number;
}

/**
 * One newline-delimited JSON-RPC connection to the daemon: framing (a bounded {@link JsonLineDecoder})
 * and writes gathered per tick, under a {@link JsonRpcPeer} that owns per-connection integer ids, the
 * pending requests with their deadlines and abort signals (one listener per shared signal), progress
 * routing by token with deadline restarts, and `notifications/cancelled` on timeout or abort. It never
 * reconnects: when the socket closes every pending request is rejected with `MCPD_CONNECTION_LOST` and
 * {@link SocketConnectionHandlers.onClose} runs once. When the daemon closed it on its own account (over
 * its connection cap, its buffer budget, or a line deadline) the daemon's reason is in the message, and
 * the daemon's error (`MCPD_TOO_MANY_CONNECTIONS`, ...) is the `cause`.
 */
export class SocketConnection {
  private readonly peer: JsonRpcPeer;
  private readonly decoder: JsonLineDecoder;
  private readonly maxWriteBufferBytes: number;
  private readonly maxPendingRequests: number;
  /** The lines of the current tick, written together at its end (see {@link write}). */
  private readonly out = new TickBatch((text) => {
    if (!this.socket.destroyed && !this.socket.writableEnded) this.socket.write(text);
  }, process.nextTick);
  private closeError: ConnectionLostError | undefined;
  private socketError: Error | undefined;
  /** The daemon's reason for closing this connection (over its connection cap, buffer budget, line deadline). */
  private closeReason: JsonRpcErrorObject | undefined;
  private closedByUs = false;
  private readonly closedPromise: Promise<void>;

  constructor(
    private readonly socket: net.Socket,
    private readonly handlers: SocketConnectionHandlers,
    limits: SocketConnectionLimits = {},
    private readonly logger: Logger = silentLogger,
  ) {
    this.maxWriteBufferBytes = limits.maxWriteBufferBytes ?? CLIENT_DEFAULTS.maxWriteBufferBytes;
    this.maxPendingRequests = limits.maxPendingRequests ?? CLIENT_DEFAULTS.maxPendingRequests;
    this.peer = new JsonRpcPeer({
      sink: { send: (message) => this.write(encodeLine(message)) },
      defaultTimeoutMs: limits.requestTimeoutMs ?? CLIENT_DEFAULTS.requestTimeoutMs,
      checkTimeout: (ms) => {
        checkTimeoutMs(ms, "timeout", "positive", TypeError);
      },
      abortError: abortedError,
      log: logger,
    });
    this.decoder = new JsonLineDecoder({
      maxLineBytes: limits.maxLineBytes ?? CLIENT_DEFAULTS.maxLineBytes,
      onValue: (value) => this.dispatch(value),
      onError: (err: LineError) => this.logger.warn({ err: err.message, preview: err.preview }, "mcpd sent a line that was skipped"),
    });
    socket.on("data", (chunk: Buffer) => this.decoder.push(chunk));
    socket.on("end", () => this.decoder.end());
    socket.on("error", (err) => {
      this.socketError = err;
    });
    this.closedPromise = new Promise((resolve) => {
      socket.once("close", () => {
        this.onSocketClose();
        resolve();
      });
    });
  }

  /** True once the socket has closed (or {@link close} was called). */
  get closed(): boolean {
    return this.closeError !== undefined || this.closedByUs;
  }

  /** Requests waiting for their response. */
  get pendingCount(): number {
    return this.peer.pendingCount;
  }

  /**
   * Sends a request and resolves with its `result`.
   *
   * @throws (rejects) `MCPD_REQUEST_TIMEOUT`, `MCPD_ABORTED`, `MCPD_CONNECTION_LOST` (the socket closed
   * first; the request is never re-sent), `MCPD_QUEUE_FULL` (too many pending requests or the daemon stopped
   * reading), or the error the daemon answered, rebuilt by `fromWireError` (its `data.mcpdCode` becomes
   * the `code`; an upstream server's error becomes `MCPD_MCP_ERROR` with the JSON-RPC code as `wireCode`).
   */
  request(method: string, params?: JsonObject, options: RequestOptions = {}): Promise<JsonObject> {
    if (this.closed) return Promise.reject(this.closeError ?? new ConnectionLostError("Connection to mcpd closed"));
    const signal = options.signal;
    if (signal?.aborted) return Promise.reject(abortedError(signal));
    if (this.peer.pendingCount >= this.maxPendingRequests) {
      return Promise.reject(new QueueFullError(`Too many requests waiting for mcpd (${this.maxPendingRequests})`));
    }
    const onProgress = options.onProgress;
    return this.peer.request<JsonObject>(method, params, {
      signal,
      timeout: options.timeout,
      onProgress: onProgress && ((p: JsonObject) => onProgress(progressInfo(p))),
      resetTimeoutOnProgress: options.resetTimeoutOnProgress,
      maxTotalTimeout: options.maxTotalTimeout ?? CLIENT_DEFAULTS.maxTotalTimeoutMs,
    });
  }

  /** Sends a notification. @throws `MCPD_CONNECTION_LOST` when closed, `MCPD_QUEUE_FULL` when the daemon stopped reading. */
  notify(method: string, params?: JsonObject): void {
    if (this.closed) throw this.closeError ?? new ConnectionLostError("Connection to mcpd closed");
    void this.peer.notify(method, params);
  }

  /** Answers a request from the daemon. Dropped silently when the connection has closed since. */
  respond(id: RequestId, result: JsonObject): void {
    this.sendQuietly({ jsonrpc: "2.0", id, result });
  }

  /** Answers a request from the daemon with an error. Dropped silently when the connection has closed since. */
  respondError(id: RequestId, error: JsonRpcErrorObject): void {
    this.sendQuietly({ jsonrpc: "2.0", id, error });
  }

  /**
   * Closes the connection: pending requests reject with `MCPD_CONNECTION_LOST`; what was already written
   * is flushed first. Resolves once the socket has closed.
   */
  close(): Promise<void> {
    if (!this.closedByUs && this.closeError === undefined) {
      this.closedByUs = true;
      const error = new ConnectionLostError("Connection to mcpd closed by the client");
      this.peer.close(() => error);
      this.out.flush();
      endSocket(this.socket);
    }
    return this.closedPromise;
  }

  private write(line: string): void {
    const waiting = this.socket.writableLength + this.out.length;
    if (waiting > this.maxWriteBufferBytes) {
      throw new QueueFullError(`mcpd is not reading: ${waiting} bytes are waiting to be sent`);
    }
    // Lines written in one tick leave in one write instead of one syscall each: with many requests in
    // flight that halves the client's CPU per call (docs/benchmarks.md). A lone request waits only for the
    // end of the current tick.
    this.out.add(line);
  }

  private sendQuietly(message: object): void {
    if (this.closed) return;
    try {
      this.write(encodeLine(message));
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, "could not answer mcpd");
    }
  }

  /** What the daemon sent, read leniently: anything with a `method` is a request or a notification, anything else a response. */
  private dispatch(value: unknown): void {
    if (typeof value !== "object" || value === null) return;
    const msg = value as { id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: unknown };
    const method = msg.method;
    if (method === undefined) {
      this.onResponse(msg);
      return;
    }
    if (typeof method !== "string") return;
    const params = typeof msg.params === "object" && msg.params !== null ? (msg.params as JsonObject) : undefined;
    try {
      if (msg.id !== undefined) {
        if (typeof msg.id === "string" || typeof msg.id === "number") this.handlers.onRequest(msg.id, method, params);
      } else if (method !== "notifications/progress" || !this.peer.progress(params)) {
        this.handlers.onNotification(method, params);
      }
    } catch (err) {
      // A throwing listener is the caller's bug: surface it like any Node listener error, but never
      // inside the decoder, which would lose the rest of the chunk.
      process.nextTick(() => {
        throw err;
      });
    }
  }

  private onResponse(msg: { id?: unknown; result?: unknown; error?: unknown }): void {
    const error = wireError(msg.error);
    const settled =
      error === undefined
        ? this.peer.resolve(msg.id, typeof msg.result === "object" && msg.result !== null ? (msg.result as JsonObject) : {})
        : this.peer.fail(msg.id, fromWireError(error));
    if (settled) return;
    // A late answer to a request we gave up on (timeout/abort), or an error about an unreadable line.
    if (msg.id === null && error) {
      if (CLOSING_CODES.has(error.code)) this.closeReason = error;
      this.logger.warn({ error: msg.error }, "mcpd reported a protocol error");
    } else this.logger.debug({ id: msg.id }, "response for an unknown request id ignored");
  }

  private onSocketClose(): void {
    const error = this.closedByUs
      ? new ConnectionLostError("Connection to mcpd closed by the client")
      : connectionLostError(this.closeReason, this.socketError);
    this.closeError = error;
    this.peer.close(() => error);
    try {
      this.handlers.onClose(error);
    } catch (err) {
      process.nextTick(() => {
        throw err;
      });
    }
  }
}
