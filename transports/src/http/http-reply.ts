import type { Agent, Dispatcher } from "undici";
import {
  McpdError,
  NoResponseError,
  ParseError,
  ProtocolError,
  keepResultText,
  sseJson,
  type JsonRpcResponse,
  type Logger,
  type RequestId,
  type SseEvent,
} from "@mcpd/protocol";
import { TRANSPORT_DEFAULTS } from "../defaults.js";
import type { HttpExchange } from "./http-exchange.js";
import { ACCEPT_SSE, delay, discardBody, errorText, httpErrorFrom, mediaType, preview, readBodyText } from "./http-wire.js";
import { DeliveredIds } from "./delivered-ids.js";
import { readSseStream, type SseCursor } from "./read-sse-stream.js";
import { request } from "./undici.js";
import type { MessageContext } from "../transport.js";

/** What an {@link HttpReplyReader} needs from its transport. */
export interface HttpReplyDeps {
  url: URL;
  safeUrl: string;
  /** The transport's keep-alive Agent (made when the transport connects, after the reader). */
  agent: () => Agent;
  maxBodyBytes: number;
  sseResumeAttempts: number;
  sseResumeDelayMs: number;
  /** Longest wait before a resumption that a server's `retry:` may ask for, in ms (`listenerMaxDelayMs`). */
  maxRetryMs: number;
  log: Logger;
  /** Headers of a resumption GET (configured headers, session id, protocol version). */
  resumeHeaders: () => Record<string, string> | Promise<Record<string, string>>;
  /** Routes one parsed body or event (a message or a batch); a response settles its exchange. */
  dispatch: (value: unknown, context: MessageContext) => void;
  /** An SSE event of a type other than `message`, skipped. */
  onSkippedEvent: (type: string) => void;
  /** A problem after the response arrived (late events that are not JSON), for `onError`. */
  onLateError: (error: Error) => void;
  /** The exchange is over for good (after a drain): stop tracking it. */
  release: (exchange: HttpExchange) => void;
}

/** The response, and whether the rest of its SSE stream is still being drained (the exchange stays tracked). */
export interface ReplyOutcome {
  response: JsonRpcResponse;
  draining?: boolean;
}

/**
 * Reads the 2xx reply to one Streamable HTTP request, within that request's exchange (aborted at its deadline):
 *
 * - JSON: the whole body (bounded by `maxBodyBytes`), parsed, every message dispatched; the response must
 *   be among them (`NoResponseError` otherwise, 202 or an empty body included).
 * - SSE: events are dispatched with `relatedRequestId` until the response arrives. The rest of the stream
 *   is then drained in the background for at most `TRANSPORT_DEFAULTS.sseDrainGraceMs`. A stream that ends
 *   or breaks first is resumed with `GET` + `Last-Event-ID` after the server's `retry:` (else
 *   `sseResumeDelayMs`; `retry:` capped at `maxRetryMs`), when it carried event ids, up to
 *   `sseResumeAttempts` times in a row without progress (a stream that moved the last event id on);
 *   otherwise `NoResponseError` (`MCPD_NO_RESPONSE`, `cause`: the network or HTTP error, if any). An event
 *   a resumed stream replays (an id this reply already delivered) is skipped.
 *   An event that is not JSON fails the request with `ParseError`; an oversized one with `MessageTooLargeError`.
 */
export class HttpReplyReader {
  constructor(private readonly deps: HttpReplyDeps) {}

  async read(res: Dispatcher.ResponseData, exchange: HttpExchange): Promise<ReplyOutcome> {
    const context: MessageContext = { relatedRequestId: exchange.id };
    if (mediaType(res.headers) === "text/event-stream") {
      exchange.phase = "sse";
      return this.readSse(res.body, exchange, context);
    }
    const text = await readBodyText(res.body, res.headers, this.deps.maxBodyBytes, "HTTP response body");
    if (text.trim().length > 0) {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (err) {
        throw new ParseError(`Invalid JSON in HTTP response from ${this.deps.safeUrl}: ${preview(text)}`, { cause: err });
      }
      // An answer relayed to a client goes on as the server wrote it (encodeRelayedLine).
      keepResultText(value, text);
      this.deps.dispatch(value, context);
    }
    if (exchange.response) return { response: exchange.response };
    throw new NoResponseError(exchange.id as RequestId);
  }

  private async readSse(body: Dispatcher.ResponseData["body"], exchange: HttpExchange, context: MessageContext): Promise<ReplyOutcome> {
    const { deps } = this;
    const cursor: SseCursor = { events: 0 };
    let attempts = 0;
    const delivered = new DeliveredIds();
    let resumed = false;
    const onEvent = (event: SseEvent): void => {
      if (event.id !== undefined && delivered.seen(event.id) && resumed) {
        deps.log.debug({ url: deps.safeUrl, id: exchange.id, eventId: event.id }, "skipped an SSE event replayed on resumption");
        return;
      }
      this.event(event, context);
    };
    // undefined: the resumption GET itself failed, which counts as a stream that dropped at once.
    let stream: Dispatcher.ResponseData["body"] | undefined = body;
    for (;;) {
      let error: unknown;
      const from = cursor.lastEventId;
      if (stream) {
        const done = readSseStream(stream, { cursor, maxEventBytes: deps.maxBodyBytes, onEvent });
        const outcome = await Promise.race([
          (exchange.responded as Promise<unknown>).then(() => ({ ended: false as const })),
          done.then(
            () => ({ ended: true as const }),
            (err: unknown) => ({ ended: true as const, error: err }),
          ),
        ]);
        if (exchange.response) {
          const draining = !outcome.ended;
          if (draining) this.drain(done, exchange);
          return { response: exchange.response, draining };
        }
        if ("error" in outcome) error = outcome.error;
        if (exchange.aborted) throw exchange.reason;
        // Our own verdicts (bad JSON, oversized event) end the request; a dropped connection may be resumed.
        if (error instanceof McpdError) throw error;
        if (cursor.lastEventId === undefined) throw noResponse(exchange, error);
      }
      // Attempts count resumptions in a row that brought nothing new: only a new last event id is progress.
      attempts = attempts > 0 && cursor.lastEventId !== from ? 1 : attempts + 1;
      if (attempts > deps.sseResumeAttempts) throw noResponse(exchange, error);
      // retry: is honoured up to the cap (a server must not park the request; and past 2^31-1 ms Node's
      // timer would fire after 1 ms).
      await delay(cursor.retryMs === undefined ? deps.sseResumeDelayMs : Math.min(cursor.retryMs, deps.maxRetryMs), exchange.signal);
      resumed = true;
      const lastEventId = cursor.lastEventId as string;
      deps.log.debug({ url: deps.safeUrl, id: exchange.id, lastEventId, attempts }, "resuming SSE reply");
      cursor.events = 0;
      stream = undefined;
      let res: Dispatcher.ResponseData;
      try {
        res = await request(deps.url, {
          method: "GET",
          headers: { ...(await deps.resumeHeaders()), accept: ACCEPT_SSE, "last-event-id": lastEventId },
          signal: exchange.signal,
          dispatcher: deps.agent(),
        });
      } catch (err) {
        if (exchange.aborted) throw exchange.reason;
        deps.log.debug({ url: deps.safeUrl, err: errorText(err) }, "SSE resumption GET failed");
        continue;
      }
      if (res.statusCode < 200 || res.statusCode > 299)
        throw noResponse(exchange, await httpErrorFrom(res.statusCode, res.headers, res.body));
      if (mediaType(res.headers) !== "text/event-stream") {
        discardBody(res.body);
        throw noResponse(exchange, new ProtocolError("resumption GET answered without an event stream"));
      }
      stream = res.body;
    }
  }

  /** After the response, lets the rest of its SSE stream arrive for a bounded time, then closes it. */
  private drain(done: Promise<void>, exchange: HttpExchange): void {
    const grace = setTimeout(() => exchange.abort(new Error("SSE reply drain grace over")), TRANSPORT_DEFAULTS.sseDrainGraceMs);
    done
      .catch((err: unknown) => {
        if (!exchange.aborted && err instanceof McpdError) this.deps.onLateError(err);
      })
      .finally(() => {
        clearTimeout(grace);
        this.deps.release(exchange);
      });
  }

  private event(event: SseEvent, context: MessageContext): void {
    if (event.event !== undefined && event.event !== "message") {
      this.deps.onSkippedEvent(event.event);
      return;
    }
    // Throws ParseError: a reply stream that is not JSON fails its request.
    const value = sseJson(event);
    keepResultText(value, event.data);
    this.deps.dispatch(value, context);
  }
}

function noResponse(exchange: HttpExchange, cause: unknown): NoResponseError {
  const error = new NoResponseError(exchange.id as RequestId);
  // NoResponseError takes no options; the cause still tells why the stream ended.
  if (cause !== undefined) Object.defineProperty(error, "cause", { value: cause, configurable: true, writable: true });
  return error;
}
