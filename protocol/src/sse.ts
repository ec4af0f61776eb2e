import { createParser, type EventSourceParser } from "eventsource-parser";
import { ParseError } from "./errors.js";

/** One Server-Sent Event. `retry` is the most recent `retry:` value seen on the stream, if any. */
export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
  retry?: number;
}

export interface SseReaderOptions {
  onEvent: (event: SseEvent) => void;
  onRetry?: (retryMs: number) => void;
  onComment?: (comment: string) => void;
}

/**
 * Incremental SSE reader over eventsource-parser (which handles CRLF, multi-line `data:`, comments and
 * field edge cases per the WHATWG spec). Feed it text with {@link push}; events arrive by callback.
 */
export class SseReader {
  private readonly parser: EventSourceParser;
  private retry: number | undefined;
  private readonly decoder = new TextDecoder();
  /** The last event id seen, for `Last-Event-ID` on resumption. */
  lastEventId: string | undefined;

  constructor(options: SseReaderOptions) {
    this.parser = createParser({
      onEvent: (ev) => {
        const out: SseEvent = { data: ev.data };
        if (ev.id !== undefined) {
          out.id = ev.id;
          this.lastEventId = ev.id;
        }
        if (ev.event !== undefined) out.event = ev.event;
        if (this.retry !== undefined) out.retry = this.retry;
        options.onEvent(out);
      },
      onRetry: (ms) => {
        this.retry = ms;
        options.onRetry?.(ms);
      },
      onComment: options.onComment ? (c) => options.onComment?.(c) : undefined,
    });
  }

  /** The latest `retry:` in milliseconds, if the stream sent one. */
  get retryMs(): number | undefined {
    return this.retry;
  }

  push(chunk: string | Uint8Array): void {
    this.parser.feed(typeof chunk === "string" ? chunk : this.decoder.decode(chunk, { stream: true }));
  }

  /** Flushes a final event that was not followed by a blank line. */
  end(): void {
    const rest = this.decoder.decode();
    if (rest) this.parser.feed(rest);
    this.parser.feed("\n\n");
  }
}

/** Parses an event's `data` as JSON; throws {@link ParseError} naming the event when it is not JSON. */
export function sseJson(event: SseEvent): unknown {
  try {
    return JSON.parse(event.data);
  } catch (cause) {
    throw new ParseError(`Invalid JSON in SSE event${event.id ? ` ${event.id}` : ""}: ${(cause as Error).message}`, { cause });
  }
}

/** Reads every event from a complete SSE text. */
export function parseSseText(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  const reader = new SseReader({ onEvent: (e) => events.push(e) });
  reader.push(text);
  reader.end();
  return events;
}

/**
 * The seed's one-shot helper: takes the first `data:` event of an SSE body, falling back to the whole
 * text as plain JSON, and returns the parsed JSON-RPC envelope. Throws {@link ParseError} if neither parses.
 */
export function parseSSE(text: string): unknown {
  const first = parseSseText(text).find((e) => e.data.length > 0);
  if (first) return sseJson(first);
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new ParseError(`Response is neither SSE nor JSON: ${text.slice(0, 200)}`, { cause });
  }
}
