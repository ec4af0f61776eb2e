import { PROTOCOL_DEFAULTS } from "./defaults.js";
import { MessageTooLargeError, ParseError } from "./errors.js";

/** A line the decoder could not deliver. Later lines are unaffected. */
export type LineError = (ParseError | MessageTooLargeError) & { preview: string };

export interface JsonLineDecoderOptions {
  /** Largest line in bytes, excluding the newline. Default {@link PROTOCOL_DEFAULTS.maxLineBytes}. */
  maxLineBytes?: number;
  /** Called once per line that parsed as JSON, in order. */
  onValue: (value: unknown) => void;
  /** Called once per line that was oversized or not JSON. The stream goes on. */
  onError?: (error: LineError) => void;
}

const NEWLINE = 0x0a;
const CR = 0x0d;
const utf8 = new TextDecoder("utf-8", { fatal: false });
const EMPTY = new Uint8Array(0);

function previewOf(bytes: Uint8Array, limit: number): string {
  return utf8.decode(bytes.subarray(0, Math.min(bytes.length, limit)));
}

/**
 * Streaming decoder for newline-delimited JSON (MCP's stdio framing, and mcpd's socket framing).
 *
 * Chunks may split anywhere, including inside a multi-byte UTF-8 character: lines are cut on the 0x0A
 * byte, which never occurs inside a UTF-8 sequence, and decoded whole. A trailing `\r` is stripped and
 * blank lines are ignored. A line longer than `maxLineBytes` is dropped (its bytes are not kept while it
 * streams past) and reported once; an unparseable line is reported; both leave later lines intact.
 */
export class JsonLineDecoder {
  private readonly maxLineBytes: number;
  private readonly onValue: (value: unknown) => void;
  private readonly onError: (error: LineError) => void;
  private parts: Uint8Array[] = [];
  private partBytes = 0;
  /** Bytes of the current oversized line seen so far; -1 when not discarding. */
  private discarding = -1;
  private discardPreview = "";

  constructor(options: JsonLineDecoderOptions) {
    this.maxLineBytes = options.maxLineBytes ?? PROTOCOL_DEFAULTS.maxLineBytes;
    this.onValue = options.onValue;
    this.onError = options.onError ?? (() => {});
  }

  /** Bytes held for an incomplete line. Bounded by `maxLineBytes`. */
  get bufferedBytes(): number {
    return this.partBytes;
  }

  /** Feeds a chunk. Strings are encoded as UTF-8. Never throws on content. */
  push(chunk: Uint8Array | string): void {
    const bytes = typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk;
    let start = 0;
    const len = bytes.length;
    while (start < len) {
      const nl = bytes.indexOf(NEWLINE, start);
      if (nl === -1) {
        this.keep(bytes.subarray(start));
        return;
      }
      if (this.discarding >= 0) {
        this.finishOversized(this.discarding + (nl - start));
      } else if (this.partBytes === 0) {
        this.line(bytes.subarray(start, nl));
      } else {
        this.keep(bytes.subarray(start, nl));
        if (this.discarding >= 0) this.finishOversized(this.discarding);
        else this.line(this.take());
      }
      start = nl + 1;
    }
  }

  /** Ends the stream: a final line without a newline is still delivered. */
  end(): void {
    if (this.discarding >= 0) this.finishOversized(this.discarding);
    else if (this.partBytes > 0) this.line(this.take());
  }

  private keep(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (this.discarding >= 0) {
      this.discarding += bytes.length;
      return;
    }
    if (this.partBytes + bytes.length > this.maxLineBytes + 1) {
      // +1 leaves room for a trailing \r that will be stripped.
      const head = this.partBytes > 0 ? this.take() : bytes;
      this.discardPreview = previewOf(head, PROTOCOL_DEFAULTS.previewBytes);
      this.discarding = (head === bytes ? 0 : head.length) + bytes.length;
      this.parts = [];
      this.partBytes = 0;
      return;
    }
    // Copy: the caller may reuse its buffer (Node streams do not, but sockets in other runtimes may).
    this.parts.push(bytes.slice());
    this.partBytes += bytes.length;
  }

  private take(): Uint8Array {
    const parts = this.parts;
    let out: Uint8Array;
    if (parts.length === 1) out = parts[0] ?? EMPTY;
    else {
      out = new Uint8Array(this.partBytes);
      let off = 0;
      for (const p of parts) {
        out.set(p, off);
        off += p.length;
      }
    }
    this.parts = [];
    this.partBytes = 0;
    return out;
  }

  private finishOversized(size: number): void {
    const err = new MessageTooLargeError(size, this.maxLineBytes, "Line") as LineError;
    err.preview = this.discardPreview;
    this.discarding = -1;
    this.discardPreview = "";
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
    const text = utf8.decode(end === bytes.length ? bytes : bytes.subarray(0, end));
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (cause) {
      const preview = text.slice(0, PROTOCOL_DEFAULTS.previewBytes);
      const err = new ParseError(`Invalid JSON line: ${(cause as Error).message}`, { cause }) as LineError;
      err.preview = preview;
      this.onError(err);
      return;
    }
    this.onValue(value);
  }
}

/**
 * Encodes one message as exactly one line. `JSON.stringify` escapes every newline inside strings, so
 * the only `\n` is the terminator.
 */
export function encodeLine(message: unknown): string {
  return JSON.stringify(message) + "\n";
}
