import { randomBytes } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { writePrivateFile } from "../infra/state-dir.js";

/** A token file's expected form: base64url, at least 32 characters (192 bits). */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{32,512}$/;

/**
 * The text of `path` when it is a regular file of ours (not a symbolic link), only ours to read or write,
 * and at most `maxBytes` long; else undefined. A file others could read or write is nothing mcpd trusts.
 */
export function readPrivateText(path: string, maxBytes: number): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    const uid = process.getuid?.();
    if (!st.isFile() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o077) !== 0 || st.size > maxBytes) return undefined;
    const buf = Buffer.alloc(st.size);
    let n = 0;
    while (n < buf.length) {
      const r = readSync(fd, buf, n, buf.length - n, n);
      if (r === 0) break;
      n += r;
    }
    return buf.subarray(0, n).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/** Reads a token file: the token when it is a private file of ours holding a well-formed token. */
function readToken(path: string): string | undefined {
  const token = readPrivateText(path, 1024)?.trim();
  return token !== undefined && TOKEN_PATTERN.test(token) ? token : undefined;
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
