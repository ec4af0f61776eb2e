import { PROTOCOL_DEFAULTS } from "./defaults.js";
import { MessageTooLargeError, ParseError } from "./errors.js";
import { CR, EMPTY, LineStarts, NEWLINE, lineAt, previewOf } from "./line-bytes.js";
import { LinePieces } from "./line-pieces.js";
import { releaseBytes } from "./releasable-bytes.js";
import { deliverKept } from "./raw-results.js";

/** A line the decoder could not deliver. Later lines are unaffected. */
export type LineError = (ParseError | MessageTooLargeError) & { preview: string };

export interface JsonLineDecoderOptions {
  /**
   * Largest line in bytes, excluding the newline and an optional `\r` before it. A positive integer.
   * Default {@link PROTOCOL_DEFAULTS.maxLineBytes}.
   */
  maxLineBytes?: number;
  /** Called once per line that parsed as JSON, in order. */
  onValue: (value: unknown) => void;
  /**
   * Keep the text of each answer's `result` beside the parsed object, so that `encodeRelayedLine` can
   * pass the answer on as written (a relay's upstream side; see raw-results.ts). Default false.
   */
  keepResults?: boolean;
  /** Called once per line that was oversized (`MCPD_MESSAGE_TOO_LARGE`) or not JSON (`MCPD_PARSE_ERROR`). The stream goes on. */
  onError?: (error: LineError) => void;
}

const utf8 = new TextDecoder("utf-8", { fatal: false });
/** For a run of whole lines decoded at once: keeps a U+FEFF at the run's start, as at any line's start. */
const utf8KeepBom = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
const BOM = 0xfeff;
const encoder = new TextEncoder();
const CR_BYTE = Uint8Array.of(CR);

/**
 * Streaming decoder for newline-delimited JSON (MCP's stdio framing, and mcpd's socket framing).
 *
 * Chunks may split anywhere, including inside a multi-byte UTF-8 character: lines are cut on the 0x0A
 * byte, which never occurs inside a UTF-8 sequence, and decoded whole (the whole lines of one chunk,
 * when nothing is held and they fit within `maxLineBytes` together, in one call, each as if alone). A
 * trailing `\r` is stripped and blank lines are ignored. A line longer than `maxLineBytes` is dropped
 * (its bytes are not kept while it streams past, so {@link bufferedBytes} never exceeds `maxLineBytes`)
 * and reported once; an unparseable line is reported; both leave later lines intact.
 *
 * Exceptions thrown by `onValue`/`onError` propagate out of {@link push}; the rest of that chunk is then
 * lost, so handlers should catch their own errors.
 *
 * @throws RangeError from the constructor when `maxLineBytes` is not a positive integer.
 */
export class JsonLineDecoder {
  private readonly maxLineBytes: number;
  private readonly onValue: (value: unknown) => void;
  private readonly onError: (error: LineError) => void;
  private readonly keepResults: boolean;
  /** The incomplete line (see line-pieces.ts: about its own size however finely it arrives). */
  private readonly pieces = new LinePieces();
  /**
   * A `\r` that arrived as byte maxLineBytes+1 of the current line. Held as a flag, not a byte, so a line
   * of exactly maxLineBytes sent with CRLF is accepted without the buffer ever exceeding the limit.
   */
  private pendingCR = false;
  /** Bytes of the current oversized line seen so far; -1 when not discarding. */
  private discarding = -1;
  /** The last discarded byte was `\r`: not counted in the reported size if the line ends right after it. */
  private discardEndsCR = false;
  private discardPreview = "";
  private ended = 0;

  constructor(options: JsonLineDecoderOptions) {
    const max = options.maxLineBytes ?? PROTOCOL_DEFAULTS.maxLineBytes;
    if (!Number.isSafeInteger(max) || max < 1) {
      throw new RangeError(`JsonLineDecoder: maxLineBytes must be a positive integer, got ${String(max)}`);
    }
    this.maxLineBytes = max;
    this.onValue = options.onValue;
    this.keepResults = options.keepResults === true;
    this.onError = options.onError ?? (() => {});
  }

  /** Bytes held for an incomplete line. Never more than `maxLineBytes`. */
  get bufferedBytes(): number {
    return this.pieces.bytes;
  }

  /** Memory kept alive for the incomplete line, in bytes (line-pieces.ts): what a budget of memory should count. */
  get retainedBytes(): number {
    return this.pieces.retainedBytes;
  }

  /**
   * Whether a line has begun and not ended: bytes held, or an oversized line being skipped (which holds
   * nothing). False between lines.
   */
  get inLine(): boolean {
    return this.pieces.bytes > 0 || this.pendingCR || this.discarding >= 0;
  }

  /** Lines ended so far (newlines seen: lines delivered, reported, or blank). */
  get linesEnded(): number {
    return this.ended;
  }

  /** Drops the incomplete line, if any (its memory with it). Later pushes start a new line. */
  clear(): void {
    this.pieces.clear();
    this.pendingCR = false;
    this.discarding = -1;
    this.discardPreview = "";
  }

  /**
   * Feeds a chunk. Strings are encoded as UTF-8 (so a string chunk must not end inside a surrogate pair;
   * pass bytes when a split can fall anywhere). Never throws on content.
   */
  push(chunk: Uint8Array | string): void {
    const bytes = typeof chunk === "string" ? encoder.encode(chunk) : chunk;
    let start = 0;
    const len = bytes.length;
    /** The chunk's last newline, found on first need (-2: not yet). */
    let last = -2;
    while (start < len) {
      const nl = bytes.indexOf(NEWLINE, start);
      if (nl === -1) {
        this.keep(bytes.subarray(start));
        return;
      }
      if (!this.inLine) {
        // Fast path: whole lines inside this chunk are parsed in place, without a copy. Several of them
        // (a busy connection's read) are decoded in one call, which costs about what decoding one does.
        if (last === -2) last = nl + 1 < len ? bytes.lastIndexOf(NEWLINE) : nl;
        if (last > nl && last - start <= this.maxLineBytes) {
          const stopped = this.lines(bytes.subarray(start, last));
          start = stopped === -1 ? last + 1 : start + stopped;
          continue;
        }
        this.ended++;
        this.line(bytes.subarray(start, nl));
        start = nl + 1;
        continue;
      }
      this.ended++;
      if (this.discarding >= 0) {
        this.endOversized(bytes.subarray(start, nl));
      } else {
        this.finish(bytes.subarray(start, nl));
      }
      start = nl + 1;
    }
  }

  /** Ends the stream: a final line without a newline is still delivered. The decoder is then empty. */
  end(): void {
    if (this.discarding >= 0) this.endOversized(EMPTY);
    else if (this.pieces.bytes > 0 || this.pendingCR) this.lineTaken();
  }

  /** The held line ends with `last` (the bytes before its newline): joined once, without holding `last` first. */
  private finish(last: Uint8Array): void {
    const n = last.length;
    if (n > 0) {
      const total = this.pieces.bytes + (this.pendingCR ? 1 : 0) + n;
      // Over the limit, unless by just the CR of a CRLF (line() strips it).
      if (total > this.maxLineBytes && (this.pendingCR || total !== this.maxLineBytes + 1 || last[n - 1] !== CR)) {
        this.keep(last);
        this.endOversized(EMPTY);
        return;
      }
    }
    this.lineTaken(last);
  }

  /**
   * Delivers the held line and `last`, then gives back its joined bytes. A held CR goes back at the end (never
   * with `last`: finish() takes that as oversized): line() strips one trailing CR however chunked (`\r\r\n`).
   */
  private lineTaken(last: Uint8Array = EMPTY): void {
    const bytes = this.pieces.take(this.pendingCR ? CR_BYTE : last);
    this.pendingCR = false;
    this.line(bytes);
    releaseBytes(bytes);
  }

  private keep(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (this.discarding >= 0) {
      this.discarding += bytes.length;
      this.discardEndsCR = bytes[bytes.length - 1] === CR;
      return;
    }
    const total = this.pieces.bytes + (this.pendingCR ? 1 : 0) + bytes.length;
    if (total > this.maxLineBytes) {
      if (!this.pendingCR && total === this.maxLineBytes + 1 && bytes[bytes.length - 1] === CR) {
        // Possibly the CR of a CRLF ending a line of exactly maxLineBytes; decided when the next byte comes.
        this.pieces.store(bytes.subarray(0, bytes.length - 1), this.maxLineBytes);
        this.pendingCR = true;
        return;
      }
      // Only the preview's bytes are copied: joining the held parts would allocate up to maxLineBytes
      // (4 MiB in the daemon) per oversized line, only to keep its first 200 bytes.
      const head = this.pieces.head(PROTOCOL_DEFAULTS.previewBytes);
      this.pieces.clear();
      this.pendingCR = false;
      this.discardPreview = previewOf(head, PROTOCOL_DEFAULTS.previewBytes, bytes);
      this.discarding = total;
      this.discardEndsCR = bytes[bytes.length - 1] === CR;
      return;
    }
    this.pieces.store(bytes, this.maxLineBytes);
  }

  /** The oversized line ends after `tail`; its size excludes a trailing `\r`, as for any other line. */
  private endOversized(tail: Uint8Array): void {
    const endsCR = tail.length > 0 ? tail[tail.length - 1] === CR : this.discardEndsCR;
    this.finishOversized(this.discarding + tail.length - (endsCR ? 1 : 0));
  }

  private finishOversized(size: number): void {
    const err = new MessageTooLargeError(size, this.maxLineBytes, "Line") as LineError;
    err.preview = this.discardPreview;
    this.discarding = -1;
    this.discardPreview = "";
    this.onError(err);
  }

  /**
   * Delivers the lines of `run`: two or more whole lines and the newlines between them (none after the
   * last), `run.length` at most `maxLineBytes`, so no line in it is oversized. Decoded in one call and cut
   * on `\n` in the text (a `\n` byte never occurs inside a UTF-8 sequence, so each line's text is what
   * decoding it alone gives), with what {@link line} does to each: one trailing CR stripped, one leading
   * byte order mark dropped (as a fresh decode drops it), a blank line skipped.
   *
   * A line's bytes are found again only when needed (an error's preview; a long line whose text is kept
   * beside its result, which must not hold the whole run's text alive), by a cursor that only moves
   * forward: linear in the run however many lines need it.
   * @returns -1 when every line was delivered; else the offset in `run` of the first line not delivered,
   * because a callback pushed into this decoder and it now holds part of a line (the rest then goes the
   * per-line way, joined to what is held, as if the lines had come one by one).
   */
  private lines(run: Uint8Array): number {
    const text = utf8KeepBom.decode(run);
    let a = 0;
    let index = 0;
    // Made only when a line's bytes are needed: the usual run needs none.
    let bytesOf: LineStarts | undefined;
    for (;;) {
      const nl = text.indexOf("\n", a);
      this.ended++;
      let b = nl === -1 ? text.length : nl;
      if (b > a && text.charCodeAt(b - 1) === CR) b--;
      if (b > a) {
        const from = text.charCodeAt(a) === BOM ? a + 1 : a;
        if (this.keepResults && b - from >= PROTOCOL_DEFAULTS.keepResultMinChars)
          this.line(lineAt(run, (bytesOf ??= new LineStarts(run)).at(index), false));
        else {
          const err = this.parse(text.slice(from, b));
          if (err !== undefined) this.report(err, lineAt(run, (bytesOf ??= new LineStarts(run)).at(index), true));
        }
      }
      if (nl === -1) return -1;
      a = nl + 1;
      index++;
      if (this.inLine) return (bytesOf ??= new LineStarts(run)).at(index);
    }
  }

  /** Parses one line's text and delivers the value; returns the error (to report) when it is not JSON. */
  private parse(text: string): LineError | undefined {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (cause) {
      return new ParseError(`Invalid JSON line: ${(cause as Error).message}`, { cause }) as LineError;
    }
    if (this.keepResults) deliverKept(value, text, this.onValue);
    else this.onValue(value);
    return undefined;
  }

  /** Reports `err` for the line `body` (its bytes, without the newline and CR), with its preview. */
  private report(err: LineError, body: Uint8Array): void {
    err.preview = previewOf(body, PROTOCOL_DEFAULTS.previewBytes);
    this.onError(err);
  }

  private line(bytes: Uint8Array): void {
    let end = bytes.length;
    if (end > 0 && bytes[end - 1] === CR) end--;
    if (end === 0) return;
    if (end > this.maxLineBytes) {
      this.discardPreview = previewOf(bytes, PROTOCOL_DEFAULTS.previewBytes);
      this.finishOversized(end);
      return;
    }
    const body = end === bytes.length ? bytes : bytes.subarray(0, end);
    const err = this.parse(utf8.decode(body));
    if (err !== undefined) this.report(err, body);
  }
}
