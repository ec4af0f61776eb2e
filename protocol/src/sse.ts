import { PROTOCOL_DEFAULTS } from "./defaults.js";
import { MessageTooLargeError, ParseError } from "./errors.js";

/** One Server-Sent Event. */
export interface SseEvent {
  /** The `id:` field of this event, when it had one. The stream's running value is {@link SseReader.lastEventId}. */
  id?: string;
  /** The `event:` field, when present and non-empty (absent means the default type, `message`). */
  event?: string;
  /** The `data:` lines joined with `\n`. Can be empty (MCP servers send `id` + empty `data` to prime resumption). */
  data: string;
  /** The most recent `retry:` value seen on the stream, in milliseconds, if any. */
  retry?: number;
}

export interface SseReaderOptions {
  onEvent: (event: SseEvent) => void;
  /** Called for each valid `retry:` field (ASCII digits only), in milliseconds. */
  onRetry?: (retryMs: number) => void;
  /** Called for each comment line (`:` prefix; one following space is removed). */
  onComment?: (comment: string) => void;
  /**
   * Called once per event whose data outgrew `maxEventBytes` (`MCPD_MESSAGE_TOO_LARGE`); that event is
   * skipped up to its blank line and the stream goes on.
   */
  onError?: (error: MessageTooLargeError) => void;
  /**
   * Largest event in bytes: its `data:` lines plus the line being read. A positive integer.
   * Default {@link PROTOCOL_DEFAULTS.maxLineBytes} (one SSE event carries one JSON-RPC message).
   */
  maxEventBytes?: number;
}

const LF = 0x0a;
const CR = 0x0d;
const EMPTY = new Uint8Array(0);
// ignoreBOM: a BOM is stripped only at the start of the stream (WHATWG), not at the start of every line.
const utf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
const encoder = new TextEncoder();

/**
 * Incremental Server-Sent Events reader following the WHATWG event-stream algorithm: CRLF, CR and LF
 * line endings, multi-line `data:`, comments, `id:` (ignored when it contains NUL), `retry:` (digits
 * only), a leading BOM. Feed it bytes or text with {@link push}; events arrive by callback.
 *
 * Chunks may split anywhere (inside a CRLF, inside a multi-byte character): lines are cut on bytes and
 * decoded whole. Memory is bounded by `maxEventBytes`. An `id:` updates {@link lastEventId} when its
 * event ends, even if the event had no data (per WHATWG), so resumption never replays a primed event.
 */
export class SseReader {
  /** The last event id seen (the value to send as `Last-Event-ID` on resumption); `""` after an empty `id:`. */
  lastEventId: string | undefined;
  private readonly options: SseReaderOptions;
  private readonly maxEventBytes: number;
  private retry: number | undefined;
  // The line being read.
  private parts: Uint8Array[] = [];
  private lineBytes = 0;
  /** The previous chunk ended with CR: a LF starting the next chunk belongs to that line ending. */
  private afterCR = false;
  private atStart = true;
  // The event being assembled.
  private data: string[] = [];
  private dataBytes = 0;
  private eventType: string | undefined;
  private eventId: string | undefined;
  /** Bytes of the current oversized event seen so far; -1 when not discarding. */
  private discarding = -1;

  /** @throws RangeError when `maxEventBytes` is not a positive integer. */
  constructor(options: SseReaderOptions) {
    const max = options.maxEventBytes ?? PROTOCOL_DEFAULTS.maxLineBytes;
    if (!Number.isSafeInteger(max) || max < 1) {
      throw new RangeError(`SseReader: maxEventBytes must be a positive integer, got ${String(max)}`);
    }
    this.options = options;
    this.maxEventBytes = max;
  }

  /** The latest `retry:` in milliseconds, if the stream sent one. */
  get retryMs(): number | undefined {
    return this.retry;
  }

  /**
   * Feeds a chunk. Strings are encoded as UTF-8 (a string chunk must not end inside a surrogate pair).
   * Never throws on content; exceptions from the callbacks propagate.
   */
  push(chunk: string | Uint8Array): void {
    const bytes = typeof chunk === "string" ? encoder.encode(chunk) : chunk;
    const len = bytes.length;
    if (len === 0) return;
    let pos = 0;
    if (this.afterCR) {
      this.afterCR = false;
      if (bytes[0] === LF) pos = 1;
    }
    // Cached positions of the next LF and CR keep the scan linear in the chunk size.
    let lf = bytes.indexOf(LF, pos);
    let cr = bytes.indexOf(CR, pos);
    while (pos < len) {
      if (lf !== -1 && lf < pos) lf = bytes.indexOf(LF, pos);
      if (cr !== -1 && cr < pos) cr = bytes.indexOf(CR, pos);
      const eol = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      if (eol === -1) {
        this.keep(bytes.subarray(pos));
        return;
      }
      this.endLine(bytes.subarray(pos, eol));
      if (bytes[eol] === CR) {
        if (eol + 1 === len) {
          this.afterCR = true;
          return;
        }
        pos = bytes[eol + 1] === LF ? eol + 2 : eol + 1;
      } else {
        pos = eol + 1;
      }
    }
  }

  /**
   * Ends the stream. Unlike a browser, a final event not followed by a blank line is still delivered
   * (the seed's helper reads such bodies); an oversized one is reported.
   */
  end(): void {
    if (this.lineBytes > 0) this.endLine(EMPTY);
    this.endLine(EMPTY);
    this.afterCR = false;
  }

  private keep(bytes: Uint8Array): void {
    this.lineBytes += bytes.length;
    if (this.discarding >= 0) return;
    if (this.dataBytes + this.lineBytes > this.maxEventBytes) {
      // This line's bytes are added when it ends (lineBytes keeps counting while discarding).
      this.discarding = this.dataBytes;
      this.parts = [];
      this.data = [];
      this.dataBytes = 0;
      return;
    }
    // Copy: the caller may reuse its buffer.
    this.parts.push(bytes.slice());
  }

  /** A line ended; `tail` is its part inside the current chunk. */
  private endLine(tail: Uint8Array): void {
    const size = this.lineBytes + tail.length;
    const atStart = this.atStart;
    this.atStart = false;
    if (this.discarding >= 0) {
      this.lineBytes = 0;
      if (size > 0) {
        this.discarding += size;
        return;
      }
      const err = new MessageTooLargeError(this.discarding, this.maxEventBytes, "SSE event");
      this.discarding = -1;
      this.resetEvent();
      this.options.onError?.(err);
      return;
    }
    if (size === 0) {
      this.lineBytes = 0;
      this.dispatch();
      return;
    }
    if (this.dataBytes + size > this.maxEventBytes) {
      this.discarding = this.dataBytes + size;
      this.parts = [];
      this.lineBytes = 0;
      this.data = [];
      this.dataBytes = 0;
      return;
    }
    let bytes = tail;
    if (this.parts.length > 0) {
      bytes = new Uint8Array(size);
      let off = 0;
      for (const p of this.parts) {
        bytes.set(p, off);
        off += p.length;
      }
      bytes.set(tail, off);
      this.parts = [];
    }
    this.lineBytes = 0;
    let text = utf8.decode(bytes);
    if (atStart) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      if (text === "") {
        this.dispatch();
        return;
      }
    }
    this.field(text, size);
  }

  private field(line: string, size: number): void {
    if (line.charCodeAt(0) === 0x3a /* : */) {
      this.options.onComment?.(line.slice(line.charCodeAt(1) === 0x20 ? 2 : 1));
      return;
    }
    const colon = line.indexOf(":");
    const name = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? "" : line.slice(colon + (line.charCodeAt(colon + 1) === 0x20 ? 2 : 1));
    switch (name) {
      case "data":
        this.data.push(value);
        this.dataBytes += size;
        break;
      case "event":
        this.eventType = value === "" ? undefined : value;
        break;
      case "id":
        if (!value.includes("\0")) this.eventId = value;
        break;
      case "retry":
        if (/^[0-9]+$/.test(value)) {
          const ms = Number(value);
          // Digits beyond 2^53 are not a usable delay; ignore like any invalid value.
          if (Number.isSafeInteger(ms)) {
            this.retry = ms;
            this.options.onRetry?.(ms);
          }
        }
        break;
      default:
        // Unknown fields are ignored (WHATWG).
        break;
    }
  }

  private dispatch(): void {
    // WHATWG: the last event ID is set when the event ends, whether or not it carries data.
    if (this.eventId !== undefined) this.lastEventId = this.eventId;
    if (this.data.length === 0) {
      this.resetEvent();
      return;
    }
    const out: SseEvent = { data: this.data.join("\n") };
    if (this.eventId !== undefined) out.id = this.eventId;
    if (this.eventType !== undefined) out.event = this.eventType;
    if (this.retry !== undefined) out.retry = this.retry;
    this.resetEvent();
    this.options.onEvent(out);
  }

  private resetEvent(): void {
    this.data = [];
    this.dataBytes = 0;
    this.eventType = undefined;
    this.eventId = undefined;
  }
}

/** Parses an event's `data` as JSON; throws {@link ParseError} (`MCPD_PARSE_ERROR`) naming the event when it is not JSON. */
export function sseJson(event: SseEvent): unknown {
  try {
    return JSON.parse(event.data);
  } catch (cause) {
    throw new ParseError(`Invalid JSON in SSE event${event.id ? ` ${event.id}` : ""}: ${(cause as Error).message}`, { cause });
  }
}

/** Reads every event from a complete SSE text (bounded like {@link SseReader}; oversized events are skipped). */
export function parseSseText(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  const reader = new SseReader({ onEvent: (e) => events.push(e) });
  reader.push(text);
  reader.end();
  return events;
}

/**
 * The seed's one-shot helper: takes the first non-empty `data:` event of an SSE body, falling back to
 * the whole text as plain JSON, and returns the parsed JSON-RPC envelope. Throws {@link ParseError}
 * (`MCPD_PARSE_ERROR`) if neither parses.
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
