import { closeSync, constants, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync, statSync, unlinkSync, writeSync } from "node:fs";
import { privateDirFault } from "@mcpd/client";
import { McpdError } from "@mcpd/protocol";

/**
 * A directory (or a file in it) the daemon refuses to use: owned by another user, writable by group or
 * others, or a file that is a symbolic link. Code `MCPD_UNSAFE_STATE_DIR`; the message names the path,
 * what was found and what to do.
 */
export class StateDirError extends McpdError {
  override name = "StateDirError";
  constructor(message: string, options: { cause?: unknown } = {}) {
    super("MCPD_UNSAFE_STATE_DIR", message, options);
  }
}

/**
 * Creates `dir` (and missing parents) mode 0700, then checks it as the socket directory is checked: owned
 * by the current user and not writable by group or others. Another user's directory could hold a
 * symbolic link in place of any file mcpd writes (its log, the tool cache) and have mcpd write into the
 * link's target; so this runs before anything is opened in the directory.
 * @param what names the directory in the message ("state directory").
 * @throws StateDirError (MCPD_UNSAFE_STATE_DIR) naming the directory, its owner or mode, and the fix.
 */
export function preparePrivateDir(dir: string, what: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = statSync(dir);
  const uid = process.getuid?.();
  const fault = uid === undefined ? undefined : privateDirFault(st, uid);
  if (fault === "not-owner") {
    throw new StateDirError(
      `Refusing to start: ${what} ${dir} is owned by uid ${st.uid}, not ${uid}; ` +
        "use a directory of your own (set MCPD_HOME, or XDG_STATE_HOME)",
    );
  }
  if (fault === "writable") {
    throw new StateDirError(
      `Refusing to start: ${what} ${dir} is writable by others (mode ${(st.mode & 0o777).toString(8)}); run: chmod 700 ${dir}`,
    );
  }
}

/** Whether an open(2) error means "the last component is a symbolic link" (O_NOFOLLOW: ELOOP on Linux and macOS, EMLINK on FreeBSD). */
function isSymlinkRefusal(err: unknown, path: string): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  if (code !== "ELOOP" && code !== "EMLINK") return false;
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * Opens `path` for appending (created mode 0600), never through a symbolic link; a regular file that
 * already exists with a wider mode is made 0600 (logs hold server names, errors and stderr lines).
 * Call only for a path in a directory that passed {@link preparePrivateDir}.
 * @returns the file descriptor.
 * @throws StateDirError when `path` is a symbolic link (it is left alone); the errno error otherwise.
 */
export function openPrivateAppend(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  } catch (err) {
    if (isSymlinkRefusal(err, path)) {
      throw new StateDirError(`Refusing to open ${path}: ${path} is a symbolic link (mcpd never writes through one); remove it`, {
        cause: err,
      });
    }
    throw err;
  }
  try {
    const st = fstatSync(fd);
    // Only a regular file: a device (a test's /dev/full) keeps its mode.
    if (st.isFile() && (st.mode & 0o077) !== 0) fchmodSync(fd, 0o600);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  return fd;
}

/**
 * Writes `text` as the whole content of `path` (mode 0600), never through a symbolic link: a link found
 * there is removed and a new file written in its place (for files mcpd owns outright, like the pid file).
 * Call only for a path in a directory that passed the directory checks.
 */
export function writePrivateFile(path: string, text: string): void {
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;
  let fd: number;
  try {
    fd = openSync(path, flags, 0o600);
  } catch (err) {
    if (!isSymlinkRefusal(err, path)) throw err;
    unlinkSync(path);
    fd = openSync(path, flags | constants.O_EXCL, 0o600);
  }
  try {
    fchmodSync(fd, 0o600);
    const buf = Buffer.from(text);
    for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off);
  } finally {
    closeSync(fd);
  }
}
