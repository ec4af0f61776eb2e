import { lstatSync, mkdirSync, unlinkSync, type Stats } from "node:fs";
import { connect } from "node:net";
import { dirname, join } from "node:path";
import { checkSocketPath, checkSocketTrust } from "@mcpd/client";
import { DaemonLock } from "./daemon-lock.js";
import { SocketSetupError } from "./socket-setup-error.js";

/**
 * The path a daemon with that pid binds before renaming it to `socketPath` (see SocketServer.listen):
 * `<dir>/.<pid>`, or `socketPath` itself when that name would be longer. /proc/net/unix keeps showing it.
 */
export function bindPathFor(socketPath: string, pid: number): string {
  const tmp = join(dirname(socketPath), `.${pid}`);
  return Buffer.byteLength(tmp) <= Buffer.byteLength(socketPath) ? tmp : socketPath;
}

/** Whether something answers on a Unix socket path (a live daemon), within `timeoutMs`. */
export function probeSocket(path: string, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(path);
    const done = (v: boolean): void => {
      clearTimeout(t);
      s.destroy();
      resolve(v);
    };
    const t = setTimeout(() => done(false), timeoutMs);
    s.once("connect", () => done(true));
    s.once("error", () => done(false));
  });
}

/**
 * Checks the runtime directory (created 0700) and the socket path with the same rule every client applies
 * before connecting (`checkSocketTrust`: the directory is this user's and not writable by group or others,
 * the socket is this user's and not a symbolic link), then takes the daemon's lock of the path for its
 * whole life ({@link DaemonLock}: another daemon holding it -> "already running", naming its pid), then: a
 * live daemon (one that holds no lock) -> "already running"; a stale socket removed; anything else refused.
 * The caller releases the lock it returns when the daemon ends (or fails to start).
 */
export async function prepareSocketPath(socketPath: string): Promise<DaemonLock> {
  const tooLong = checkSocketPath(socketPath);
  if (tooLong) throw new SocketSetupError("MCPD_UNSAFE_SOCKET_DIR", tooLong);
  mkdirSync(dirname(socketPath), { recursive: true, mode: 0o700 });
  const untrusted = checkSocketTrust(socketPath);
  if (untrusted) throw new SocketSetupError("MCPD_UNSAFE_SOCKET_DIR", `Refusing to start: ${untrusted.message}`);
  const lock = await DaemonLock.acquire(socketPath);
  try {
    await removeStaleSocket(socketPath);
  } catch (err) {
    lock.release();
    throw err;
  }
  return lock;
}

async function removeStaleSocket(socketPath: string): Promise<void> {
  let existing: Stats;
  try {
    existing = lstatSync(socketPath);
  } catch {
    return;
  }
  if (await probeSocket(socketPath)) throw new SocketSetupError("MCPD_ALREADY_RUNNING", `mcpd is already running on ${socketPath}`);
  if (!existing.isSocket())
    throw new SocketSetupError("MCPD_UNSAFE_SOCKET_DIR", `Refusing to start: ${socketPath} exists and is not a socket`);
  unlinkSync(socketPath); // stale: nothing answers
}
