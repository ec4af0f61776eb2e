/**
 * Every message an {@link HttpPipe} sends, in the wire mode it speaks: a request's exchange (its POST and
 * its reply; an expired session healed once; the legacy HTTP+SSE fallback when `initialize` is refused),
 * a notification's or answer's one-way POST, and the legacy stream it opens. Each POST carries the
 * protocol headers and, with OAuth, the access token.
 */
import type { Agent, Dispatcher } from "undici";
import type { JsonRpcRequest, JsonRpcResponse, Logger, ParseError, TransportClosedError } from "@mcpd/protocol";
import type { PipeEvents } from "../message-pipe.js";
import type { HttpAuth } from "./auth/http-auth.js";
import type { ResolvedHttpConfig } from "./http-config.js";
import { HttpExchange } from "./http-exchange.js";
import type { HttpInbox } from "./http-inbox.js";
import type { HttpReplyReader, ReplyOutcome } from "./http-reply.js";
import type { HttpSession } from "./http-session.js";
import { discardBody, encodeJson, errorText, httpErrorFrom, ownDeadlineMs, waitOrAbort } from "./http-wire.js";
import { openLegacyConnection } from "./legacy-open.js";
import { inBandError, modernHeaders, type ParamHeaders } from "./modern-headers.js";
import type { LegacySseConnection } from "./legacy-sse.js";

/** The wire mode an {@link HttpTransport} speaks. */
export type HttpTransportMode = "streamable-http" | "legacy-sse";

/** Statuses with which a server that only speaks legacy HTTP+SSE refuses a POST of `initialize`. */
const LEGACY_FALLBACK_STATUSES = new Set([400, 404, 405]);

/** What the outbox needs of its pipe: the Agent, the running exchanges, and the end of the legacy stream. */
export interface OutboxHost {
  agent(): Agent;
  /** Counts an exchange as running (aborted at once when the pipe is closed). */
  track(exchange: HttpExchange): HttpExchange;
  untrack(exchange: HttpExchange): void;
  closedError(): TransportClosedError;
  /** The server ended the session (the legacy stream closed). */
  fail(reason: string, cause?: unknown): void;
}

/** The parts of the pipe the outbox sends through and delivers to. */
export interface OutboxParts {
  cfg: ResolvedHttpConfig;
  session: HttpSession;
  replies: HttpReplyReader;
  inbox: HttpInbox;
  auth: HttpAuth | undefined;
  events: PipeEvents;
  log: Logger;
}

export class HttpOutbox {
  /** The wire mode: set by the config, and to `legacy-sse` by a fallback. */
  mode: HttpTransportMode;
  /** The legacy HTTP+SSE stream, in that mode. */
  legacy: LegacySseConnection | undefined;
  /** A Streamable HTTP POST succeeded: never fall back to legacy after that. */
  private streamableConfirmed = false;
  /** The `Mcp-Param-*` headers of 2026-era requests (see MCPTransport.paramHeaders). */
  paramHeaders: ParamHeaders | undefined;

  constructor(
    private readonly parts: OutboxParts,
    private readonly host: OutboxHost,
  ) {
    this.mode = parts.cfg.type === "sse" ? "legacy-sse" : "streamable-http";
  }

  /** One request: its POST and its reply, until the response was delivered (the rest may drain later). */
  async request(message: JsonRpcRequest): Promise<void> {
    const { inbox, session } = this.parts;
    const exchange = this.host.track(new HttpExchange(message.id, message.method, "request"));
    inbox.exchanges.set(message.id, exchange);
    if (message.method === "initialize") session.initializeParams = message.params;
    let draining = false;
    try {
      const body = encodeJson(message);
      const outcome =
        this.mode === "legacy-sse" ? await this.legacyExchange(body, exchange) : await this.streamableExchange(message, body, exchange);
      draining = outcome.draining === true;
    } finally {
      exchange.dispose();
      if (!draining) this.host.untrack(exchange);
      if (inbox.exchanges.get(message.id) === exchange) inbox.exchanges.delete(message.id);
    }
  }

  /** A notification or an answer to a server request: POSTed, any 2xx accepted, no reply read. */
  async oneWay(body: string, method: string | undefined, kind: "notify" | "request", waitForSession = true): Promise<void> {
    const exchange = this.host.track(new HttpExchange(undefined, method, kind, ownDeadlineMs(this.parts.cfg.timeoutMs)));
    try {
      if (waitForSession) await this.sessionReady(exchange);
      const target = this.mode === "legacy-sse" ? this.legacy?.endpoint : this.parts.cfg.url;
      if (!target) throw this.host.closedError();
      const res = await this.post(target, body, method, exchange.signal);
      if (res.statusCode < 200 || res.statusCode > 299) throw await httpErrorFrom(res.statusCode, res.headers, res.body);
      discardBody(res.body);
    } catch (err) {
      throw exchange.aborted ? exchange.reason : err;
    } finally {
      exchange.dispose();
      this.host.untrack(exchange);
    }
  }

  /** Opens the legacy HTTP+SSE stream (GET, then its `endpoint` event) within `exchange`'s deadline. */
  async openLegacy(exchange: HttpExchange): Promise<void> {
    const { cfg, inbox, log, auth } = this.parts;
    const deps = {
      url: cfg.url,
      agent: this.host.agent(),
      headers: cfg.headers,
      maxEventBytes: cfg.maxBodyBytes,
      log,
      onMessage: (value: unknown): void => inbox.dispatchAll(value, {}),
      onEnd: (reason: string, cause?: unknown): void => this.host.fail(reason, cause),
      onParseError: (error: ParseError) => inbox.drop(error),
    };
    await openLegacyConnection(deps, auth, (legacy) => (this.legacy = legacy), exchange.signal);
  }

  /** POST + reply for Streamable HTTP, with session healing and the legacy fallback. */
  private async streamableExchange(message: JsonRpcRequest, body: string, exchange: HttpExchange): Promise<ReplyOutcome> {
    const { cfg, session, log } = this.parts;
    let healed = false;
    const modern = modernHeaders(message, this.paramHeaders);
    for (;;) {
      if (message.method !== "initialize") await this.sessionReady(exchange);
      const sessionId = session.id;
      // Once the POST starts, the server may be working on it: a give-up from here on is worth a cancel.
      exchange.sent = true;
      const res = await this.post(cfg.url, body, message.method, exchange.signal, modern);
      const status = res.statusCode;
      if (status >= 200 && status <= 299) {
        this.streamableConfirmed = true;
        return this.parts.replies.read(res, exchange);
      }
      const error = await httpErrorFrom(status, res.headers, res.body);
      // A 2026 server refuses with a status and a JSON-RPC error in the body: the server's answer, in-band.
      if (modern) throw inBandError(error, message.id) ?? error;
      if (status === 404 && sessionId !== undefined && message.method !== "initialize" && !healed) {
        healed = true;
        log.info({ url: cfg.safeUrl, method: message.method }, "session expired (404); re-initializing");
        // The re-initialization is shared, so it runs on its own deadline; this request still keeps its own.
        await waitOrAbort(this.healSession(sessionId, error), exchange.signal);
        continue;
      }
      if (message.method === "initialize" && cfg.type === "http" && !this.streamableConfirmed && LEGACY_FALLBACK_STATUSES.has(status)) {
        if (await this.tryLegacyFallback(exchange, error)) return this.legacyExchange(body, exchange);
      }
      throw error;
    }
  }

  /**
   * Opens a new session in place of `expiredId`, which the server forgot (it answered 404 to a message
   * that carried it): one re-initialization shared by every request and the listener that saw it (see
   * {@link HttpSession.heal}). Rejects with what the re-initialization threw (`cause` when no
   * `initialize` was ever sent).
   */
  healSession(expiredId: string, cause: Error): Promise<void> {
    return this.parts.session.heal(expiredId, () => this.reinitialize(cause));
  }

  /** While a new session is being opened, messages wait for it rather than go out without a session id. */
  private async sessionReady(exchange: HttpExchange): Promise<void> {
    const healing = this.parts.session.healing;
    if (healing && this.mode === "streamable-http")
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
    const { session, events, log, cfg } = this.parts;
    const params = session.initializeParams;
    if (params === undefined) throw cause;
    await events.request("initialize", params);
    log.info({ url: cfg.safeUrl, sessionId: session.id }, "new session after expiry");
    await this.oneWay(encodeJson({ jsonrpc: "2.0", method: "notifications/initialized" }), "notifications/initialized", "notify", false);
  }

  private async tryLegacyFallback(exchange: HttpExchange, cause: Error): Promise<boolean> {
    const { log, cfg } = this.parts;
    try {
      await this.openLegacy(exchange);
    } catch (err) {
      if (exchange.aborted) throw exchange.reason;
      log.debug({ url: cfg.safeUrl, err: errorText(err) }, "no legacy HTTP+SSE endpoint either");
      return false;
    }
    this.mode = "legacy-sse";
    log.info({ url: cfg.safeUrl, status: (cause as { status?: number }).status }, "falling back to legacy HTTP+SSE");
    return true;
  }

  /** POST to the legacy endpoint; the response arrives on the GET stream. */
  private async legacyExchange(body: string, exchange: HttpExchange): Promise<ReplyOutcome> {
    const legacy = this.legacy;
    if (!legacy) throw this.host.closedError();
    exchange.sent = true;
    const res = await this.post(legacy.endpoint, body, undefined, exchange.signal);
    if (res.statusCode < 200 || res.statusCode > 299) throw await httpErrorFrom(res.statusCode, res.headers, res.body);
    discardBody(res.body);
    exchange.phase = "sse";
    return { response: await waitOrAbort(exchange.responded as Promise<JsonRpcResponse>, exchange.signal) };
  }

  /**
   * One POST with the protocol headers (see {@link HttpSession.post}; a 2026-era request's `modern` ones
   * instead) and, with OAuth, the access token (see {@link HttpAuth.send}).
   */
  private post(
    url: URL,
    body: string,
    method: string | undefined,
    signal: AbortSignal,
    modern?: Record<string, string>,
  ): Promise<Dispatcher.ResponseData> {
    const { session, auth, cfg } = this.parts;
    const legacy = this.mode === "legacy-sse";
    const send = (headers: Record<string, string>): Promise<Dispatcher.ResponseData> =>
      session.post(this.host.agent(), url, headers, body, method, signal, legacy, modern);
    return auth ? auth.send(cfg.headers, send, signal) : send(cfg.headers);
  }
}
