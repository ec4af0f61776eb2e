import { randomBytes } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { writePrivateFile } from "../infra/state-dir.js";

/** A token file's expected form: base64url, at least 32 characters (192 bits). */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{32,512}$/;

/** Reads a token file: the token when it is a regular file of ours, only ours to read, holding a well-formed token. */
function readToken(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    const uid = process.getuid?.();
    if (!st.isFile() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o077) !== 0 || st.size > 1024) return undefined;
    const buf = Buffer.alloc(st.size);
    let n = 0;
    while (n < buf.length) {
      const r = readSync(fd, buf, n, buf.length - n, n);
      if (r === 0) break;
      n += r;
    }
    const token = buf.subarray(0, n).toString("utf8").trim();
    return TOKEN_PATTERN.test(token) ? token : undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * The HTTP front end's bearer token, kept in `path` (mode 0600) so it survives restarts and client configs
 * keep working. A missing, malformed, foreign or group/world-readable file is replaced by a new random
 * token (32 bytes, base64url): a token anyone else could have read is no secret.
 * Call only for a path in a directory that passed the state directory's checks.
 */
export function loadOrCreateToken(path: string): string {
  const existing = readToken(path);
  if (existing !== undefined) return existing;
  const token = randomBytes(32).toString("base64url");
  writePrivateFile(path, `${token}\n`);
  return token;
}
