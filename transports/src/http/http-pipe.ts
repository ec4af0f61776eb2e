import type { Agent } from "undici";
import { TransportClosedError, type JsonRpcMessage, type Logger, type TimeoutKind } from "@mcpd/protocol";
import type { MessagePipe, PipeEvents } from "../message-pipe.js";
import type { TransportInfo } from "../transport.js";
import type { ResolvedHttpConfig } from "./http-config.js";
import { HttpExchange } from "./http-exchange.js";
import { HttpInbox, STANDALONE } from "./http-inbox.js";
import { HttpOutbox, type HttpTransportMode } from "./http-outbox.js";
import type { ParamHeaders } from "./modern-headers.js";
import { HttpReplyReader } from "./http-reply.js";
import { HttpSession } from "./http-session.js";
import { createHttpAgent, ownDeadlineMs, encodeJson } from "./http-wire.js";
import { HttpAuth } from "./auth/http-auth.js";
import { SseListener } from "./sse-listener.js";
import { loadUndici } from "./undici.js";

type State = "idle" | "open" | "closed";

/**
 * The wire of {@link HttpTransport} (see there for the protocol): each message is an HTTP exchange
 * ({@link HttpExchange}) on one keep-alive undici Agent. What goes out is the {@link HttpOutbox}'s: a
 * request's exchange POSTs it and reads its reply (JSON or SSE, resumed with Last-Event-ID), heals an
 * expired session once, and falls back to legacy HTTP+SSE when `initialize` is refused; every message of
 * the reply is delivered with `relatedRequestId` ({@link HttpInbox}), the response included, whose
 * arrival ends the exchange's wait. This class owns the lifecycle: connect, the GET listener, close, and
 * every exchange still running. Ids, deadlines and cancellation are the peer's: it abandons an exchange
 * by id ({@link abandon}), and the exchange's phase words its timeout ({@link phaseOf}).
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
  private readonly outbox: HttpOutbox;
  private state: State = "idle";
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
    this.replies = new HttpReplyReader({
      url: cfg.url,
      safeUrl: cfg.safeUrl,
      agent: () => this.agent,
      maxBodyBytes: cfg.maxBodyBytes,
      sseResumeAttempts: cfg.sseResumeAttempts,
      sseResumeDelayMs: cfg.sseResumeDelayMs,
      maxRetryMs: cfg.listenerMaxDelayMs,
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
    const parts = { cfg, session: this.session, replies: this.replies, inbox: this.inbox, auth: this.auth, events, log };
    this.outbox = new HttpOutbox(parts, {
      agent: () => this.agent,
      track: (exchange) => this.track(exchange),
      untrack: (exchange) => this.untrack(exchange),
      closedError: () => this.closedError(),
      fail: (reason, cause) => this.fail(reason, cause),
    });
  }

  get open(): boolean {
    return this.state === "open";
  }

  get mode(): HttpTransportMode {
    return this.outbox.mode;
  }

  get paramHeaders(): ParamHeaders | undefined {
    return this.outbox.paramHeaders;
  }
  set paramHeaders(headers: ParamHeaders | undefined) {
    this.outbox.paramHeaders = headers;
  }

  get listenerState(): "idle" | "running" | "disabled" | "stopped" {
    return this.listener?.state ?? "idle";
  }

  info(droppedMessages: number): TransportInfo {
    const mode = this.outbox.mode;
    const info: TransportInfo = { type: this.cfg.type, mode, droppedMessages };
    const sessionId = mode === "legacy-sse" ? this.outbox.legacy?.sessionId : this.session.id;
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
    if (this.outbox.mode === "legacy-sse") {
      const exchange = this.track(new HttpExchange(undefined, undefined, "request", ownDeadlineMs(this.cfg.timeoutMs)));
      try {
        await this.outbox.openLegacy(exchange);
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
      if ("id" in message) return this.outbox.request(message);
      return this.outbox.oneWay(encodeJson(message), message.method, "notify");
    }
    return this.outbox.oneWay(encodeJson(message), undefined, "request");
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
    if (this.state !== "open" || this.outbox.mode === "legacy-sse" || this.listener) return;
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
      healSession: (expiredId, cause) => this.outbox.healSession(expiredId, cause),
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
    if (wasOpen && this.outbox.mode === "streamable-http" && this.session.id !== undefined) {
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
    this.outbox.legacy?.close();
    this.auth?.client.close(new TransportClosedError(reason, { cause }));
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
