import { randomBytes } from "node:crypto";
import { readPrivateFile, writePrivateFile } from "../infra/private-file.js";

/** A token file's expected form: base64url, at least 32 characters (192 bits). */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{32,512}$/;

/** Largest token file read, in bytes. */
const MAX_TOKEN_FILE_BYTES = 1024;

/** Reads a token file: the token when it is a regular file of ours, only ours to read, holding a well-formed token. */
function readToken(path: string): string | undefined {
  const read = readPrivateFile(path, { maxBytes: MAX_TOKEN_FILE_BYTES });
  if (read.kind !== "file" || (read.mode & 0o077) !== 0) return undefined;
  const token = read.text.trim();
  return TOKEN_PATTERN.test(token) ? token : undefined;
}

/**
 * The HTTP front end's bearer token, kept in `path` (mode 0600) so it survives restarts and client configs
 * keep working. A missing, malformed, foreign or group/world-readable file, or anything that is not a
 * regular file (a FIFO is never waited on), is replaced by a new file holding a new random token (32
 * bytes, base64url): a token anyone else could have read is no secret, and a descriptor someone opened
 * on the old file never sees the new one.
 * Call only for a path in a directory that passed the state directory's checks.
 * @throws StateDirError (MCPD_UNSAFE_STATE_DIR) when `path` is a directory; the errno error when it cannot be written.
 */
export function loadOrCreateToken(path: string): string {
  const existing = readToken(path);
  if (existing !== undefined) return existing;
  const token = randomBytes(32).toString("base64url");
  writePrivateFile(path, `${token}\n`);
  return token;
}
