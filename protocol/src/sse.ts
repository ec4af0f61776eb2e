import { createParser, type EventSourceMessage, type EventSourceParser } from "eventsource-parser";
import { PROTOCOL_DEFAULTS } from "./defaults.js";
import { MessageTooLargeError, ParseError } from "./errors.js";
import { quote } from "./quote.js";

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
const encoder = new TextEncoder();

/**
 * An empty `data` line fed to the parser at the start of every event. eventsource-parser dispatches
 * only events with data and keeps no last event ID, so an `id:` in an event without data (which WHATWG
 * says must still set the last event ID) would be lost. With this line every event is dispatched, with
 * `data` = `""` when the stream sent no data line and `"\n" + real data` otherwise.
 */
const EVENT_START = "data:\n";

/**
 * Incremental Server-Sent Events reader. The event-stream format (CRLF, CR and LF line endings,
 * multi-line `data:`, comments, `event:`, `id:` without NUL, `retry:` digits) is parsed by
 * eventsource-parser; this class adds what that library lacks: bytes in (UTF-8 decoded across chunk
 * splits, a leading BOM dropped), a per-event size bound, the last event ID of events without data,
 * and immediate dispatch when a chunk ends in CR. Feed it with {@link push}; events arrive by callback.
 *
 * Memory is bounded by `maxEventBytes` (plus the chunk being pushed).
 */
export class SseReader {
  /** The last event id seen (the value to send as `Last-Event-ID` on resumption); `""` after an empty `id:`. */
  lastEventId: string | undefined;
  private readonly options: SseReaderOptions;
  private readonly maxEventBytes: number;
  private readonly parser: EventSourceParser;
  // Default ignoreBOM (false): the decoder drops one U+FEFF at the start of the stream, as WHATWG asks.
  // eventsource-parser only drops a BOM given as the three chars "\xEF\xBB\xBF" (undecoded bytes), so a
  // decoded "\uFEFFdata: x" would be an unknown field there.
  private readonly decoder = new TextDecoder("utf-8");
  private retry: number | undefined;
  /** The parser has been fed EVENT_START for the event it is reading. */
  private started = false;
  /** Bytes of the current event read so far (its lines without their line endings). */
  private eventBytes = 0;
  /** Bytes of the current line read so far: a line ending after 0 bytes is a blank line (an event ends). */
  private lineBytes = 0;
  /** No line has ended yet (see push: the first line is fed on its own). */
  private firstLine = true;
  /** The previous chunk ended with CR, handed to the parser as CRLF: an LF starting the next chunk belongs to it. */
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
    const { onComment } = options;
    this.parser = createParser({
      onEvent: (message) => this.dispatch(message),
      onRetry: (ms) => {
        // The library accepts any run of digits; one beyond 2^53 is not a usable delay.
        if (!Number.isSafeInteger(ms)) return;
        this.retry = ms;
        this.options.onRetry?.(ms);
      },
      ...(onComment ? { onComment } : {}),
      // Unknown fields and invalid `retry:` values are to be ignored (WHATWG), not errors.
      onError: () => {},
      // No maxBufferSize: it counts UTF-16 units after a whole chunk is parsed and then refuses all input
      // until reset(); the bound here is in bytes, checked before feeding, and skips only the one event.
    });
  }

  /** The latest `retry:` in milliseconds, if the stream sent one. */
  get retryMs(): number | undefined {
    return this.retry;
  }

  /**
   * Feeds a chunk. Strings are encoded as UTF-8 (a string chunk must not end inside a surrogate pair).
   * Never throws on content; exceptions from the callbacks propagate, and the reader is not to be used
   * after one (eventsource-parser keeps a half-dispatched event).
   *
   * The bytes are scanned for line endings only to count each event's size and find where it ends; the
   * lines themselves are parsed by eventsource-parser, fed one whole event (or chunk tail) at a time.
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
    /** Start of the bytes of this chunk not yet fed to the parser (or skipped). */
    let from = pos;
    // Cached positions of the next LF and CR keep the scan linear in the chunk size.
    let lf = bytes.indexOf(LF, pos);
    let cr = bytes.indexOf(CR, pos);
    while (pos < len) {
      if (lf !== -1 && lf < pos) lf = bytes.indexOf(LF, pos);
      if (cr !== -1 && cr < pos) cr = bytes.indexOf(CR, pos);
      const eol = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      const size = (eol === -1 ? len : eol) - pos;
      const blank = eol !== -1 && size === 0 && this.lineBytes === 0;
      this.lineBytes += size;
      this.eventBytes += size;
      if (!this.skipping && this.eventBytes > this.maxEventBytes) {
        // Lines before this one fit; parse them (their comments and retry are not chunking-dependent).
        this.feed(bytes.subarray(from, pos));
        this.tooLarge();
      }
      if (eol === -1) break;
      if (bytes[eol] !== CR) pos = eol + 1;
      else if (eol + 1 < len) pos = bytes[eol + 1] === LF ? eol + 2 : eol + 1;
      else {
        pos = len;
        this.afterCR = true;
      }
      this.lineBytes = 0;
      if (blank) {
        if (this.skipping) {
          // The parser was reset and needs no blank line; decoding it only flushes out of the decoder any
          // partial character left by the dropped event's fed part, which would otherwise prefix the next line.
          this.decoder.decode(bytes.subarray(eol, pos), { stream: true });
          this.skipping = false;
        } else {
          this.feed(bytes.subarray(from, pos));
        }
        this.eventBytes = 0;
        from = pos;
      } else if (this.firstLine && !this.skipping) {
        // A line that is only the BOM is blank to the parser (after decoding) but not to the byte count
        // above; feeding the first line alone lets feed() start the next event with EVENT_START anyway.
        this.feed(bytes.subarray(from, pos));
        from = pos;
      }
      this.firstLine = false;
    }
    if (!this.skipping) this.feed(bytes.subarray(from, len));
  }

  /**
   * Ends the stream. Unlike a browser, a final event not followed by a blank line is still delivered
   * ({@link parseSSE} reads such bodies); an unfinished oversized one was already reported.
   */
  end(): void {
    // Flush: a partial character at the very end decodes to U+FFFD (WHATWG decoding), then the line ends.
    const rest = this.decoder.decode();
    if (this.skipping) this.reset();
    else this.feedText(`${rest}\n\n`);
    this.skipping = false;
    this.afterCR = false;
    this.lineBytes = 0;
    this.eventBytes = 0;
  }

  private tooLarge(): void {
    this.options.onError?.(new MessageTooLargeError(this.eventBytes, this.maxEventBytes, "SSE event"));
    // Drop what the parser holds of this event (its data and unfinished line), so memory stays bounded.
    this.reset();
    this.skipping = true;
  }

  private reset(): void {
    this.parser.reset();
    this.started = false;
  }

  private feed(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    let text = this.decoder.decode(bytes, { stream: true });
    if (text === "") return;
    // eventsource-parser keeps a chunk's final CR until it sees whether an LF follows, which holds an
    // event ending in CR back until more bytes arrive (forever on a quiet stream). WHATWG: a CR ends the
    // line; it is handed over as CRLF, and push() drops an LF starting the next chunk (afterCR).
    if (text.charCodeAt(text.length - 1) === CR) text += "\n";
    this.feedText(text);
  }

  private feedText(text: string): void {
    if (!this.started) {
      // Always at a line start here: the stream's start, after reset(), or right after a dispatch.
      // Fed first, it also uses up the library's first-chunk check for "\xEF\xBB\xBF" (see decoder).
      this.parser.feed(EVENT_START);
      this.started = true;
    }
    this.parser.feed(text);
  }

  private dispatch(message: EventSourceMessage): void {
    const started = this.started;
    this.started = false;
    // WHATWG: the last event ID is set when the event ends, whether or not it carries data.
    if (message.id !== undefined) this.lastEventId = message.id;
    let data = message.data;
    if (started) {
      // Only EVENT_START: the stream sent no data line, so there is no event to deliver (WHATWG).
      if (data === "") return;
      data = data.slice(1);
    }
    const out: SseEvent = { data };
    if (message.id !== undefined) out.id = message.id;
    if (message.event !== undefined) out.event = message.event;
    if (this.retry !== undefined) out.retry = this.retry;
    this.options.onEvent(out);
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
