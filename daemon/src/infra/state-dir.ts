import { closeSync, constants, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync, type Stats } from "node:fs";
import { privateDirFault } from "@mcpd/client";
import { McpdError } from "@mcpd/protocol";
import { fileKind, kindAt } from "./file-kind.js";

/**
 * A directory (or a file in it) the daemon refuses to use: owned by another user, or a file that is a
 * symbolic link, a FIFO or another user's. Code `MCPD_UNSAFE_STATE_DIR`; the message names the path, what
 * was found and what to do.
 */
export class StateDirError extends McpdError {
  override name = "StateDirError";
  constructor(message: string, options: { cause?: unknown } = {}) {
    super("MCPD_UNSAFE_STATE_DIR", message, options);
  }
}

/**
 * Creates `dir` (and missing parents) mode 0700, then checks it: owned by the current user, else refused
 * (another user's directory could hold a symbolic link in place of any file mcpd writes there, and have
 * mcpd write into the link's target). A directory of the user's own that group or others may read,
 * enter or write (a `mkdir` under umask 022 is 0755) is made 0700, through a descriptor of the directory
 * itself; the caller logs the note returned. Every file in it is then written as a new file (never
 * through what another user may have left there), so an install that worked keeps working.
 * Runs before anything is opened in the directory.
 * @param what names the directory in messages ("state directory").
 * @returns a note for the log when the mode was changed, else undefined.
 * @throws StateDirError (MCPD_UNSAFE_STATE_DIR) naming the directory and its owner, and the fix.
 */
export function preparePrivateDir(dir: string, what: string): string | undefined {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    const st = fstatSync(fd);
    const uid = process.getuid?.();
    if (uid === undefined) return undefined;
    if (privateDirFault(st, uid) === "not-owner") {
      throw new StateDirError(
        `Refusing to start: ${what} ${dir} is owned by uid ${st.uid}, not ${uid}; ` +
          "use a directory of your own (set MCPD_HOME, or XDG_STATE_HOME)",
      );
    }
    const mode = st.mode & 0o777;
    if ((mode & 0o077) === 0) return undefined;
    fchmodSync(fd, 0o700);
    return `${what} ${dir} was mode ${mode.toString(8)} (open to other users); made it 700`;
  } finally {
    closeSync(fd);
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

/** Why an opened log file may not be appended to, or undefined when it may. */
function appendFault(path: string, st: Stats): string | undefined {
  // A character device (a test's /dev/full, /dev/null) is written as it is.
  if (st.isCharacterDevice()) return undefined;
  if (!st.isFile()) return `${path} is ${fileKind(st)}, not a regular file; remove it`;
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) return `${path} is owned by uid ${st.uid}, not ${uid}; remove it`;
  // A second name of the file elsewhere (a hard link to a file of yours) would be appended to.
  if (st.nlink > 1) return `${path} has ${st.nlink} hard links (mcpd never appends to a file with another name); remove it`;
  return undefined;
}

/**
 * Opens `path` for appending (created mode 0600), never through a symbolic link and never blocking (a
 * FIFO there is refused, not waited on); a regular file of the user's own that already exists with a
 * wider mode is made 0600 (logs hold server names, errors and stderr lines).
 * Call only for a path in a directory that passed {@link preparePrivateDir}.
 * @returns the file descriptor.
 * @throws StateDirError when `path` is a symbolic link, a FIFO, a socket, a directory, another user's
 *   file or one with other hard links (it is left alone); the errno error otherwise.
 */
export function openPrivateAppend(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o600);
  } catch (err) {
    if (isSymlinkRefusal(err, path)) {
      throw new StateDirError(`Refusing to open ${path}: ${path} is a symbolic link (mcpd never writes through one); remove it`, {
        cause: err,
      });
    }
    const code = (err as NodeJS.ErrnoException).code;
    const kind = code === "ENXIO" || code === "EISDIR" ? kindAt(path) : undefined;
    if (kind) throw new StateDirError(`Refusing to open ${path}: ${path} is ${kind}, not a regular file; remove it`, { cause: err });
    throw err;
  }
  try {
    const st = fstatSync(fd);
    const fault = appendFault(path, st);
    if (fault) throw new StateDirError(`Refusing to open ${path}: ${fault}`);
    if (st.isFile() && (st.mode & 0o077) !== 0) fchmodSync(fd, 0o600);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  return fd;
}
