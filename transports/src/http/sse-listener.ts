import type { Agent } from "undici";
import { McpdError, sseJson, type Logger, type ParseError } from "@mcpd/protocol";
import { DeliveredIds } from "./delivered-ids.js";
import { readSseStream, type SseCursor } from "./read-sse-stream.js";
import { ACCEPT_SSE, delay, discardBody, errorText, httpErrorFrom, mediaType, waitOrAbort } from "./http-wire.js";
import { urlLabel } from "../url-label.js";
import { request } from "./undici.js";

/** What an {@link SseListener} needs from its transport. */
export interface SseListenerDeps {
  url: URL;
  agent: Agent;
  /** Headers for each GET: configured headers, session id, protocol version. */
  headers: () => Record<string, string> | Promise<Record<string, string>>;
  maxEventBytes: number;
  initialDelayMs: number;
  maxDelayMs: number;
  log: Logger;
  /** Each parsed message event. */
  onMessage: (value: unknown) => void;
  /** Non-fatal problems: events that are not JSON, oversized events. The listener goes on. */
  onError: (error: Error) => void;
  /**
   * The server forgot session `expiredId` (404 to a GET that carried it): opens a new one, the same
   * re-initialization a request's 404 runs (shared with them). Rejects when that failed.
   */
  healSession: (expiredId: string, cause: Error) => Promise<void>;
}

/** `running` (connected or waiting to reconnect), `disabled` (the server answered 405), `stopped`. */
export type SseListenerState = "idle" | "running" | "disabled" | "stopped";

/**
 * The background `GET` stream of Streamable HTTP, on which a server sends messages that are not tied to
 * a request (list_changed, log messages, server requests).
 *
 * - A 405 answer means the server offers no such stream: the listener stops quietly (`disabled`).
 * - A 404 to a GET that carried a session id means the server forgot the session: it is healed
 *   ({@link SseListenerDeps.healSession}), the cursor forgotten (the old session's event ids mean nothing
 *   to the new one), and the listener reconnects at once (after a backoff when the new session's GET
 *   also answered 404 straight away).
 * - Any other failure, and any end of the stream, reconnects after a delay until {@link stop}: the
 *   server's `retry:` value after a stream that delivered events, else an exponential backoff from
 *   `initialDelayMs` to `maxDelayMs` (never shorter than `retry:`), so a failing server is not hammered;
 *   no wait exceeds `maxDelayMs`.
 *   Reconnects send `Last-Event-ID` when the stream carried event ids.
 * - Events that are not JSON go to `onError`; the stream goes on.
 */
export class SseListener {
  private readonly controller = new AbortController();
  private stateValue: SseListenerState = "idle";
  private readonly cursor: SseCursor = { events: 0 };
  /** Ids of the events delivered lately: one a server replays is not delivered again. */
  private readonly delivered = new DeliveredIds();
  /** Events of the current stream that were not replays: whether it made progress (the backoff starts over). */
  private fresh = 0;
  /** GET requests sent so far (for status and tests). */
  connects = 0;

  constructor(private readonly deps: SseListenerDeps) {}

  get state(): SseListenerState {
    return this.stateValue;
  }

  /** Starts the loop; does nothing if it already runs or was stopped/disabled. */
  start(): void {
    if (this.stateValue !== "idle") return;
    this.stateValue = "running";
    void this.loop();
  }

  /** Ends the stream and any pending reconnect. Idempotent. */
  stop(): void {
    if (this.stateValue === "running" || this.stateValue === "idle") this.stateValue = "stopped";
    this.controller.abort(new Error("listener stopped"));
  }

  private async loop(): Promise<void> {
    const { log } = this.deps;
    const safeUrl = urlLabel(this.deps.url);
    let backoffMs = this.deps.initialDelayMs;
    let healedBefore = false;
    while (this.stateValue === "running") {
      let healed = false;
      try {
        healed = await this.connectOnce(safeUrl);
      } catch (err) {
        if (this.controller.signal.aborted) return;
        log.debug({ url: safeUrl, err: errorText(err) }, "SSE listener stream failed");
        if (err instanceof McpdError) this.report(err);
      }
      if (this.stateValue !== "running") return;
      // Straight to the new session; a heal right after a heal waits, so a server that 404s every GET
      // is not answered with a stream of initializes.
      const again = healed && !healedBefore;
      healedBefore = healed;
      if (again) {
        backoffMs = this.deps.initialDelayMs;
        continue;
      }
      const progressed = this.fresh > 0;
      const retryMs = this.cursor.retryMs;
      // retry: is honoured, but never beyond maxDelayMs: a server must not be able to park the listener.
      const waitMs = Math.min(progressed && retryMs !== undefined ? retryMs : Math.max(backoffMs, retryMs ?? 0), this.deps.maxDelayMs);
      backoffMs = progressed ? this.deps.initialDelayMs : Math.min(backoffMs * 2 || 1, this.deps.maxDelayMs);
      try {
        await delay(waitMs, this.controller.signal);
      } catch {
        return;
      }
    }
  }

  /**
   * One GET and its stream, until the stream ends. `cursor.events` tells whether it delivered anything.
   * True when the GET met an expired session and a new one was opened.
   */
  private async connectOnce(safeUrl: string): Promise<boolean> {
    this.cursor.events = 0;
    this.fresh = 0;
    const headers: Record<string, string> = { ...(await this.deps.headers()), accept: ACCEPT_SSE };
    if (this.cursor.lastEventId !== undefined) headers["last-event-id"] = this.cursor.lastEventId;
    this.connects++;
    const res = await request(this.deps.url, { method: "GET", headers, signal: this.controller.signal, dispatcher: this.deps.agent });
    if (res.statusCode === 405) {
      discardBody(res.body);
      this.stateValue = "disabled";
      this.deps.log.debug({ url: safeUrl }, "server offers no SSE listener stream (405); listener disabled");
      return false;
    }
    if (res.statusCode < 200 || res.statusCode > 299) {
      const error = await httpErrorFrom(res.statusCode, res.headers, res.body);
      const sessionId = headers["mcp-session-id"];
      if (res.statusCode === 404 && sessionId !== undefined) {
        this.deps.log.info({ url: safeUrl }, "session expired (404) on the SSE listener's GET; re-initializing");
        // The old session's event ids mean nothing to the new one.
        this.cursor.lastEventId = undefined;
        this.cursor.retryMs = undefined;
        this.delivered.clear();
        await waitOrAbort(this.deps.healSession(sessionId, error), this.controller.signal);
        return true;
      }
      this.deps.log.debug({ url: safeUrl, err: error.message }, "SSE listener GET refused");
      return false;
    }
    if (mediaType(res.headers) !== "text/event-stream") {
      discardBody(res.body);
      this.deps.log.debug({ url: safeUrl }, "SSE listener GET answered without an event stream");
      return false;
    }
    await readSseStream(res.body, {
      cursor: this.cursor,
      maxEventBytes: this.deps.maxEventBytes,
      onEvent: (event) => {
        // A server that replays from Last-Event-ID inclusive sends the last one again: not again, and no progress.
        if (event.id !== undefined && this.delivered.seen(event.id)) return;
        this.fresh++;
        if (event.event !== undefined && event.event !== "message") return;
        let value: unknown;
        try {
          value = sseJson(event);
        } catch (err) {
          this.report(err as ParseError);
          return;
        }
        this.deps.onMessage(value);
      },
    });
    return false;
  }

  private report(error: Error): void {
    try {
      this.deps.onError(error);
    } catch {
      // The owner's handler must not break the loop.
    }
  }
}
