import { writeSync } from "node:fs";
import type { SonicBoom } from "sonic-boom";

/**
 * The fields of sonic-boom 4's `SonicBoom` (utf8 mode) read here: its file, the text it holds, and the piece
 * a write of which is under way. sonic-boom is pinned to an exact version in the daemon's package.json;
 * daemon/test/infra/log-file.test.ts fails should a new version rename them.
 */
interface BoomState {
  fd: number;
  _writing: boolean;
  _writingBuf: string | Buffer;
  _bufs: Array<string | Buffer>;
  _len: number;
}

function state(boom: SonicBoom): BoomState {
  const s = boom as unknown as BoomState;
  if (!Array.isArray(s._bufs) || typeof s._len !== "number" || typeof s._writing !== "boolean") {
    throw new Error("sonic-boom's internals are not what this version of mcpd knows");
  }
  return s;
}

/** Lines (newlines) in what `boom` holds and has not handed to a write yet. */
export function heldLines(boom: SonicBoom): number {
  const s = state(boom);
  let n = 0;
  const pieces = s._writing ? s._bufs : [s._writingBuf, ...s._bufs];
  for (const piece of pieces) {
    const text = typeof piece === "string" ? piece : piece.toString("utf8");
    for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  }
  return n;
}

/**
 * Writes what `boom` holds to its file now, in order, with write(2), and stops at the first error, leaving
 * the rest held (and returning the error). Used at exit and after a fatal line, in place of sonic-boom's
 * `flushSync`, which retries a failed write every 100 ms until it succeeds: on a full disk (ENOSPC) the
 * daemon would never exit. A write already under way in the thread pool is left to finish (Node
 * completes the pool's work before the process exits): the lines written here may land before it.
 */
export function flushHeld(boom: SonicBoom): Error | undefined {
  const s = state(boom);
  if (!s._writing && s._writingBuf.length > 0) {
    s._bufs.unshift(s._writingBuf);
    s._writingBuf = "";
  }
  while (s._bufs.length > 0) {
    const head = s._bufs[0] as string | Buffer;
    const buf = typeof head === "string" ? Buffer.from(head) : head;
    let n: number;
    try {
      n = writeSync(s.fd, buf);
    } catch (err) {
      return err as Error;
    }
    s._len = Math.max(s._len - n, 0);
    if (n < buf.length) s._bufs[0] = buf.subarray(n);
    else s._bufs.shift();
  }
  return undefined;
}

/**
 * Takes out everything `boom` holds (the piece whose write failed first, then the rest, in order), leaving
 * it empty. Call only between writes: after sonic-boom emitted an error, or once it is given up.
 */
export function takeHeld(boom: SonicBoom): string {
  const s = state(boom);
  const pieces = s._writing ? s._bufs : [s._writingBuf, ...s._bufs];
  const text = pieces.map((p) => (typeof p === "string" ? p : p.toString("utf8"))).join("");
  if (!s._writing) s._writingBuf = "";
  s._bufs = [];
  s._len = s._writing ? s._writingBuf.length : 0;
  return text;
}

/** Whether `boom` holds nothing and has no write under way. */
export function isIdle(boom: SonicBoom): boolean {
  const s = state(boom);
  return !s._writing && s._len === 0;
}
