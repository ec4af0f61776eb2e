import { lstatSync, readFileSync, realpathSync, statSync, type Stats } from "node:fs";
import { dirname } from "node:path";
// The core entry, not the index: `mcpd connect` loads this file on every agent session's start.
import { UntrustedSocketError } from "@mcpd/protocol/core";

/** Why a socket path failed {@link checkSocketTrust}. */
export interface SocketTrustProblem {
  /** The directory, symbolic link or socket at fault. */
  path: string;
  /** Its owner's numeric uid. */
  ownerUid: number;
  /** What is wrong (the path, the owner found) and what to do; no "Refusing to ..." prefix. */
  message: string;
}

/**
 * The rule a private directory of mcpd's must pass (the socket's, the state directory): owned by `uid` and
 * not writable by group or others. Returns what is wrong with `st`, or undefined when it passes.
 */
export function privateDirFault(st: Stats, uid: number): "not-owner" | "writable" | undefined {
  if (st.uid !== uid) return "not-owner";
  return (st.mode & 0o022) !== 0 ? "writable" : undefined;
}

/** The advice for a directory or socket that another user made. */
const NOT_YOURS =
  "another user may have made it to receive your mcpd traffic. Do not use it: ask its owner or an administrator to remove it, " +
  "or set MCPD_HOME (or XDG_RUNTIME_DIR) to a directory only you can write";

/**
 * The one rule the daemon (before it listens) and every client (before it connects) apply to a socket
 * path, so that a socket another local user made is never used. Other users are untrusted; the current
 * user's own processes are trusted (see docs/reliability.md, "Threat model"). The path is trusted when:
 *
 * - its directory is owned by `uid` and not writable by group or others (a symbolic link to the
 *   directory must itself be owned by `uid`; the directory it points to must pass the same test),
 * - every directory above it (its real path) is owned by `uid` or root, and writable by group or others
 *   only with the sticky bit (as `/tmp`): whoever else may rename an entry there can swap the whole
 *   directory, socket and all, between this check and the connect, and
 * - the socket, when it exists, is owned by `uid` and is not a symbolic link.
 *
 * A directory or socket that does not exist passes (there is nothing to trust yet: connecting then fails
 * as "not running", and a daemon creates them itself). So does any path where the OS has no uids
 * (Windows). Costs two to four `lstat`/`stat` calls: run it once per connection, never per message.
 *
 * @param uid the user the path must belong to; default the current one.
 * @returns the problem found, or `undefined` when the path may be used.
 */
export function checkSocketTrust(socketPath: string, uid: number | undefined = process.getuid?.()): SocketTrustProblem | undefined {
  if (uid === undefined) return undefined;
  const dir = dirname(socketPath);
  let st = statOrUndefined(lstatSync, dir);
  if (st === undefined) return undefined;
  if (st.isSymbolicLink()) {
    if (st.uid !== uid) {
      return { path: dir, ownerUid: st.uid, message: `socket directory ${dir} is a symbolic link ${ownedBy(st.uid, uid)}: ${NOT_YOURS}` };
    }
    st = statOrUndefined(statSync, dir);
    if (st === undefined) return undefined;
  }
  // Not a directory: connecting fails with a clear ENOTDIR, and nothing can be inside it.
  if (!st.isDirectory()) return undefined;
  const fault = privateDirFault(st, uid);
  if (fault === "not-owner") {
    return { path: dir, ownerUid: st.uid, message: `socket directory ${dir} is ${ownedBy(st.uid, uid)}: ${NOT_YOURS}` };
  }
  if (fault === "writable") {
    // Whoever can write the directory can replace the socket between our check and our connect.
    const mode = (st.mode & 0o777).toString(8);
    return {
      path: dir,
      ownerUid: st.uid,
      message:
        `socket directory ${dir} is writable by others (mode ${mode}); run: chmod 700 ${dir} ` +
        "(whoever can write there can replace the socket)",
    };
  }
  const above = ancestorProblem(dir, uid);
  if (above !== undefined) return above;
  const sock = statOrUndefined(lstatSync, socketPath);
  if (sock === undefined) return undefined;
  if (sock.isSymbolicLink()) {
    return { path: socketPath, ownerUid: sock.uid, message: `${socketPath} is a symbolic link; set MCPD_SOCKET to the socket itself` };
  }
  if (sock.uid !== uid) {
    return { path: socketPath, ownerUid: sock.uid, message: `socket ${socketPath} is ${ownedBy(sock.uid, uid)}: ${NOT_YOURS}` };
  }
  return undefined;
}

/**
 * Throws when {@link checkSocketTrust} finds a problem with `socketPath`: what every client runs before it
 * connects.
 * @throws UntrustedSocketError (`MCPD_UNTRUSTED_SOCKET`): `Refusing to connect to mcpd: <problem>`.
 */
export function assertTrustedSocket(socketPath: string): void {
  const problem = checkSocketTrust(socketPath);
  if (problem) throw new UntrustedSocketError(`Refusing to connect to mcpd: ${problem.message}`, problem);
}

/**
 * What is wrong with a directory above the socket's directory `dir` (its real path, up to `/`), or
 * undefined: each must be owned by `uid` or root, and writable by group or others only when sticky.
 */
function ancestorProblem(dir: string, uid: number): SocketTrustProblem | undefined {
  let real: string;
  try {
    real = realpathSync(dir);
  } catch {
    return undefined;
  }
  for (let at = dirname(real); ; at = dirname(at)) {
    const st = statOrUndefined(statSync, at);
    if (st !== undefined && st.uid !== uid && st.uid !== 0) {
      return { path: at, ownerUid: st.uid, message: `${at}, above the socket directory ${dir}, is ${ownedBy(st.uid, uid)}: ${NOT_YOURS}` };
    }
    if (st !== undefined && (st.mode & 0o022) !== 0 && (st.mode & 0o1000) === 0) {
      const mode = (st.mode & 0o7777).toString(8);
      return {
        path: at,
        ownerUid: st.uid,
        message:
          `${at}, above the socket directory ${dir}, is writable by others without the sticky bit (mode ${mode}): ` +
          "whoever can write there can swap the directory, socket and all. Set MCPD_HOME (or XDG_RUNTIME_DIR) to a directory " +
          `whose every parent only you or root can write, or run: chmod o-w,g-w ${at}`,
      };
    }
    if (at === dirname(at)) return undefined;
  }
}

function statOrUndefined(stat: (path: string) => Stats, path: string): Stats | undefined {
  try {
    return stat(path);
  } catch {
    // Missing, or not reachable by us: the connect that follows reports it (ENOENT, EACCES).
    return undefined;
  }
}

/** `owned by uid 65534 (nobody), not by you (uid 1000)`. */
function ownedBy(owner: number, uid: number): string {
  const name = userName(owner);
  return `owned by uid ${owner}${name ? ` (${name})` : ""}, not by you (uid ${uid})`;
}

/** The user name of `uid` from /etc/passwd, when there is one (only read to word a refusal). */
function userName(uid: number): string | undefined {
  try {
    for (const line of readFileSync("/etc/passwd", "utf8").split("\n")) {
      const f = line.split(":");
      if (f.length >= 3 && f[2] === String(uid) && f[0]) return f[0];
    }
  } catch {
    // No passwd file (macOS keeps users in Directory Services): the uid alone names the owner.
  }
  return undefined;
}
