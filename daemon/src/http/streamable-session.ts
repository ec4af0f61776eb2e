import { randomBytes } from "node:crypto";
import type { ServerResponse } from "node:http";
import { encodeRelayed, type JsonObject, type Logger, type RequestId } from "@mcpd/protocol";
import type { Router } from "../router/router.js";
import type { Outbound } from "../router/ports.js";
import type { Session } from "../router/session.js";
import { RUNTIME_DEFAULTS } from "../defaults.js";
import { encodeOutgoing } from "../infra/encode-outgoing.js";
import type { HttpBuffers } from "./http-buffers.js";
import { afterPendingHangUp, clientGone, onGone } from "./http-respond.js";
import { OutputMeter } from "./output-meter.js";
import { SessionStreams, type StreamableSessionLimits } from "./session-streams.js";
import type { SseStream } from "./sse-stream.js";

export type { StreamableSessionLimits } from "./session-streams.js";

/** What a session needs from the sessions that own it. */
export interface SessionOwner {
  /** The daemon-wide budget's HTTP account. */
  readonly buffers: HttpBuffers;
  /** Its initialize could not be answered (the client went away first): the session must end now. */
  initializeLost(session: StreamableSession): void;
}

/**
 * One POST whose requests are being answered: answered as one JSON body when nothing but the answers
 * comes for it, switched to an SSE stream as soon as something else does (a progress notification, a
 * log message, a server-to-client request).
 */
export interface Exchange {
  readonly res: ServerResponse;
  /** Request ids still unanswered. */
  readonly ids: Set<RequestId>;
  /** Answers collected while still in JSON mode. */
  readonly answers: string[];
  /** The POST carried a JSON-RPC batch (answered as an array in JSON mode). */
  readonly batch: boolean;
  /** `never`: the client accepts only JSON; `allowed`: JSON or SSE; `always`: SSE only. */
  readonly sse: "never" | "allowed" | "always";
  /** `allowed` only: switch to SSE if still unanswered after this many ms (a call that may run long). */
  readonly streamAfterMs?: number;
  /** The timer of {@link streamAfterMs}, while armed. */
  graceTimer?: NodeJS.Timeout;
  /** Extra response headers (the new session's id on initialize). */
  readonly headers: Record<string, string>;
  /** Its SSE stream, once it switched. */
  stream?: SseStream;
  /** The client went away before everything was answered (JSON mode: the rest is dropped). */
  gone: boolean;
  /** It carries the session's initialize (an error answer ends the session once sent). */
  readonly initialize: boolean;
}

/**
 * One Streamable HTTP session (`Mcp-Session-Id`): a downstream {@link Session} of the router, exactly like a
 * socket connection's, whose outgoing messages are sorted onto HTTP responses: an answer to the POST that
 * asked, a request's progress (and a log message the router relates to a request) to that POST's stream,
 * anything else to the standalone GET stream when the
 * client has one open, else to the newest POST still open that may stream (else kept on the standalone
 * stream until a GET comes). Every SSE event is resumable with `Last-Event-ID` within the replay budget.
 */
export class StreamableSession implements Outbound {
  /** The `Mcp-Session-Id`: 24 random bytes, base64url. */
  readonly id = randomBytes(24).toString("base64url");
  readonly session: Session;
  readonly limits: StreamableSessionLimits;
  /** The path it was opened on (`/mcp`, `/servers/<name>/mcp`); requests must come to the same one. */
  readonly path: string;
  private readonly exchanges = new Map<RequestId, Exchange>();
  private readonly open = new Set<Exchange>();
  private readonly progressTokens = new Map<string | number, RequestId>();
  /** Its resumable streams (the standalone GET stream and its POSTs') and the events they keep. */
  private readonly streams: SessionStreams;
  private closed = false;
  private readonly log: Logger;
  private readonly owner: SessionOwner;
  lastActiveAt = Date.now();
  /** A request has come with its id since its initialize: its client has the id. */
  used = false;
  /** Answers that had no reader any more (the client went away from a JSON exchange). */
  droppedAnswers = 0;
  /** Its initialize was answered with an error: the session is ended once that answer is sent. */
  initializeFailed = false;

  /** @param owner the sessions it belongs to: the daemon-wide budget's HTTP account, and who ends it */
  constructor(router: Router, path: string, limits: StreamableSessionLimits, log: Logger, owner: SessionOwner) {
    this.limits = limits;
    this.owner = owner;
    this.path = path;
    this.log = log;
    this.session = router.attach(this, "http");
    this.streams = new SessionStreams(limits, owner.buffers, log, this.session.id);
  }

  /**
   * Whether its client can take what is not an answer to one of its requests: its GET stream is open.
   * Without it (and with no subscription and no log level) the router sends it no list changes or log
   * messages, so a session nobody listens to holds no bytes for them.
   */
  get listening(): boolean {
    return this.streams.standalone.attached;
  }

  /** The standalone (GET) stream. */
  get standalone(): SseStream {
    return this.streams.standalone;
  }

  /** Readers dropped for falling too far behind. */
  get slowReaders(): number {
    return this.streams.slowReaders;
  }

  /** Bytes of events kept for resumption. */
  get replayBytes(): number {
    return this.streams.replayBytes;
  }

  /** Whether anything is under way: a POST being answered or a stream being read. */
  get busy(): boolean {
    return this.open.size > 0 || this.streams.anyAttached;
  }

  /** POSTs being answered now. */
  get openExchanges(): number {
    return this.open.size;
  }

  /** Whether request `id` is already being answered in this session. */
  has(id: RequestId): boolean {
    return this.exchanges.has(id);
  }

  /** Registers a POST's requests before they are handed to the session (which may answer at once). */
  begin(exchange: Exchange, progress: Map<RequestId, string | number>): void {
    this.lastActiveAt = Date.now();
    for (const id of exchange.ids) this.exchanges.set(id, exchange);
    for (const [id, token] of progress) this.progressTokens.set(token, id);
    this.open.add(exchange);
    onGone(exchange.res, () => {
      this.lastActiveAt = Date.now();
      if (exchange.ids.size > 0 && !exchange.stream) exchange.gone = true;
      clearTimeout(exchange.graceTimer);
      this.open.delete(exchange);
    });
    if (exchange.sse === "always" || (exchange.sse === "allowed" && exchange.streamAfterMs === 0)) this.toSse(exchange);
    else if (exchange.sse === "allowed" && exchange.streamAfterMs !== undefined) {
      exchange.graceTimer = setTimeout(() => {
        if (!exchange.gone && exchange.ids.size > 0) this.toSse(exchange);
      }, exchange.streamAfterMs);
    }
  }

  /** A resumable stream by id (for `Last-Event-ID`). */
  stream(id: string): SseStream | undefined {
    return this.streams.get(id);
  }

  /** A stream resumed with `Last-Event-ID` and now fully read: forget it. */
  settle(stream: SseStream): void {
    this.streams.settle(stream);
  }

  /** Ends the session: its streams close, its requests are cancelled upstream (by the router's detach). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.streams.closeAll();
    for (const ex of this.open) if (!ex.res.writableEnded) ex.res.destroy();
    this.open.clear();
  }

  /**
   * Hands one message from the client to the router. A request the client cancels with
   * `notifications/cancelled` is never answered by the router (as MCP says): its POST is settled without it,
   * so the POST ends, its id is free again, and the session can idle out.
   */
  receive(message: unknown): void {
    const m = message as { method?: unknown; params?: { requestId?: unknown } };
    const id = m.method === "notifications/cancelled" ? m.params?.requestId : undefined;
    const silenced = (typeof id === "string" || typeof id === "number") && this.session.inFlight.has(id);
    this.session.handle(message);
    const ex = silenced ? this.exchanges.get(id) : undefined;
    if (!ex) return;
    this.release(ex, id as RequestId);
    if (ex.ids.size === 0) this.complete(ex);
  }

  // --- outgoing messages ---

  /** The router's {@link Outbound}: one message for the client, sorted onto its responses. */
  send(message: object, related?: RequestId): boolean {
    if (this.closed) return false;
    const m = message as { id?: RequestId; method?: unknown; params?: JsonObject };
    // A server's answer goes on as the server wrote it, with only its id the client's (no second encoding).
    const text = encodeOutgoing(message, this.log, encodeRelayed);
    if (text === undefined) return true;
    if (m.method !== undefined) {
      this.target(m.method, m.params, related).push(text);
      return true;
    }
    const id = m.id as RequestId;
    const ex = this.exchanges.get(id);
    // The session's id comes with this answer: it is sent only to a client still there (a hang-up that came
    // with the request has been read by then), else nobody could use the session and it ends at once.
    if (ex?.initialize)
      afterPendingHangUp(() => (clientGone(ex.res) ? this.owner.initializeLost(this) : this.answer(id, text, "error" in m)));
    else this.answer(id, text, "error" in m);
    return true;
  }

  /** @param failed it is an error answer (judged on the message: its text may hold `"error":` anywhere) */
  private answer(id: RequestId, text: string, failed: boolean): void {
    if (this.closed) return;
    const ex = this.exchanges.get(id);
    if (!ex) {
      this.droppedAnswers++;
      return;
    }
    this.release(ex, id);
    if (ex.initialize && failed) this.initializeFailed = true;
    if (ex.stream) ex.stream.push(text);
    else if (ex.gone) this.droppedAnswers++;
    else ex.answers.push(text);
    if (ex.ids.size === 0) this.complete(ex);
  }

  /** Request `id` of `ex` needs nothing more: answered, or cancelled by the client. */
  private release(ex: Exchange, id: RequestId): void {
    this.exchanges.delete(id);
    ex.ids.delete(id);
    for (const [token, rid] of this.progressTokens) if (rid === id) this.progressTokens.delete(token);
  }

  /** Every request of `ex` is settled: its stream ends, or its JSON answers go (202 when every one was cancelled). */
  private complete(ex: Exchange): void {
    clearTimeout(ex.graceTimer);
    if (ex.stream) return this.streams.finish(ex.stream);
    if (ex.gone) return;
    if (ex.answers.length === 0) {
      ex.res.writeHead(202, ex.headers).end();
      return;
    }
    const body = ex.batch ? `[${ex.answers.join(",")}]` : (ex.answers[0] as string);
    ex.res.writeHead(200, { ...ex.headers, "content-type": "application/json" });
    ex.res.end(body);
    // What the client has not read yet counts against the daemon-wide budget until it leaves.
    if (ex.res.writableLength > 0) new OutputMeter(ex.res, this.owner.buffers).written();
  }

  /** Where a notification or server-to-client request goes (see the class comment); `related`: see Outbound.send. */
  private target(method: unknown, params: JsonObject | undefined, related: RequestId | undefined): SseStream {
    let rid = related;
    if (method === "notifications/progress") {
      const token = params?.progressToken;
      rid = typeof token === "string" || typeof token === "number" ? this.progressTokens.get(token) : undefined;
    }
    const ex = rid === undefined ? undefined : this.exchanges.get(rid);
    if (ex && ex.sse !== "never" && (ex.stream || !ex.gone)) return this.toSse(ex);
    const standalone = this.streams.standalone;
    if (standalone.attached) return standalone;
    let newest: Exchange | undefined;
    for (const ex of this.open) if (ex.sse !== "never" && !ex.gone && ex.ids.size > 0) newest = ex;
    return newest ? this.toSse(newest) : standalone;
  }

  /** The exchange's SSE stream, switching it from JSON (the answers collected so far go first). */
  private toSse(ex: Exchange): SseStream {
    if (ex.stream) return ex.stream;
    clearTimeout(ex.graceTimer);
    const stream = this.streams.open();
    ex.stream = stream;
    ex.res.writeHead(200, { ...ex.headers, "content-type": "text/event-stream", "cache-control": "no-cache, no-transform" });
    // Headers, priming event and an answer that comes at once leave in one write (end() flushes): a fast
    // tools/call costs one syscall, not three. A slower answer's priming goes out after a few ms.
    ex.res.cork();
    setTimeout(() => ex.res.uncork(), RUNTIME_DEFAULTS.httpSseCoalesceMs).unref();
    stream.attach(ex.res);
    for (const a of ex.answers.splice(0)) stream.push(a);
    if (ex.ids.size === 0) this.streams.finish(stream);
    return stream;
  }
}
