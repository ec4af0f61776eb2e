import { PROTOCOL_DEFAULTS } from "./defaults.js";
import { MessageTooLargeError, ParseError } from "./errors.js";
import { quote } from "./quote.js";
import { concat, fieldName, SHORT_TEXT_BYTES } from "./sse-bytes.js";

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
  /** Called for each valid `retry:` field (ASCII digits only, at most 2^53 - 1), in milliseconds. */
  onRetry?: (retryMs: number) => void;
  /** Called for each comment line (`:` prefix; one following space is removed). */
  onComment?: (comment: string) => void;
  /**
   * Called once per event that outgrew `maxEventBytes` (`MCPD_MESSAGE_TOO_LARGE`), as soon as it does; the
   * rest of that event is skipped up to its blank line and the stream goes on. The error's size is how
   * much of the event had been read when the limit was passed (a lower bound of its real size).
   */
  onError?: (error: MessageTooLargeError) => void;
  /**
   * Largest event in bytes: all its lines (fields and comments), line endings not counted. A positive
   * integer. Default {@link PROTOCOL_DEFAULTS.maxLineBytes} (one SSE event carries one JSON-RPC message).
   */
  maxEventBytes?: number;
}

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
const encoder = new TextEncoder();
/** UTF-8 of U+FEFF: dropped once at the start of the stream, as WHATWG's UTF-8 decode does. */
const BOM = [0xef, 0xbb, 0xbf] as const;

/**
 * Incremental Server-Sent Events reader, the event-stream format of the WHATWG HTML standard (9.2.6):
 * CRLF, CR and LF line endings (a CR ending a chunk ends its line at once), multi-line `data:`, comments,
 * `event:`, `id:` without NUL (an id-only event still sets {@link lastEventId}), `retry:` digits, one
 * leading BOM dropped; plus a per-event size bound. Bytes in (a line is decoded as UTF-8 once it is
 * whole: CR and LF never occur inside a multi-byte character), events out by callback.
 *
 * Memory is bounded by `maxEventBytes` (plus the chunk being pushed).
 */
export class SseReader {
  /** The last event id seen (the value to send as `Last-Event-ID` on resumption); `""` after an empty `id:`. */
  lastEventId: string | undefined;
  private readonly options: SseReaderOptions;
  private readonly maxEventBytes: number;
  // ignoreBOM: a U+FEFF inside the stream is content (only the one at its start goes, in skipBom).
  private readonly decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  private retry: number | undefined;
  /** The current event's fields so far. */
  private data: string[] = [];
  private eventType = "";
  private eventId: string | undefined;
  /** Bytes of the current event read so far (its lines without their line endings). */
  private eventBytes = 0;
  /** The current line's bytes from earlier chunks (copied: a chunk is not kept for one line's sake). */
  private partial: Uint8Array[] = [];
  /** Bytes of the stream's start still to be compared with the BOM (0 once past it). */
  private bomLeft: number = BOM.length;
  /** Bytes of the current line read so far: a line ending after 0 bytes is a blank line (an event ends). */
  private lineBytes = 0;
  /** The previous chunk ended with CR: an LF starting the next chunk belongs to it. */
  private afterCR = false;
  /** Dropping an oversized event up to its blank line. */
  private skipping = false;

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
   * Never throws on content; exceptions from the callbacks propagate, and the reader is not to be used
   * after one.
   */
  push(chunk: string | Uint8Array): void {
    const bytes = typeof chunk === "string" ? encoder.encode(chunk) : chunk;
    const len = bytes.length;
    let pos = this.skipBom(bytes);
    // A CR ended the chunk before: the LF of its CRLF, if this chunk starts with one, belongs to that line.
    if (pos < len && this.afterCR) {
      if (bytes[pos] === LF) pos++;
      this.afterCR = false;
    }
    // Cached positions of the next LF and CR keep the scan linear in the chunk size.
    let lf = bytes.indexOf(LF, pos);
    let cr = bytes.indexOf(CR, pos);
    while (pos < len) {
      if (lf !== -1 && lf < pos) lf = bytes.indexOf(LF, pos);
      if (cr !== -1 && cr < pos) cr = bytes.indexOf(CR, pos);
      const eol = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      const end = eol === -1 ? len : eol;
      this.eventBytes += end - pos;
      this.lineBytes += end - pos;
      if (!this.skipping && this.eventBytes > this.maxEventBytes) this.tooLarge();
      if (eol === -1) {
        if (!this.skipping) this.partial.push(bytes.slice(pos, len));
        return;
      }
      this.lineEnded(bytes, pos, eol);
      if (bytes[eol] === LF) pos = eol + 1;
      else if (eol + 1 < len) pos = bytes[eol + 1] === LF ? eol + 2 : eol + 1;
      else {
        pos = len;
        this.afterCR = true;
      }
    }
  }

  /**
   * Ends the stream. Unlike a browser, a final event not followed by a blank line is still delivered
   * ({@link parseSSE} reads such bodies); an unfinished oversized one was already reported. A character
   * cut off at the very end reads as U+FFFD.
   */
  end(): void {
    const none = new Uint8Array(0);
    if (this.partial.length > 0 || this.lineBytes > 0) this.lineEnded(none, 0, 0);
    this.lineEnded(none, 0, 0);
    this.skipping = false;
    this.afterCR = false;
    this.bomLeft = 0;
  }

  /** Where this chunk's content starts: past the part of a BOM at the stream's start. */
  private skipBom(bytes: Uint8Array): number {
    let pos = 0;
    while (this.bomLeft > 0 && pos < bytes.length) {
      const expected = BOM[BOM.length - this.bomLeft];
      if (bytes[pos] !== expected) {
        // Not a BOM after all: the bytes taken for one belong to the first line.
        const taken = BOM.length - this.bomLeft;
        if (taken > 0) this.partial.push(Uint8Array.from(BOM.slice(0, taken)));
        this.eventBytes += taken;
        this.lineBytes += taken;
        this.bomLeft = 0;
        return pos;
      }
      this.bomLeft--;
      pos++;
    }
    return pos;
  }

  /** One whole line: `bytes[start..end)` in the current chunk, after the bytes of earlier chunks in `partial`. */
  private lineEnded(bytes: Uint8Array, start: number, end: number): void {
    const blank = this.lineBytes === 0;
    this.lineBytes = 0;
    if (this.skipping) {
      if (blank) {
        this.skipping = false;
        this.eventBytes = 0;
      }
      return;
    }
    if (this.partial.length > 0) {
      const line = concat(this.partial, bytes.subarray(start, end));
      this.partial = [];
      this.line(line, 0, line.length);
    } else if (blank) this.dispatch();
    else this.line(bytes, start, end);
  }

  /** A line that is not blank (indices, not a subarray: a view per line costs more than short lines do). */
  private line(bytes: Uint8Array, start: number, end: number): void {
    if (bytes[start] === COLON) {
      this.options.onComment?.(this.text(bytes, bytes[start + 1] === SPACE ? start + 2 : start + 1, end));
      return;
    }
    let colon = start;
    while (colon < end && bytes[colon] !== COLON) colon++;
    const name = fieldName(bytes, start, colon);
    if (name === undefined) return; // Any other field is ignored (WHATWG).
    const from = colon === end ? end : bytes[colon + 1] === SPACE ? colon + 2 : colon + 1;
    const value = this.text(bytes, Math.min(from, end), end);
    if (name === "data") this.data.push(value);
    else if (name === "event") this.eventType = value;
    else if (name === "id") {
      if (!value.includes("\0")) this.eventId = value;
    } else if (/^[0-9]+$/.test(value)) {
      // retry: digits only (WHATWG); one beyond 2^53 is not a usable delay.
      const ms = Number(value);
      if (Number.isSafeInteger(ms)) {
        this.retry = ms;
        this.options.onRetry?.(ms);
      }
    }
  }

  /** UTF-8 text of `bytes[start..end)`; a short ASCII run without TextDecoder, whose call costs more than it. */
  private text(bytes: Uint8Array, start: number, end: number): string {
    if (end - start <= SHORT_TEXT_BYTES) {
      let out = "";
      for (let i = start; i < end; i++) {
        const b = bytes[i] as number;
        if (b >= 0x80) return this.decoder.decode(bytes.subarray(start, end));
        out += String.fromCharCode(b);
      }
      return out;
    }
    return this.decoder.decode(bytes.subarray(start, end));
  }

  private dispatch(): void {
    const { data, eventType, eventId } = this;
    this.data = [];
    this.eventType = "";
    this.eventId = undefined;
    this.eventBytes = 0;
    // WHATWG: the last event ID is set when the event ends, whether or not it carries data.
    if (eventId !== undefined) this.lastEventId = eventId;
    // No data line: no event to deliver (WHATWG).
    if (data.length === 0) return;
    const out: SseEvent = { data: data.join("\n") };
    if (eventId !== undefined) out.id = eventId;
    if (eventType !== "") out.event = eventType;
    if (this.retry !== undefined) out.retry = this.retry;
    this.options.onEvent(out);
  }

  private tooLarge(): void {
    this.options.onError?.(new MessageTooLargeError(this.eventBytes, this.maxEventBytes, "SSE event"));
    // Drop what is held of this event (its fields and unfinished line), so memory stays bounded.
    this.data = [];
    this.eventType = "";
    this.eventId = undefined;
    this.partial = [];
    this.skipping = true;
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
 * The one-shot reader of a whole reply body (used by `callMCP`): takes the first non-empty `data:` event
 * of an SSE body, falling back to the whole text as plain JSON, and returns the parsed JSON-RPC envelope.
 * Throws {@link ParseError} (`MCPD_PARSE_ERROR`) if neither parses.
 */
export function parseSSE(text: string): unknown {
  const first = parseSseText(text).find((e) => e.data.length > 0);
  if (first) return sseJson(first);
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new ParseError(`Response is neither SSE nor JSON: ${quote(text, PROTOCOL_DEFAULTS.quotedTextChars)}`, { cause });
  }
}
