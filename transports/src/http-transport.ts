import { request, type Agent, type Dispatcher } from "undici";
import {
  McpRemoteError,
  ProtocolError,
  TransportClosedError,
  WireCode,
  classify,
  silentLogger,
  toWireError,
  type JsonObject,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type Logger,
} from "@mcpd/protocol";
import { TRANSPORT_DEFAULTS } from "./defaults.js";
import { checkTimeoutMs, resolveHttpConfig, type HttpTransportOptions, type ResolvedHttpConfig } from "./http-config.js";
import { RequestDeadline, SignalFanout } from "./http-deadline.js";
import { PendingResponses, type ResponseWaiter } from "./http-pending.js";
import { HttpReplyReader, type ReplyOutcome } from "./http-reply.js";
import { HttpSession } from "./http-session.js";
import { ACCEPT_POST, createHttpAgent, discardBody, errorText, headerValue, httpErrorFrom, preview, waitOrAbort } from "./http-wire.js";
import { LegacySseConnection } from "./legacy-sse.js";
import { SseListener } from "./sse-listener.js";
import type {
  CloseInfo,
  HttpServerConfig,
  MCPTransport,
  MessageContext,
  RequestOptions,
  ServerRequestHandler,
  TransportInfo,
} from "./transport.js";

export type { HttpTransportOptions } from "./http-config.js";

/** The wire mode an {@link HttpTransport} speaks. */
export type HttpTransportMode = "streamable-http" | "legacy-sse";

type State = "idle" | "open" | "closed";

/** Statuses with which a server that only speaks legacy HTTP+SSE refuses a POST of `initialize`. */
const LEGACY_FALLBACK_STATUSES = new Set([400, 404, 405]);

/**
 * MCP over HTTP with undici (one keep-alive Agent per transport) and eventsource-parser.
 *
 * **Streamable HTTP** (`type: "http"`, MCP 2025-03-26 .. 2025-11-25): every message is a POST with
 * `Accept: application/json, text/event-stream`, the configured headers, `Mcp-Session-Id` once assigned
 * and `MCP-Protocol-Version` after `initialize`. A JSON reply holds the response; an SSE reply is read
 * until the response with the request's id, delivering the notifications and server requests on it with
 * `context.relatedRequestId`. A stream that ends without the response fails with `NoResponseError`
 * (`MCPD_NO_RESPONSE`) unless it carried event ids: then it is resumed with `GET` + `Last-Event-ID`
 * (after `retry:`), up to `sseResumeAttempts` times in a row without progress. A 404 to a request that
 * carried a session id re-runs `initialize` (same params, then `notifications/initialized`) once, shared
 * by concurrent requests, and retries the request once. {@link startSSEListener} opens the background GET.
 *
 * **Legacy HTTP+SSE** (`type: "sse"`, MCP 2024-11-05; and `type: "http"` when a POST of `initialize`
 * answers 400/404/405 and a GET of the URL yields an `endpoint` event): `connect()` opens the GET stream
 * and waits for the endpoint (same origin only); messages are POSTed there and everything comes back on
 * the stream. The stream ending closes the transport (`onClose({expected: false})`).
 *
 * Errors: non-2xx -> `HttpError` (`MCPD_HTTP_ERROR`, `HTTP <status>: <body>` plus auth headers); a
 * JSON-RPC error -> `McpRemoteError` (`MCP error <code>: <message>`); a body that is not JSON ->
 * `ParseError` (`MCPD_PARSE_ERROR`); a body or event over `maxBodyBytes` -> `MessageTooLargeError`
 * (`MCPD_MESSAGE_TOO_LARGE`); network failures propagate as undici's error (`.code` such as
 * `UND_ERR_SOCKET`, `ECONNREFUSED`). One deadline per request covers the POST and the whole reply:
 * `RequestTimeoutError` (`MCPD_REQUEST_TIMEOUT`) of kind `request` while waiting for headers, `sse`
 * while reading an SSE reply (or waiting on the legacy stream), `notify` for notifications. A caller
 * abort rejects with `signal.reason` unchanged. Both send `notifications/cancelled` (never for
 * `initialize`). After close(), everything rejects with `TransportClosedError` (`MCPD_TRANSPORT_CLOSED`).
 */
export class HttpTransport implements MCPTransport {
  onClose?: (info: CloseInfo) => void;
  onError?: (error: Error) => void;
  onNotification?: (method: string, params: JsonObject | undefined, context: MessageContext) => void;
  onRequest?: ServerRequestHandler;

  private readonly cfg: ResolvedHttpConfig;
  private readonly log: Logger;
  private readonly agent: Agent;
  private readonly session = new HttpSession();
  private readonly pending = new PendingResponses();
  private readonly fanout = new SignalFanout();
  private readonly replies: HttpReplyReader;
  /** Every exchange still running (requests, notifications, draining replies), aborted by close(). */
  private readonly inflight = new Set<RequestDeadline>();
  private state: State = "idle";
  private modeValue: HttpTransportMode;
  /** A Streamable HTTP POST succeeded: never fall back to legacy after that. */
  private streamableConfirmed = false;
  private legacy: LegacySseConnection | undefined;
  private listener: SseListener | undefined;
  private nextId = 1;
  private dropped = 0;
  private closeReason: string | undefined;
  private closePromise: Promise<void> | undefined;

  /** @throws ConfigError (`MCPD_CONFIG_INVALID`) naming the bad field. */
  constructor(config: HttpServerConfig, options: HttpTransportOptions = {}) {
    this.cfg = resolveHttpConfig(config, options);
    this.log = options.logger ?? silentLogger;
    this.agent = createHttpAgent(this.cfg.connections);
    this.modeValue = this.cfg.type === "sse" ? "legacy-sse" : "streamable-http";
    this.replies = new HttpReplyReader({
      url: this.cfg.url,
      safeUrl: this.cfg.safeUrl,
      agent: this.agent,
      maxBodyBytes: this.cfg.maxBodyBytes,
      sseResumeAttempts: this.cfg.sseResumeAttempts,
      sseResumeDelayMs: this.cfg.sseResumeDelayMs,
      log: this.log,
      resumeHeaders: () => ({ ...this.cfg.headers, ...this.session.headers(undefined) }),
      dispatch: (value, context) => this.dispatchAll(value, context),
      onSkippedEvent: (type) => {
        this.dropped++;
        this.log.debug({ url: this.cfg.safeUrl, event: type }, "ignored SSE event of unknown type");
      },
      onLateError: (error) => this.report(error),
      release: (deadline) => this.untrack(deadline),
    });
  }

  get connected(): boolean {
    return this.state === "open";
  }

  /** The wire mode: `legacy-sse` for `type: "sse"` or after a fallback, else `streamable-http`. */
  get mode(): HttpTransportMode {
    return this.modeValue;
  }

  info(): TransportInfo {
    const info: TransportInfo = { type: this.cfg.type, mode: this.modeValue, droppedMessages: this.dropped };
    const sessionId = this.modeValue === "legacy-sse" ? this.legacy?.sessionId : this.session.id;
    if (sessionId !== undefined) info.sessionId = sessionId;
    return info;
  }

  /**
   * Streamable HTTP: marks the transport usable (the session starts with `initialize`). Legacy: opens the
   * GET stream and waits for the `endpoint` event (deadline: the config's timeout, else 30 s).
   * @throws TransportClosedError after close(); for legacy also HttpError, ProtocolError (no endpoint,
   *   cross-origin endpoint), RequestTimeoutError. A failed legacy connect may be retried.
   */
  async connect(): Promise<void> {
    if (this.state === "closed") throw this.closedError();
    if (this.state === "open") return;
    if (this.modeValue === "legacy-sse") {
      const deadline = this.track(new RequestDeadline(this.deadlineMs(undefined), "request"));
      try {
        await this.openLegacy(deadline);
      } finally {
        // Its timer would otherwise keep the process alive for the whole timeout after a refused connect.
        deadline.dispose();
        this.untrack(deadline);
      }
    }
    // close() may have run while the legacy stream was opening.
    if ((this.state as State) === "closed") throw this.closedError();
    this.state = "open";
  }

  async request<T = JsonObject>(method: string, params?: JsonObject, options: RequestOptions = {}): Promise<T> {
    const signal = options.signal;
    if (signal?.aborted) throw signal.reason;
    if (this.state !== "open") throw this.closedError();
    const timeoutMs = this.deadlineMs(options.timeout);
    const id = this.nextId++;
    options.onRequestId?.(id);
    const message: JsonRpcRequest = { jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) };
    const body = encode(message);
    if (method === "initialize") this.session.initializeParams = params;
    const deadline = this.track(new RequestDeadline(timeoutMs, "request", signal, this.fanout));
    const waiter = this.pending.add(id);
    const sent = { value: false };
    let draining = false;
    try {
      const outcome =
        this.modeValue === "legacy-sse"
          ? { response: await this.legacyExchange(body, deadline, waiter, sent) }
          : await this.streamableExchange(message, body, deadline, waiter, sent);
      draining = "draining" in outcome && outcome.draining === true;
      const response = outcome.response;
      if ("error" in response) throw new McpRemoteError(response.error);
      if (method === "initialize") this.session.noteInitializeResult(response.result);
      return response.result as T;
    } catch (err) {
      if (!deadline.aborted) throw err;
      const reason = deadline.reason;
      if (deadline.gaveUp && sent.value && method !== "initialize") this.sendCancelled(id, reason);
      throw reason;
    } finally {
      deadline.dispose();
      if (!draining) this.untrack(deadline);
      this.pending.remove(waiter);
    }
  }

  /**
   * POSTs a notification (no id); any 2xx, 202 included, is success.
   * @throws HttpError, RequestTimeoutError (kind `notify`), TransportClosedError.
   */
  async notify(method: string, params?: JsonObject): Promise<void> {
    if (this.state !== "open") throw this.closedError();
    const body = encode({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) });
    await this.sendOneWay(body, method, "notify");
  }

  /**
   * Starts the background SSE listener (Streamable HTTP only; legacy mode already listens). Idempotent.
   * A 405 disables it quietly; drops reconnect with backoff until close().
   */
  startSSEListener(): void {
    if (this.state === "closed" || this.modeValue === "legacy-sse" || this.listener) return;
    this.listener = new SseListener({
      url: this.cfg.url,
      agent: this.agent,
      headers: () => ({ ...this.cfg.headers, ...this.session.headers(undefined) }),
      maxEventBytes: this.cfg.maxBodyBytes,
      initialDelayMs: this.cfg.listenerInitialDelayMs,
      maxDelayMs: this.cfg.listenerMaxDelayMs,
      log: this.log,
      onMessage: (value) => this.dispatchAll(value, {}),
      onError: (error) => this.report(error),
    });
    this.listener.start();
  }

  /** The listener's state (`idle` when never started), for status and tests. */
  get listenerState(): "idle" | "running" | "disabled" | "stopped" {
    return this.listener?.state ?? "idle";
  }

  /**
   * Idempotent. Aborts every exchange and the listener (TransportClosedError), sends `DELETE` with the
   * session id (bounded by `deleteTimeoutMs`; 405 and failures ignored), closes the Agent and fires
   * `onClose({expected: true})` once, if the transport was connected.
   */
  close(): Promise<void> {
    this.closePromise ??= this.shutdown();
    return this.closePromise;
  }

  // --- lifecycle ---

  private async shutdown(): Promise<void> {
    const wasOpen = this.state === "open";
    this.state = "closed";
    this.closeReason ??= "closed by client";
    this.abortEverything("closed by client");
    if (wasOpen && this.modeValue === "streamable-http" && this.session.id !== undefined) await this.deleteSession(this.session.id);
    await this.agent.destroy().catch(() => {});
    if (wasOpen) this.fireClose({ reason: "closed by client", expected: true });
  }

  /** The server ended the session (legacy stream closed): fail everything and tell the owner once. */
  private fail(reason: string, cause?: unknown): void {
    if (this.state !== "open") return;
    this.state = "closed";
    this.closeReason = reason;
    this.log.warn({ url: this.cfg.safeUrl, reason }, "HTTP transport closed by the server");
    this.abortEverything(reason, cause);
    this.closePromise ??= this.agent.destroy().catch(() => {});
    this.fireClose({ reason, expected: false });
  }

  private abortEverything(reason: string, cause?: unknown): void {
    for (const deadline of [...this.inflight]) deadline.abort(new TransportClosedError(reason, { cause }));
    this.inflight.clear();
    this.listener?.stop();
    this.legacy?.close();
  }

  private async deleteSession(sessionId: string): Promise<void> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.cfg.deleteTimeoutMs);
    try {
      const res = await request(this.cfg.url, {
        method: "DELETE",
        headers: { ...this.cfg.headers, ...this.session.headers(undefined), "mcp-session-id": sessionId },
        signal: controller.signal,
        dispatcher: this.agent,
      });
      discardBody(res.body);
      this.log.debug({ url: this.cfg.safeUrl, status: res.statusCode }, "session DELETE answered");
    } catch (err) {
      // The server may already be gone; the session dies with it either way.
      this.log.debug({ url: this.cfg.safeUrl, err: errorText(err) }, "session DELETE failed");
    } finally {
      clearTimeout(timer);
    }
  }

  private async openLegacy(deadline: RequestDeadline): Promise<void> {
    const legacy = new LegacySseConnection({
      url: this.cfg.url,
      agent: this.agent,
      headers: () => ({ ...this.cfg.headers }),
      maxEventBytes: this.cfg.maxBodyBytes,
      log: this.log,
      onMessage: (value) => this.dispatchAll(value, {}),
      onParseError: (error) => this.drop(error),
      onEnd: (reason, cause) => this.fail(reason, cause),
    });
    this.legacy = legacy;
    try {
      await legacy.open(deadline.signal);
    } catch (err) {
      if (this.legacy === legacy) this.legacy = undefined;
      throw err;
    }
  }

  private fireClose(info: CloseInfo): void {
    try {
      this.onClose?.(info);
    } catch (err) {
      this.log.warn({ err: errorText(err) }, "onClose handler threw");
    }
  }

  // --- exchanges ---

  /** POST + reply for Streamable HTTP, with session healing and the legacy fallback. */
  private async streamableExchange(
    message: JsonRpcRequest,
    body: string,
    deadline: RequestDeadline,
    waiter: ResponseWaiter,
    sent: { value: boolean },
  ): Promise<ReplyOutcome> {
    let healed = false;
    for (;;) {
      if (message.method !== "initialize") await this.sessionReady(deadline);
      const sessionId = this.session.id;
      // Once the POST starts, the server may be working on it: a give-up from here on is worth a cancel.
      sent.value = true;
      const res = await this.post(this.cfg.url, body, message.method, deadline.signal);
      const status = res.statusCode;
      if (status >= 200 && status <= 299) {
        this.streamableConfirmed = true;
        return this.replies.read(res, waiter, deadline);
      }
      const error = await httpErrorFrom(status, res.headers, res.body);
      if (status === 404 && sessionId !== undefined && message.method !== "initialize" && !healed) {
        healed = true;
        this.log.info({ url: this.cfg.safeUrl, method: message.method }, "session expired (404); re-initializing");
        // The re-initialization is shared, so it runs on its own deadline; this request still keeps its own.
        await waitOrAbort(this.session.heal(sessionId, () => this.reinitialize(error)), deadline.signal);
        continue;
      }
      if (message.method === "initialize" && this.cfg.type === "http" && !this.streamableConfirmed && LEGACY_FALLBACK_STATUSES.has(status)) {
        if (await this.tryLegacyFallback(deadline, error)) return { response: await this.legacyExchange(body, deadline, waiter, sent) };
      }
      throw error;
    }
  }

  /** While a new session is being opened, messages wait for it rather than go out without a session id. */
  private async sessionReady(deadline: RequestDeadline): Promise<void> {
    const healing = this.session.healing;
    if (healing && this.modeValue === "streamable-http") await waitOrAbort(healing.catch(() => {}), deadline.signal);
  }

  /** Re-runs `initialize` with the remembered params on a fresh session, then `notifications/initialized`. */
  private async reinitialize(cause: Error): Promise<void> {
    const params = this.session.initializeParams;
    if (params === undefined) throw cause;
    const id = this.nextId++;
    const message: JsonRpcRequest = { jsonrpc: "2.0", id, method: "initialize", params };
    const deadline = this.track(new RequestDeadline(this.deadlineMs(undefined), "request"));
    const waiter = this.pending.add(id);
    let draining = false;
    try {
      const res = await this.post(this.cfg.url, encode(message), "initialize", deadline.signal);
      if (res.statusCode < 200 || res.statusCode > 299) throw await httpErrorFrom(res.statusCode, res.headers, res.body);
      const outcome = await this.replies.read(res, waiter, deadline);
      draining = outcome.draining === true;
      if ("error" in outcome.response) throw new McpRemoteError(outcome.response.error);
      this.session.noteInitializeResult(outcome.response.result);
    } catch (err) {
      throw deadline.aborted ? deadline.reason : err;
    } finally {
      deadline.dispose();
      if (!draining) this.untrack(deadline);
      this.pending.remove(waiter);
    }
    this.log.info({ url: this.cfg.safeUrl, sessionId: this.session.id }, "new session after expiry");
    await this.sendOneWay(encode({ jsonrpc: "2.0", method: "notifications/initialized" }), "notifications/initialized", "notify", false);
  }

  private async tryLegacyFallback(deadline: RequestDeadline, cause: Error): Promise<boolean> {
    try {
      await this.openLegacy(deadline);
    } catch (err) {
      if (deadline.aborted) throw deadline.reason;
      this.log.debug({ url: this.cfg.safeUrl, err: errorText(err) }, "no legacy HTTP+SSE endpoint either");
      return false;
    }
    this.modeValue = "legacy-sse";
    this.log.info({ url: this.cfg.safeUrl, status: (cause as { status?: number }).status }, "falling back to legacy HTTP+SSE");
    return true;
  }

  /** POST to the legacy endpoint; the response arrives on the GET stream. */
  private async legacyExchange(body: string, deadline: RequestDeadline, waiter: ResponseWaiter, sent: { value: boolean }): Promise<JsonRpcResponse> {
    const legacy = this.legacy;
    if (!legacy) throw this.closedError();
    sent.value = true;
    const res = await this.post(legacy.endpoint, body, undefined, deadline.signal);
    if (res.statusCode < 200 || res.statusCode > 299) throw await httpErrorFrom(res.statusCode, res.headers, res.body);
    discardBody(res.body);
    deadline.phase = "sse";
    return waitOrAbort(waiter.promise, deadline.signal);
  }

  /** A notification or an answer to a server request: POSTed, any 2xx accepted, no reply read. */
  private async sendOneWay(body: string, method: string | undefined, kind: "notify" | "request", waitForSession = true): Promise<void> {
    const deadline = this.track(new RequestDeadline(this.deadlineMs(undefined), kind === "notify" ? "notify" : "request"));
    try {
      if (waitForSession) await this.sessionReady(deadline);
      const target = this.modeValue === "legacy-sse" ? this.legacy?.endpoint : this.cfg.url;
      if (!target) throw this.closedError();
      const res = await this.post(target, body, method, deadline.signal);
      if (res.statusCode < 200 || res.statusCode > 299) throw await httpErrorFrom(res.statusCode, res.headers, res.body);
      discardBody(res.body);
    } catch (err) {
      throw deadline.aborted ? deadline.reason : err;
    } finally {
      deadline.dispose();
      this.untrack(deadline);
    }
  }

  /** One POST with the protocol headers. Stores the session id a server assigns. */
  private async post(url: URL, body: string, method: string | undefined, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
    const legacy = this.modeValue === "legacy-sse";
    const protocol = this.session.headers(method);
    // Legacy servers name the session in the endpoint's query, never in a header.
    if (legacy) delete protocol["mcp-session-id"];
    const sentSession = protocol["mcp-session-id"];
    const res = await request(url, {
      method: "POST",
      headers: { ...this.cfg.headers, ...protocol, "content-type": "application/json", accept: ACCEPT_POST },
      body,
      signal,
      dispatcher: this.agent,
    });
    const assigned = headerValue(res.headers, "mcp-session-id");
    // Only a request without a session can be given one; an answer echoing an old id must not revive it.
    if (!legacy && assigned && sentSession === undefined) this.session.id = assigned;
    return res;
  }

  // --- incoming messages ---

  private dispatchAll(value: unknown, context: MessageContext): void {
    // JSON-RPC batches (MCP 2025-03-26) carry several messages in one body or event.
    if (Array.isArray(value)) for (const item of value) this.dispatch(item, context);
    else this.dispatch(value, context);
  }

  private dispatch(value: unknown, context: MessageContext): void {
    const kind = classify(value);
    if (kind === "success" || kind === "error") {
      if (!this.pending.settle(value as JsonRpcResponse)) {
        // Late answers to timed-out or cancelled requests land here.
        this.dropped++;
        this.log.debug({ url: this.cfg.safeUrl, id: (value as JsonRpcResponse).id }, "dropped response with unknown id");
      }
      return;
    }
    if (kind === "notification") {
      const note = value as { method: string; params?: JsonObject };
      try {
        this.onNotification?.(note.method, note.params, context);
      } catch (err) {
        this.log.warn({ err: errorText(err) }, "onNotification handler threw");
      }
      return;
    }
    if (kind === "request") {
      void this.answer(value as JsonRpcRequest, context);
      return;
    }
    this.drop(new ProtocolError(`Not a JSON-RPC 2.0 message from ${this.cfg.safeUrl}: ${preview(JSON.stringify(value) ?? "")}`));
  }

  /** Answers a server-to-client request through `onRequest` (-32601 without one) and POSTs the answer. */
  private async answer(req: JsonRpcRequest, context: MessageContext): Promise<void> {
    let reply: JsonRpcMessage;
    const handler = this.onRequest;
    if (!handler) {
      reply = { jsonrpc: "2.0", id: req.id, error: { code: WireCode.MethodNotFound, message: `Method not found: ${req.method}` } };
    } else {
      try {
        reply = { jsonrpc: "2.0", id: req.id, result: await handler(req, context) };
      } catch (err) {
        reply = { jsonrpc: "2.0", id: req.id, error: toWireError(err) };
      }
    }
    if (this.state !== "open") return;
    try {
      await this.sendOneWay(encode(reply), undefined, "request");
    } catch (err) {
      this.log.warn({ url: this.cfg.safeUrl, method: req.method, err: errorText(err) }, "failed to answer server request");
      this.report(err instanceof Error ? err : new Error(errorText(err)));
    }
  }

  /** MCP cancellation for a request given up locally (deadline or caller abort). */
  private sendCancelled(requestId: number, reason: unknown): void {
    if (this.state !== "open") return;
    const text = reason instanceof Error && reason.message ? reason.message : typeof reason === "string" && reason ? reason : "Request cancelled";
    this.notify("notifications/cancelled", { requestId, reason: text }).catch((err: unknown) => {
      this.log.debug({ requestId, err: errorText(err) }, "failed to send notifications/cancelled");
    });
  }

  private drop(error: Error): void {
    this.dropped++;
    this.log.warn({ url: this.cfg.safeUrl, err: error.message }, "dropped HTTP message");
    this.report(error);
  }

  private report(error: Error): void {
    try {
      this.onError?.(error);
    } catch (err) {
      this.log.warn({ err: errorText(err) }, "onError handler threw");
    }
  }

  // --- helpers ---

  private track(deadline: RequestDeadline): RequestDeadline {
    if (this.state === "closed") deadline.abort(this.closedError());
    else this.inflight.add(deadline);
    return deadline;
  }

  private untrack(deadline: RequestDeadline): void {
    this.inflight.delete(deadline);
  }

  private closedError(): TransportClosedError {
    if (this.state === "idle") return new TransportClosedError("not connected");
    return new TransportClosedError(this.closeReason ?? "closed");
  }

  /** The deadline in ms for a request, or undefined for none. */
  private deadlineMs(requested: number | undefined): number | undefined {
    if (requested !== undefined) checkTimeoutMs(requested, "request timeout");
    const ms = requested ?? this.cfg.timeoutMs ?? TRANSPORT_DEFAULTS.requestTimeoutMs;
    return ms === 0 || !Number.isFinite(ms) ? undefined : ms;
  }
}

function encode(message: object): string {
  try {
    return JSON.stringify(message);
  } catch (err) {
    throw new ProtocolError(`message cannot be serialized as JSON: ${errorText(err)}`, { cause: err });
  }
}
