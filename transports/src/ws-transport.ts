import type { ClientRequest, IncomingMessage } from "node:http";
import { WebSocket, type RawData } from "ws";
import {
  HttpError,
  McpRemoteError,
  PROTOCOL_DEFAULTS,
  ParseError,
  ProtocolError,
  QueueFullError,
  TransportClosedError,
  WireCode,
  classify,
  silentLogger,
  toWireError,
  type JsonObject,
  type JsonRpcErrorResponse,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type JsonRpcSuccess,
  type Logger,
} from "@mcpd/protocol";
import { TRANSPORT_DEFAULTS } from "./defaults.js";
import { checkTimeoutMs, resolveWsConfig } from "./ws-config.js";
import { WsPendingRequests } from "./ws-pending-requests.js";
import type {
  CloseInfo,
  MCPTransport,
  MessageContext,
  RequestOptions,
  ServerRequestHandler,
  TransportInfo,
  TransportOptions,
  WsServerConfig,
} from "./transport.js";

/** The WebSocket subprotocol offered on every connection. A server that does not select it is refused. */
export const MCP_WS_SUBPROTOCOL = "mcp";

/** Options of {@link WebSocketTransport} besides its config. */
export interface WsTransportOptions extends TransportOptions {
  /**
   * Largest frame accepted from the server, in bytes (ws `maxPayload`). Default
   * `TRANSPORT_DEFAULTS.maxMessageBytes` (4 MiB). A bigger frame is fatal: ws closes the connection with
   * code 1009, every pending request rejects with `TransportClosedError` naming the limit, and `onClose`
   * fires with `expected: false`. (WebSocket has no way to skip one frame and keep the stream.)
   */
  maxPayloadBytes?: number;
}

type State = "idle" | "connecting" | "open" | "closed";

/** setTimeout overflows above this and fires at once; longer deadlines are treated as none. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * MCP over one WebSocket (package `ws`): subprotocol `mcp`, one JSON-RPC message per text frame
 * (binary frames holding UTF-8 JSON are accepted too, and JSON-RPC batches are unpacked), integer
 * request ids local to this transport.
 *
 * - `connect()` opens the socket, sending `config.headers` on the upgrade request. It rejects with
 *   `HttpError` (`MCPD_HTTP_ERROR`, `.status`, `.wwwAuthenticate`) when the server answers the upgrade
 *   with an HTTP status (401, 404, ...), and with `TransportClosedError` (`MCPD_TRANSPORT_CLOSED`) when
 *   the connection is refused, the handshake times out (the request deadline below) or the server does
 *   not select subprotocol `mcp`; both messages name the URL (userinfo and query redacted). A transport
 *   whose connect failed is closed for good (`onClose` does not fire): create a new one.
 * - `request()` deadline: `options.timeout`, else `config.timeout`, else
 *   `TRANSPORT_DEFAULTS.requestTimeoutMs`; `0` or `Infinity` means none. Expiry rejects with
 *   `RequestTimeoutError` (`Request timeout after <ms>ms`); a caller abort rejects with `signal.reason`
 *   unchanged. Both send `notifications/cancelled {requestId, reason}` upstream, never for `initialize`.
 *   A JSON-RPC error answer rejects with `McpRemoteError`. More than
 *   `TRANSPORT_DEFAULTS.maxPendingWriteBytes` waiting in the socket rejects with `QueueFullError`.
 * - Frames that are not JSON or not JSON-RPC, and responses with unknown ids, are skipped, counted in
 *   `info().droppedMessages`; malformed frames are also reported to `onError` (unknown ids, e.g. late
 *   answers to timed-out requests, only logged at debug). None of them ends the connection.
 * - Server notifications go to `onNotification(method, params, {})`; server requests to
 *   `onRequest(request, {})`, whose result or error is sent back (`-32601` when no handler is set).
 * - `close()` is idempotent: it rejects pending requests with `TransportClosedError("closed by
 *   client")`, closes the socket (code 1000; terminated after `TRANSPORT_DEFAULTS.closeGraceMs`) and
 *   then fires `onClose({expected: true})`. A socket closed or broken by the other side rejects pending
 *   requests at once with `TransportClosedError` whose reason holds the close code and reason (or the
 *   socket error), and fires `onClose({expected: false})`. `onClose` fires exactly once, and only after a
 *   successful `connect()`. The transport never reconnects.
 */
export class WebSocketTransport implements MCPTransport {
  onClose?: (info: CloseInfo) => void;
  onError?: (error: Error) => void;
  onNotification?: (method: string, params: JsonObject | undefined, context: MessageContext) => void;
  onRequest?: ServerRequestHandler;

  private readonly url: URL;
  /** The URL for messages and logs: no userinfo, no query (either may carry a token). */
  private readonly safeUrl: string;
  private readonly headers: Record<string, string>;
  private readonly configTimeoutMs: number | undefined;
  private readonly maxPayloadBytes: number;
  private readonly log: Logger;

  private state: State = "idle";
  private ws: WebSocket | undefined;
  private nextId = 1;
  private readonly pending = new WsPendingRequests((id, method, reason) => this.sendCancelled(id, method, reason));
  /** Rejecters of notify() calls whose frame is not flushed yet, so a close never leaves one hanging. */
  private readonly flushing = new Set<(error: Error) => void>();
  private dropped = 0;
  private closeReason: string | undefined;
  private connectPromise: Promise<void> | undefined;
  private settleConnect: ((error?: Error) => void) | undefined;
  private closePromise: Promise<void> | undefined;
  private socketClosed: Promise<void> = Promise.resolve();
  private markSocketClosed: () => void = () => {};

  /** @throws ConfigError (`MCPD_CONFIG_INVALID`) naming the bad field. */
  constructor(config: WsServerConfig, options: WsTransportOptions = {}) {
    const resolved = resolveWsConfig(config, options.maxPayloadBytes);
    this.url = resolved.url;
    this.safeUrl = resolved.safeUrl;
    this.headers = resolved.headers;
    this.configTimeoutMs = resolved.timeoutMs;
    this.maxPayloadBytes = resolved.maxPayloadBytes;
    this.log = options.logger ?? silentLogger;
  }

  get connected(): boolean {
    return this.state === "open";
  }

  info(): TransportInfo {
    return { type: "ws", mode: "websocket", droppedMessages: this.dropped };
  }

  connect(): Promise<void> {
    if (this.state === "open") return Promise.resolve();
    if (this.state === "connecting" && this.connectPromise) return this.connectPromise;
    if (this.state === "closed") return Promise.reject(new TransportClosedError(this.closeReason ?? "closed"));
    this.state = "connecting";
    this.socketClosed = new Promise((resolve) => (this.markSocketClosed = resolve));
    this.connectPromise = new Promise<void>((resolve, reject) => {
      this.settleConnect = (error) => {
        this.settleConnect = undefined;
        if (error) reject(error);
        else resolve();
      };
    });
    const handshakeMs = this.deadlineMs(undefined) ?? TRANSPORT_DEFAULTS.requestTimeoutMs;
    let ws: WebSocket;
    try {
      ws = new WebSocket(this.url, [MCP_WS_SUBPROTOCOL], {
        headers: this.headers,
        maxPayload: this.maxPayloadBytes,
        handshakeTimeout: handshakeMs,
        followRedirects: false,
      });
    } catch (err) {
      this.state = "closed";
      this.closeReason = `cannot connect to ${this.safeUrl}: ${errorText(err)}`;
      this.markSocketClosed();
      this.settleConnect?.(new TransportClosedError(this.closeReason, { cause: err }));
      return this.connectPromise;
    }
    this.ws = ws;
    ws.on("open", () => this.handleOpen());
    ws.on("unexpected-response", (req, res) => this.handleUnexpectedResponse(req, res));
    ws.on("message", (data, isBinary) => this.handleFrame(data, isBinary));
    ws.on("error", (err) => this.handleSocketError(err));
    ws.on("close", (code, reason) => this.handleSocketClose(code, reason.toString("utf8")));
    return this.connectPromise;
  }

  request<T = JsonObject>(method: string, params?: JsonObject, options: RequestOptions = {}): Promise<T> {
    const signal = options.signal;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const ws = this.ws;
    if (this.state !== "open" || !ws) return Promise.reject(this.closedError());
    let timeoutMs: number | undefined;
    let frame: string;
    const id = this.nextId++;
    options.onRequestId?.(id);
    try {
      timeoutMs = this.deadlineMs(options.timeout);
      frame = encode({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }, method);
      this.checkBackpressure(method);
    } catch (err) {
      return Promise.reject(err);
    }
    const result = this.pending.track<T>(id, method, timeoutMs, signal);
    ws.send(frame, (err) => {
      if (err) this.pending.reject(id, new TransportClosedError(`failed to send ${method}: ${err.message}`, { cause: err }));
    });
    return result;
  }

  notify(method: string, params?: JsonObject): Promise<void> {
    const ws = this.ws;
    if (this.state !== "open" || !ws) return Promise.reject(this.closedError());
    let frame: string;
    try {
      frame = encode({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) }, method);
      this.checkBackpressure(method);
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise<void>((resolve, reject) => {
      const fail = (error: Error): void => {
        this.flushing.delete(fail);
        reject(error);
      };
      this.flushing.add(fail);
      ws.send(frame, (err) => {
        if (!this.flushing.delete(fail)) return;
        if (err) reject(new TransportClosedError(`failed to send ${method}: ${err.message}`, { cause: err }));
        else resolve();
      });
    });
  }

  close(): Promise<void> {
    this.closePromise ??= this.shutdown();
    return this.closePromise;
  }

  private async shutdown(): Promise<void> {
    const previous = this.state;
    const ws = this.ws;
    if (previous === "idle" || !ws) {
      this.state = "closed";
      this.closeReason ??= "closed by client";
      return;
    }
    if (previous === "closed") {
      // Closed by the other side already: only wait for the socket to be released.
      await this.socketClosed;
      return;
    }
    this.state = "closed";
    this.closeReason = "closed by client";
    if (previous === "connecting") {
      this.settleConnect?.(new TransportClosedError(`closed by client before ${this.safeUrl} was connected`));
      ws.terminate();
      await this.socketClosed;
      return;
    }
    this.rejectAll("closed by client");
    ws.close(1000, "client closing");
    // A peer that never answers the close frame must not hold close() forever.
    const grace = setTimeout(() => ws.terminate(), TRANSPORT_DEFAULTS.closeGraceMs);
    await this.socketClosed;
    clearTimeout(grace);
    this.fireClose({ reason: "closed by client", expected: true });
  }

  // --- socket events ---

  private handleOpen(): void {
    if (this.state !== "connecting") return;
    this.state = "open";
    this.log.debug({ url: this.safeUrl }, "websocket connected");
    this.settleConnect?.();
  }

  /** The server answered the upgrade with a plain HTTP status: keep status, auth headers and a body preview. */
  private handleUnexpectedResponse(_req: ClientRequest, res: IncomingMessage): void {
    const status = res.statusCode ?? 0;
    const limit = PROTOCOL_DEFAULTS.previewBytes;
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      const body = Buffer.concat(chunks).subarray(0, limit).toString("utf8").trim() || res.statusMessage || "";
      const error = new HttpError(status, body, {
        wwwAuthenticate: headerValue(res.headers["www-authenticate"]),
        mcpAuthServer: headerValue(res.headers["mcp-auth-server"]),
      });
      error.message = `WebSocket upgrade to ${this.safeUrl} refused: ${error.message}`;
      this.failConnect(error);
    };
    res.on("data", (chunk: Buffer) => {
      if (size < limit) chunks.push(chunk);
      size += chunk.length;
      if (size >= limit) finish();
    });
    res.on("end", finish);
    res.on("close", finish);
    res.on("error", finish);
  }

  private handleSocketError(err: Error): void {
    if (this.state === "connecting") {
      this.failConnect(new TransportClosedError(`cannot connect to ${this.safeUrl}: ${err.message}`, { cause: err }));
      return;
    }
    if (this.state !== "open") {
      this.log.debug({ url: this.safeUrl, err: err.message }, "websocket error after close");
      return;
    }
    const code = (err as { code?: string }).code;
    const reason =
      code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH"
        ? `a WebSocket frame from ${this.safeUrl} exceeded maxPayload of ${this.maxPayloadBytes} bytes (close code 1009)`
        : `WebSocket error on ${this.safeUrl}: ${err.message}`;
    this.log.warn({ url: this.safeUrl, err: err.message }, "websocket failed");
    this.report(err);
    // Fail now rather than after ws's own close handshake, which may wait up to 30 s for the peer.
    this.fail(reason, err);
  }

  private handleSocketClose(code: number, reason: string): void {
    const state = this.state;
    if (state === "connecting") {
      this.failConnect(new TransportClosedError(`cannot connect to ${this.safeUrl}: closed during the handshake (code ${code})`));
    } else if (state === "open") {
      const detail = code === 1006 ? "connection dropped without a close frame" : "closed by server";
      this.fail(`WebSocket ${detail} (code ${code}${reason ? `: ${reason}` : ""})`);
    }
    this.markSocketClosed();
  }

  private failConnect(error: Error): void {
    if (this.state !== "connecting") return;
    this.state = "closed";
    this.closeReason = error.message;
    this.log.debug({ url: this.safeUrl, err: error.message }, "websocket connect failed");
    this.settleConnect?.(error);
    this.ws?.terminate();
  }

  /** Unexpected end of an open connection: reject everything, release the socket, tell the owner once. */
  private fail(reason: string, cause?: unknown): void {
    if (this.state !== "open") return;
    this.state = "closed";
    this.closeReason = reason;
    this.rejectAll(reason, cause);
    this.ws?.terminate();
    this.fireClose({ reason, expected: false });
  }

  private fireClose(info: CloseInfo): void {
    try {
      this.onClose?.(info);
    } catch (err) {
      this.log.warn({ err: errorText(err) }, "onClose handler threw");
    }
  }

  // --- incoming messages ---

  private handleFrame(data: RawData, isBinary: boolean): void {
    if (this.state !== "open") return;
    const text = rawToText(data);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      const kind = isBinary ? "binary frame" : "frame";
      this.drop(new ParseError(`Invalid JSON in WebSocket ${kind} from ${this.safeUrl}: ${preview(text)}`, { cause: err }));
      return;
    }
    // JSON-RPC batches (allowed by MCP 2025-03-26) carry several messages in one frame.
    if (Array.isArray(value) && value.length > 0) {
      for (const item of value) this.dispatch(item, text);
    } else {
      this.dispatch(value, text);
    }
  }

  private dispatch(value: unknown, text: string): void {
    try {
      switch (classify(value)) {
        case "success":
        case "error":
          this.handleResponse(value as JsonRpcResponse, text);
          return;
        case "notification": {
          const note = value as { method: string; params?: JsonObject };
          this.onNotification?.(note.method, note.params, {});
          return;
        }
        case "request":
          void this.answer(value as JsonRpcRequest);
          return;
        default:
          this.drop(new ProtocolError(`Not a JSON-RPC 2.0 message in WebSocket frame from ${this.safeUrl}: ${preview(text)}`));
      }
    } catch (err) {
      // A throwing callback must not escape into ws's event emitter.
      this.log.warn({ err: errorText(err) }, "websocket message handler threw");
      this.report(err instanceof Error ? err : new Error(errorText(err)));
    }
  }

  private handleResponse(message: JsonRpcResponse, text: string): void {
    const settled =
      typeof message.id === "number" &&
      ("error" in message
        ? this.pending.reject(message.id, new McpRemoteError((message as JsonRpcErrorResponse).error))
        : this.pending.resolve(message.id, (message as JsonRpcSuccess).result));
    if (!settled) {
      // Late answers to timed-out or cancelled requests land here too.
      this.dropped++;
      this.log.debug({ url: this.safeUrl, id: message.id, frame: preview(text) }, "dropped response with unknown id");
    }
  }

  private async answer(request: JsonRpcRequest): Promise<void> {
    let reply: string;
    const handler = this.onRequest;
    if (!handler) {
      reply = JSON.stringify({ jsonrpc: "2.0", id: request.id, error: { code: WireCode.MethodNotFound, message: `Method not found: ${request.method}` } });
    } else {
      try {
        const result = await handler(request, {});
        reply = JSON.stringify({ jsonrpc: "2.0", id: request.id, result });
      } catch (err) {
        reply = JSON.stringify({ jsonrpc: "2.0", id: request.id, error: toWireError(err) });
      }
    }
    // The connection that asked may be gone by the time the handler answers.
    if (this.state !== "open" || !this.ws) return;
    this.ws.send(reply, (err) => {
      if (err) this.log.debug({ err: err.message, method: request.method }, "failed to answer server request");
    });
  }

  private drop(error: Error): void {
    this.dropped++;
    this.log.warn({ url: this.safeUrl, err: error.message }, "dropped websocket message");
    this.report(error);
  }

  private report(error: Error): void {
    try {
      this.onError?.(error);
    } catch (err) {
      this.log.warn({ err: errorText(err) }, "onError handler threw");
    }
  }

  // --- requests ---

  /** MCP cancellation for a request given up locally; never for `initialize` (the spec forbids it). */
  private sendCancelled(requestId: number, method: string, reason: string): void {
    if (method === "initialize" || this.state !== "open" || !this.ws) return;
    const frame = JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId, reason } });
    this.ws.send(frame, (err) => {
      if (err) this.log.debug({ err: err.message, requestId }, "failed to send notifications/cancelled");
    });
  }

  private rejectAll(reason: string, cause?: unknown): void {
    this.pending.rejectAll(() => new TransportClosedError(reason, { cause }));
    const flushing = [...this.flushing];
    for (const fail of flushing) fail(new TransportClosedError(reason, { cause }));
  }

  private closedError(): TransportClosedError {
    if (this.state === "idle" || this.state === "connecting") return new TransportClosedError("not connected");
    return new TransportClosedError(this.closeReason ?? "closed");
  }

  /** The deadline in ms for a request, or undefined for none. */
  private deadlineMs(requested: number | undefined): number | undefined {
    if (requested !== undefined) checkTimeoutMs(requested, "request timeout");
    const ms = requested ?? this.configTimeoutMs ?? TRANSPORT_DEFAULTS.requestTimeoutMs;
    return ms === 0 || ms > MAX_TIMER_MS ? undefined : ms;
  }

  private checkBackpressure(method: string): void {
    const buffered = this.ws?.bufferedAmount ?? 0;
    if (buffered > TRANSPORT_DEFAULTS.maxPendingWriteBytes) {
      throw new QueueFullError(
        `WebSocket send buffer to ${this.safeUrl} holds ${buffered} bytes (limit ${TRANSPORT_DEFAULTS.maxPendingWriteBytes}); ${method} refused`,
      );
    }
  }
}

// --- helpers ---

function encode(message: object, method: string): string {
  try {
    return JSON.stringify(message);
  } catch (err) {
    throw new ProtocolError(`params of ${method} cannot be serialized as JSON: ${errorText(err)}`, { cause: err });
  }
}

function rawToText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString("utf8");
  return data.toString("utf8");
}

function preview(text: string): string {
  const limit = PROTOCOL_DEFAULTS.previewBytes;
  return text.length > limit ? `${text.slice(0, limit)}...` : text;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(", ") : value;
}

function errorText(value: unknown): string {
  if (value instanceof Error) return value.message;
  return typeof value === "string" ? value : value === undefined ? "" : String(value);
}
