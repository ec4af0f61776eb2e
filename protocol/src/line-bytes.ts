/** Byte-level helpers of the JSONL decoder (`jsonl.ts`): finding a line in a run, showing its start. */

export const NEWLINE = 0x0a;
export const CR = 0x0d;
export const EMPTY = new Uint8Array(0);
const utf8 = new TextDecoder("utf-8", { fatal: false });

/** The first `limit` bytes of `head` then `tail`, decoded (a cut character becomes U+FFFD). */
export function previewOf(head: Uint8Array, limit: number, tail: Uint8Array = EMPTY): string {
  if (head.length >= limit || tail.length === 0) return utf8.decode(head.subarray(0, Math.min(head.length, limit)));
  const out = new Uint8Array(Math.min(limit, head.length + tail.length));
  out.set(head);
  out.set(tail.subarray(0, out.length - head.length), head.length);
  return utf8.decode(out);
}

/** The line of `run` that starts at `start`, without its newline, and without its trailing CR if `dropCR`. */
export function lineAt(run: Uint8Array, start: number, dropCR: boolean): Uint8Array {
  const nl = run.indexOf(NEWLINE, start);
  let end = nl === -1 ? run.length : nl;
  if (dropCR && end > start && run[end - 1] === CR) end--;
  return run.subarray(start, end);
}

/**
 * Where the lines of `run` start, found by a cursor that only moves forward: asked in increasing order of
 * lines (as a decoder meets them), every byte of the run is searched at most once, however many are asked.
 */
export class LineStarts {
  private line = 0;
  private start = 0;

  constructor(private readonly run: Uint8Array) {}

  /** The offset of line `index` (counted from 0, cut on `\n`); `index` never less than the last one asked. */
  at(index: number): number {
    for (; this.line < index; this.line++) this.start = this.run.indexOf(NEWLINE, this.start) + 1;
    return this.start;
  }
}
