import { StringDecoder } from "node:string_decoder";

export interface StderrRingOptions {
  /** Most lines kept. Default 200. */
  maxLines?: number;
  /** Most bytes (UTF-8) kept over all lines; also the longest single line kept. Default 64 KiB. */
  maxBytes?: number;
  /** Called once per complete line, in order (after truncation). */
  onLine?: (line: string) => void;
}

/** What a line cut to its byte bound ends with. */
export const TRUNCATED = "…[truncated]";
const TRUNCATED_BYTES = Buffer.byteLength(TRUNCATED);

/**
 * A bounded buffer of the last lines a child wrote to stderr.
 *
 * Chunks may split anywhere, including inside a UTF-8 character. A trailing `\r` is stripped. A line
 * longer than `maxBytes` is cut (and marked) rather than buffered without bound, so a child that writes
 * megabytes without a newline costs at most `maxBytes`. When either bound is passed the oldest lines go.
 */
export class StderrRing {
  private readonly maxLines: number;
  private readonly maxBytes: number;
  private readonly onLine: ((line: string) => void) | undefined;
  private readonly decoder = new StringDecoder("utf8");
  /** Circular storage: `count` lines starting at `head`. */
  private readonly lines: string[];
  private readonly sizes: number[];
  private head = 0;
  private count = 0;
  private bytes = 0;
  /** The incomplete last line, and whether it was already cut. */
  private partial = "";
  private partialCut = false;

  constructor(options: StderrRingOptions = {}) {
    this.maxLines = Math.max(1, Math.floor(options.maxLines ?? 200));
    this.maxBytes = Math.max(1, Math.floor(options.maxBytes ?? 64 * 1024));
    this.onLine = options.onLine;
    this.lines = new Array<string>(this.maxLines);
    this.sizes = new Array<number>(this.maxLines).fill(0);
  }

  /** Lines currently held. */
  get lineCount(): number {
    return this.count;
  }

  /** UTF-8 bytes currently held in complete lines. */
  get byteCount(): number {
    return this.bytes;
  }

  /** Feeds a chunk of the stream. Never throws on content. */
  push(chunk: Uint8Array | string): void {
    const text = typeof chunk === "string" ? chunk : this.decoder.write(chunk as Buffer);
    let start = 0;
    for (;;) {
      const nl = text.indexOf("\n", start);
      if (nl === -1) {
        this.addPartial(text.slice(start));
        return;
      }
      this.addPartial(text.slice(start, nl));
      this.flushPartial();
      start = nl + 1;
    }
  }

  /** Ends the stream: a last line without a newline is kept. */
  end(): void {
    this.addPartial(this.decoder.end());
    if (this.partial.length > 0 || this.partialCut) this.flushPartial();
  }

  /** The last `n` lines (default: all held), oldest first. */
  tail(n: number = this.count): string[] {
    const take = Math.max(0, Math.min(Math.floor(n), this.count));
    const out = new Array<string>(take);
    const first = this.head + this.count - take;
    for (let i = 0; i < take; i++) out[i] = this.lines[(first + i) % this.maxLines] as string;
    return out;
  }

  private addPartial(text: string): void {
    if (text.length === 0 || this.partialCut) return;
    this.partial += text;
    // Length in UTF-16 units is a lower bound of the UTF-8 size; measure exactly only when close.
    if (this.partial.length * 3 > this.maxBytes && Buffer.byteLength(this.partial) > this.maxBytes) {
      this.partial = cutToBytes(this.partial, Math.max(0, this.maxBytes - TRUNCATED_BYTES)) + TRUNCATED;
      this.partialCut = true;
    }
  }

  private flushPartial(): void {
    let line = this.partial;
    this.partial = "";
    this.partialCut = false;
    if (line.endsWith("\r")) line = line.slice(0, -1);
    const size = Buffer.byteLength(line);
    while (this.count > 0 && (this.count >= this.maxLines || this.bytes + size > this.maxBytes)) this.dropOldest();
    const slot = (this.head + this.count) % this.maxLines;
    this.lines[slot] = line;
    this.sizes[slot] = size;
    this.count++;
    this.bytes += size;
    this.onLine?.(line);
  }

  private dropOldest(): void {
    this.bytes -= this.sizes[this.head] as number;
    this.lines[this.head] = "";
    this.head = (this.head + 1) % this.maxLines;
    this.count--;
  }
}

/** The longest prefix of `text` whose UTF-8 encoding fits in `maxBytes`, never splitting a character. */
export function cutToBytes(text: string, maxBytes: number): string {
  const buf = Buffer.from(text, "utf8");
  if (buf.length <= maxBytes) return text;
  let end = Math.max(0, maxBytes);
  // Step back over UTF-8 continuation bytes (10xxxxxx) so the cut lands on a character boundary.
  while (end > 0 && ((buf[end] as number) & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString("utf8");
}
