import { randomBytes } from "node:crypto";
import { closeSync, constants, fchmodSync, fstatSync, openSync, readSync, renameSync, rmSync, writeSync } from "node:fs";
import { fileKind, kindAt } from "./file-kind.js";
import { StateDirError } from "./state-dir.js";

/** Numbers this process's writes: two of them never share a temporary file, even in one millisecond. */
let writes = 0;

/**
 * Writes `data` as the whole content of `path`, mode 0600, as a NEW file: a temporary file in the same
 * directory, created exclusively (O_CREAT|O_EXCL|O_NOFOLLOW, a name no one else can have chosen: pid,
 * sequence number, random bytes), then renamed over `path`. So whatever was at `path` (a symbolic link, a
 * FIFO, a file another user owns or holds open) is replaced, never written through: a descriptor opened
 * on the old file never sees the new content, and a crash never leaves half a file. The one writer of
 * every private file the daemon keeps (the HTTP token, the OAuth store, the tool cache, the child
 * records, the pid file). Call only for a path in a directory that passed the directory checks.
 * @throws StateDirError (MCPD_UNSAFE_STATE_DIR) when `path` is a directory; the errno error otherwise
 *   (the temporary file is removed either way).
 */
export function writePrivateFile(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.${process.pid}.${++writes}.${randomBytes(4).toString("hex")}.tmp`;
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    try {
      // The umask may have taken bits away: the file is exactly 0600.
      fchmodSync(fd, 0o600);
      const buf = typeof data === "string" ? Buffer.from(data) : data;
      for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EISDIR" || code === "ENOTEMPTY" || code === "EEXIST") {
      throw new StateDirError(`cannot write ${path}: it is ${kindAt(path) ?? "a directory"}; remove it`, { cause: err });
    }
    throw err;
  }
}

/** The outcome of {@link readPrivateFile}. */
export type PrivateFileRead =
  | { kind: "missing" }
  | { kind: "file"; text: string /** Permission bits as found (before any tightening). */; mode: number }
  /** Not used: `reason` names the path and what is wrong ("is a FIFO (named pipe), not a regular file"). */
  | { kind: "unusable"; reason: string };

/** Options of {@link readPrivateFile}. */
export interface ReadPrivateFileOptions {
  /** Larger files are not read (unusable). */
  maxBytes: number;
  /** Make a file that group or others may read 0600 before reading it. Default false. */
  tighten?: boolean;
}

/**
 * Reads one of the daemon's private files without ever blocking or following a link: opened
 * O_RDONLY|O_NONBLOCK|O_NOFOLLOW (a FIFO at the path opens at once instead of waiting for a writer),
 * then the descriptor is checked: only a regular file owned by the current user, at most `maxBytes`, is
 * read. Anything else is "unusable", with the reason; the caller ignores it, and its next
 * {@link writePrivateFile} replaces it. Never throws.
 */
export function readPrivateFile(path: string, options: ReadPrivateFileOptions): PrivateFileRead {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { kind: "missing" };
    const kind = kindAt(path);
    const what = kind && kind !== "a regular file" ? `is ${kind}` : `cannot be opened (${code ?? (err as Error).message})`;
    return { kind: "unusable", reason: `${path} ${what}` };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { kind: "unusable", reason: `${path} is ${fileKind(st)}, not a regular file` };
    const uid = process.getuid?.();
    if (uid !== undefined && st.uid !== uid) return { kind: "unusable", reason: `${path} is owned by uid ${st.uid}, not ${uid}` };
    if (st.size > options.maxBytes) return { kind: "unusable", reason: `${path} is larger than ${options.maxBytes} bytes` };
    const mode = st.mode & 0o777;
    if (options.tighten && (mode & 0o077) !== 0) fchmodSync(fd, 0o600);
    // One byte more than allowed: a file that grew since fstat is refused too.
    const buf = Buffer.alloc(Math.min(st.size, options.maxBytes) + 1);
    let n = 0;
    while (n < buf.length) {
      const r = readSync(fd, buf, n, buf.length - n, n);
      if (r === 0) break;
      n += r;
    }
    if (n > options.maxBytes) return { kind: "unusable", reason: `${path} is larger than ${options.maxBytes} bytes` };
    return { kind: "file", text: buf.subarray(0, n).toString("utf8"), mode };
  } catch (err) {
    return { kind: "unusable", reason: `${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
  } finally {
    closeSync(fd);
  }
}
