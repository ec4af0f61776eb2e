import type { Agent, Dispatcher } from "undici";
import {
  TransportClosedError,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type Logger,
  type ParseError,
  type TimeoutKind,
} from "@mcpd/protocol";
import type { MessagePipe, PipeEvents } from "../message-pipe.js";
import type { TransportInfo } from "../transport.js";
import type { ResolvedHttpConfig } from "./http-config.js";
import { HttpExchange } from "./http-exchange.js";
import { HttpInbox, STANDALONE } from "./http-inbox.js";
import { HttpReplyReader, type ReplyOutcome } from "./http-reply.js";
import { HttpSession } from "./http-session.js";
import { createHttpAgent, ownDeadlineMs, discardBody, encodeJson, errorText, httpErrorFrom, waitOrAbort } from "./http-wire.js";
import { HttpAuth } from "./auth/http-auth.js";
import type { LegacySseConnection } from "./legacy-sse.js";
import { openLegacyConnection } from "./legacy-open.js";
import { SseListener } from "./sse-listener.js";
import { loadUndici } from "./undici.js";

/** The wire mode an {@link HttpTransport} speaks. */
export type HttpTransportMode = "streamable-http" | "legacy-sse";

type State = "idle" | "open" | "closed";

/** Statuses with which a server that only speaks legacy HTTP+SSE refuses a POST of `initialize`. */
const LEGACY_FALLBACK_STATUSES = new Set([400, 404, 405]);

/**
 * The wire of {@link HttpTransport} (see there for the protocol): each message is an HTTP exchange
 * ({@link HttpExchange}) on one keep-alive undici Agent. A request's exchange POSTs it and reads its
 * reply (JSON or SSE, resumed with Last-Event-ID), heals an expired session once, and falls back to legacy
 * HTTP+SSE when `initialize` is refused; every message of the reply is delivered with
 * `relatedRequestId`, the response included, whose arrival ends the exchange's wait. Ids, deadlines and
 * cancellation are the peer's: it abandons an exchange by id ({@link abandon}), and the exchange's phase
 * words its timeout ({@link phaseOf}).
 */
export class HttpPipe implements MessagePipe {
  /** The keep-alive Agent, made on first use (see {@link agent}). */
  private agentValue: Agent | undefined;
  private readonly session = new HttpSession();
  private readonly replies: HttpReplyReader;
  /** Every message from the server, and the request exchanges by id (where a response is awaited, what the peer abandons). */
  private readonly inbox: HttpInbox;
  /** Every exchange still running (requests, one-way sends, draining replies), aborted by close(). */
  private readonly inflight = new Set<HttpExchange>();
  private state: State = "idle";
  private modeValue: HttpTransportMode;
  /** A Streamable HTTP POST succeeded: never fall back to legacy after that. */
  private streamableConfirmed = false;
  private legacy: LegacySseConnection | undefined;
  private listener: SseListener | undefined;
  private closeReason: string | undefined;
  private closePromise: Promise<void> | undefined;
  /** The OAuth client, when the transport was given an `auth` provider. */
  private readonly auth: HttpAuth | undefined;

  constructor(
    private readonly cfg: ResolvedHttpConfig,
    private readonly events: PipeEvents,
    private readonly log: Logger,
  ) {
    // The OAuth client's requests (rare: a refresh, an authorization) use undici's global dispatcher: the
    // transport's keep-alive agent is made only once connect() has loaded undici.
    this.auth = cfg.auth ? new HttpAuth(cfg.url, cfg.auth, undefined, log) : undefined;
    this.inbox = new HttpInbox(events, this.session, log, cfg.safeUrl);
    this.modeValue = cfg.type === "sse" ? "legacy-sse" : "streamable-http";
    this.replies = new HttpReplyReader({
      url: cfg.url,
      safeUrl: cfg.safeUrl,
      agent: () => this.agent,
      maxBodyBytes: cfg.maxBodyBytes,
      sseResumeAttempts: cfg.sseResumeAttempts,
      sseResumeDelayMs: cfg.sseResumeDelayMs,
      log,
      resumeHeaders: async () => ({ ...(await this.baseHeaders()), ...this.session.headers(undefined) }),
      dispatch: (value, context) => this.inbox.dispatchAll(value, context),
      onSkippedEvent: (type) => {
        this.log.debug({ url: cfg.safeUrl, event: type }, "ignored SSE event of unknown type");
        this.events.dropped();
      },
      onLateError: (error) => this.events.report(error),
      release: (exchange) => this.untrack(exchange),
    });
  }

  get open(): boolean {
    return this.state === "open";
  }

  get mode(): HttpTransportMode {
    return this.modeValue;
  }

  get listenerState(): "idle" | "running" | "disabled" | "stopped" {
    return this.listener?.state ?? "idle";
  }

  info(droppedMessages: number): TransportInfo {
    const info: TransportInfo = { type: this.cfg.type, mode: this.modeValue, droppedMessages };
    const sessionId = this.modeValue === "legacy-sse" ? this.legacy?.sessionId : this.session.id;
    if (sessionId !== undefined) info.sessionId = sessionId;
    return info;
  }

  closedError(): TransportClosedError {
    if (this.state === "idle") return new TransportClosedError("not connected");
    return new TransportClosedError(this.closeReason ?? "closed");
  }

  /** Which timeout wording request `id` takes now: `sse` once its reply stream is being read. */
  phaseOf(id: number): TimeoutKind {
    return this.inbox.exchanges.get(id)?.phase ?? "request";
  }

  async connect(): Promise<void> {
    if (this.state === "closed") throw this.closedError();
    if (this.state === "open") return;
    // Loaded by the first HTTP transport that connects, not when the package is imported: a daemon whose
    // servers are all stdio never loads it. Every exchange needs an open pipe, so it comes after this.
    await loadUndici();
    if ((this.state as State) === "closed") throw this.closedError();
    if (this.modeValue === "legacy-sse") {
      const exchange = this.track(new HttpExchange(undefined, undefined, "request", ownDeadlineMs(this.cfg.timeoutMs)));
      try {
        await this.openLegacy(exchange);
      } finally {
        // Its timer would otherwise keep the process alive for the whole timeout after a refused connect.
        exchange.dispose();
        this.untrack(exchange);
      }
    }
    // close() may have run while the legacy stream was opening.
    if ((this.state as State) === "closed") throw this.closedError();
    this.state = "open";
  }

  /**
   * A request starts its exchange (the returned promise rejects with HttpError, NoResponseError,
   * ParseError, MessageTooLargeError or a network error when it fails); a notification or an answer is
   * POSTed one way (rejects with HttpError, `Notify timeout`, TransportClosedError).
   */
  send(message: JsonRpcMessage): Promise<void> {
    if (this.state !== "open") throw this.closedError();
    if ("method" in message) {
      if ("id" in message) return this.requestExchange(message);
      return this.sendOneWay(encodeJson(message), message.method, "notify");
    }
    return this.sendOneWay(encodeJson(message), undefined, "request");
  }

  /** The peer gave request `id` up: abort its exchange. True when its POST had started. */
  abandon(id: number, reason: unknown): boolean {
    const exchange = this.inbox.exchanges.get(id);
    if (exchange === undefined) return false;
    exchange.abort(reason);
    return exchange.sent;
  }

  startListener(): void {
    // Before connect() there is no session to listen on (and undici is not loaded yet).
    if (this.state !== "open" || this.modeValue === "legacy-sse" || this.listener) return;
    this.listener = new SseListener({
      url: this.cfg.url,
      agent: this.agent,
      headers: async () => ({ ...(await this.baseHeaders()), ...this.session.headers(undefined) }),
      maxEventBytes: this.cfg.maxBodyBytes,
      initialDelayMs: this.cfg.listenerInitialDelayMs,
      maxDelayMs: this.cfg.listenerMaxDelayMs,
      log: this.log,
      onMessage: (value) => this.inbox.dispatchAll(value, STANDALONE),
      onError: (error) => this.events.report(error),
    });
    this.listener.start();
  }

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
    if (wasOpen && this.modeValue === "streamable-http" && this.session.id !== undefined) {
      // The server may already be gone; the session dies with it either way. No refresh on the way out.
      const headers = this.auth ? await this.auth.storedHeaders(this.cfg.headers) : this.cfg.headers;
      const outcome = await this.session.delete(this.agent, this.cfg.url, headers, this.cfg.deleteTimeoutMs);
      this.log.debug({ url: this.cfg.safeUrl, ...outcome }, "error" in outcome ? "session DELETE failed" : "session DELETE answered");
    }
    await this.agentValue?.destroy().catch(() => {});
    if (wasOpen) this.events.closed({ reason: "closed by client", expected: true });
  }

  /** The server ended the session (legacy stream closed): fail everything and tell the owner once. */
  private fail(reason: string, cause?: unknown): void {
    if (this.state !== "open") return;
    this.state = "closed";
    this.closeReason = reason;
    this.log.warn({ url: this.cfg.safeUrl, reason }, "HTTP transport closed by the server");
    this.abortEverything(reason, cause);
    this.closePromise ??= (this.agentValue?.destroy() ?? Promise.resolve()).catch(() => {});
    this.events.closed({ reason, expected: false });
  }

  private abortEverything(reason: string, cause?: unknown): void {
    this.events.down(() => new TransportClosedError(reason, { cause }));
    for (const exchange of [...this.inflight]) exchange.abort(new TransportClosedError(reason, { cause }));
    this.inflight.clear();
    this.listener?.stop();
    this.legacy?.close();
    this.auth?.client.close(new TransportClosedError(reason, { cause }));
  }

  private async openLegacy(exchange: HttpExchange): Promise<void> {
    const { url, headers, maxBodyBytes: maxEventBytes } = this.cfg;
    const onMessage = (value: unknown): void => this.inbox.dispatchAll(value, {});
    const onEnd = (reason: string, cause?: unknown): void => this.fail(reason, cause);
    const deps = {
      url,
      agent: this.agent,
      headers,
      maxEventBytes,
      log: this.log,
      onMessage,
      onEnd,
      onParseError: (error: ParseError) => this.inbox.drop(error),
    };
    await openLegacyConnection(deps, this.auth, (legacy) => (this.legacy = legacy), exchange.signal);
  }

  // --- exchanges ---

  /** One request: its POST and its reply, until the response was delivered (the rest may drain later). */
  private async requestExchange(message: JsonRpcRequest): Promise<void> {
    const exchange = this.track(new HttpExchange(message.id, message.method, "request"));
    this.inbox.exchanges.set(message.id, exchange);
    if (message.method === "initialize") this.session.initializeParams = message.params;
    let draining = false;
    try {
      const body = encodeJson(message);
      const outcome =
        this.modeValue === "legacy-sse"
          ? await this.legacyExchange(body, exchange)
          : await this.streamableExchange(message, body, exchange);
      draining = outcome.draining === true;
    } finally {
      exchange.dispose();
      if (!draining) this.untrack(exchange);
      if (this.inbox.exchanges.get(message.id) === exchange) this.inbox.exchanges.delete(message.id);
    }
  }

  /** POST + reply for Streamable HTTP, with session healing and the legacy fallback. */
  private async streamableExchange(message: JsonRpcRequest, body: string, exchange: HttpExchange): Promise<ReplyOutcome> {
    let healed = false;
    for (;;) {
      if (message.method !== "initialize") await this.sessionReady(exchange);
      const sessionId = this.session.id;
      // Once the POST starts, the server may be working on it: a give-up from here on is worth a cancel.
      exchange.sent = true;
      const res = await this.post(this.cfg.url, body, message.method, exchange.signal);
      const status = res.statusCode;
      if (status >= 200 && status <= 299) {
        this.streamableConfirmed = true;
        return this.replies.read(res, exchange);
      }
      const error = await httpErrorFrom(status, res.headers, res.body);
      if (status === 404 && sessionId !== undefined && message.method !== "initialize" && !healed) {
        healed = true;
        this.log.info({ url: this.cfg.safeUrl, method: message.method }, "session expired (404); re-initializing");
        // The re-initialization is shared, so it runs on its own deadline; this request still keeps its own.
        await waitOrAbort(
          this.session.heal(sessionId, () => this.reinitialize(error)),
          exchange.signal,
        );
        continue;
      }
      if (
        message.method === "initialize" &&
        this.cfg.type === "http" &&
        !this.streamableConfirmed &&
        LEGACY_FALLBACK_STATUSES.has(status)
      ) {
        if (await this.tryLegacyFallback(exchange, error)) return this.legacyExchange(body, exchange);
      }
      throw error;
    }
  }

  /** While a new session is being opened, messages wait for it rather than go out without a session id. */
  private async sessionReady(exchange: HttpExchange): Promise<void> {
    const healing = this.session.healing;
    if (healing && this.modeValue === "streamable-http")
      await waitOrAbort(
        healing.catch(() => {}),
        exchange.signal,
      );
  }

  /**
   * Re-runs `initialize` with the remembered params on a fresh session (a request of its own through the
   * peer: its own id and deadline), then `notifications/initialized`.
   */
  private async reinitialize(cause: Error): Promise<void> {
    const params = this.session.initializeParams;
    if (params === undefined) throw cause;
    await this.events.request("initialize", params);
    this.log.info({ url: this.cfg.safeUrl, sessionId: this.session.id }, "new session after expiry");
    await this.sendOneWay(
      encodeJson({ jsonrpc: "2.0", method: "notifications/initialized" }),
      "notifications/initialized",
      "notify",
      false,
    );
  }

  private async tryLegacyFallback(exchange: HttpExchange, cause: Error): Promise<boolean> {
    try {
      await this.openLegacy(exchange);
    } catch (err) {
      if (exchange.aborted) throw exchange.reason;
      this.log.debug({ url: this.cfg.safeUrl, err: errorText(err) }, "no legacy HTTP+SSE endpoint either");
      return false;
    }
    this.modeValue = "legacy-sse";
    this.log.info({ url: this.cfg.safeUrl, status: (cause as { status?: number }).status }, "falling back to legacy HTTP+SSE");
    return true;
  }

  /** POST to the legacy endpoint; the response arrives on the GET stream. */
  private async legacyExchange(body: string, exchange: HttpExchange): Promise<ReplyOutcome> {
    const legacy = this.legacy;
    if (!legacy) throw this.closedError();
    exchange.sent = true;
    const res = await this.post(legacy.endpoint, body, undefined, exchange.signal);
    if (res.statusCode < 200 || res.statusCode > 299) throw await httpErrorFrom(res.statusCode, res.headers, res.body);
    discardBody(res.body);
    exchange.phase = "sse";
    return { response: await waitOrAbort(exchange.responded as Promise<JsonRpcResponse>, exchange.signal) };
  }

  /** A notification or an answer to a server request: POSTed, any 2xx accepted, no reply read. */
  private async sendOneWay(body: string, method: string | undefined, kind: "notify" | "request", waitForSession = true): Promise<void> {
    const exchange = this.track(new HttpExchange(undefined, method, kind, ownDeadlineMs(this.cfg.timeoutMs)));
    try {
      if (waitForSession) await this.sessionReady(exchange);
      const target = this.modeValue === "legacy-sse" ? this.legacy?.endpoint : this.cfg.url;
      if (!target) throw this.closedError();
      const res = await this.post(target, body, method, exchange.signal);
      if (res.statusCode < 200 || res.statusCode > 299) throw await httpErrorFrom(res.statusCode, res.headers, res.body);
      discardBody(res.body);
    } catch (err) {
      throw exchange.aborted ? exchange.reason : err;
    } finally {
      exchange.dispose();
      this.untrack(exchange);
    }
  }

  /** One POST with the protocol headers (see {@link HttpSession.post}) and, with OAuth, the access token (see {@link HttpAuth.send}). */
  private post(url: URL, body: string, method: string | undefined, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
    const legacy = this.modeValue === "legacy-sse";
    const send = (headers: Record<string, string>): Promise<Dispatcher.ResponseData> =>
      this.session.post(this.agent, url, headers, body, method, signal, legacy);
    return this.auth ? this.auth.send(this.cfg.headers, send, signal) : send(this.cfg.headers);
  }

  /** The configured headers with the current access token, for GETs. */
  private async baseHeaders(): Promise<Record<string, string>> {
    return this.auth ? this.auth.headers(this.cfg.headers) : this.cfg.headers;
  }

  // --- helpers ---

  /** The keep-alive Agent. Made on first use, which comes after connect() loaded undici. */
  private get agent(): Agent {
    this.agentValue ??= createHttpAgent(this.cfg.connections);
    return this.agentValue;
  }

  private track(exchange: HttpExchange): HttpExchange {
    if (this.state === "closed") exchange.abort(this.closedError());
    else this.inflight.add(exchange);
    return exchange;
  }

  private untrack(exchange: HttpExchange): void {
    this.inflight.delete(exchange);
  }
}
