import type { Stats } from "node:fs";
import { open, stat, type FileHandle } from "node:fs/promises";

/** Bounds of reading the daemon's log file. */
export const LOG_READ_DEFAULTS = {
  /** Most bytes read backwards to find the last N lines. */
  maxTailBytes: 8 * 1024 * 1024,
  /** Poll interval of `-f`, in ms. */
  followPollMs: 250,
  /** Most bytes read per poll of `-f` (a burst larger than this is read over several polls). */
  maxChunkBytes: 1024 * 1024,
} as const;

/**
 * The last `n` lines of a file (none for 0), reading backwards in chunks (at most `maxTailBytes`).
 * @returns the lines and the file size they end at; `undefined` when the file does not exist.
 */
export async function tailFile(path: string, n: number): Promise<{ lines: string[]; size: number; ino: number } | undefined> {
  let fh: FileHandle;
  try {
    fh = await open(path, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  try {
    const info = await fh.stat();
    const size = info.size;
    const chunk = 64 * 1024;
    let pos = size;
    let text = "";
    while (n > 0 && pos > 0 && size - pos < LOG_READ_DEFAULTS.maxTailBytes) {
      const len = Math.min(chunk, pos);
      pos -= len;
      const buf = Buffer.alloc(len);
      await fh.read(buf, 0, len, pos);
      text = buf.toString("utf8") + text;
      if (text.split("\n").length > n + 1) break;
    }
    const lines = text.split("\n");
    if (lines[lines.length - 1] === "") lines.pop();
    // The first line may be cut when we stopped reading mid-file; drop it unless it is the file's start.
    if (pos > 0) lines.shift();
    return { lines: n > 0 ? lines.slice(-n) : [], size, ino: info.ino };
  } finally {
    await fh.close();
  }
}

/**
 * Waits `ms`, or less when `signal` aborts (at once when it already has). Its abort listener is removed
 * either way: a poll loop that left one per wait would pile them up on its signal, which Node reports as
 * a MaxListenersExceededWarning once there are 11.
 */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * Follows a file like `tail -F`: calls `onLine` for each complete line appended after `offset`, and starts
 * over from the beginning when the file is replaced (rotation: a new inode) or truncated. Ends when
 * `signal` aborts. `options.pollMs` is the poll interval (default `LOG_READ_DEFAULTS.followPollMs`).
 */
export async function followFile(
  path: string,
  start: { size: number; ino: number },
  onLine: (line: string) => void,
  signal: AbortSignal,
  options: { pollMs?: number } = {},
): Promise<void> {
  let offset = start.size;
  let ino = start.ino;
  let partial = "";
  const pollMs = options.pollMs ?? LOG_READ_DEFAULTS.followPollMs;
  while (!signal.aborted) {
    await pause(pollMs, signal);
    if (signal.aborted) break;
    let info: Stats;
    try {
      info = await stat(path);
    } catch {
      continue; // Between rotation's rename and the new file's creation.
    }
    if (info.ino !== ino || info.size < offset) {
      ino = info.ino;
      offset = 0;
      partial = "";
    }
    if (info.size <= offset) continue;
    const fh = await open(path, "r");
    try {
      const len = Math.min(info.size - offset, LOG_READ_DEFAULTS.maxChunkBytes);
      const buf = Buffer.alloc(len);
      const { bytesRead } = await fh.read(buf, 0, len, offset);
      offset += bytesRead;
      const text = partial + buf.subarray(0, bytesRead).toString("utf8");
      const lines = text.split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) if (line !== "") onLine(line);
    } finally {
      await fh.close();
    }
  }
}

/**
 * The lines of `next` that were not in `prev`, for polling a bounded tail (a server's stderr ring):
 * the longest suffix of `prev` that is a prefix of `next` is the overlap; the rest is new. With no
 * overlap, all of `next` is new (more lines arrived than the tail holds).
 */
export function newTailLines(prev: readonly string[], next: readonly string[]): string[] {
  for (let k = Math.min(prev.length, next.length); k > 0; k--) {
    let match = true;
    for (let i = 0; i < k; i++) {
      if (prev[prev.length - k + i] !== next[i]) {
        match = false;
        break;
      }
    }
    if (match) return next.slice(k);
  }
  return [...next];
}
