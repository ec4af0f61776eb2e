import { linkSync, lstatSync, rmSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";
import { readProcStat } from "@mcpd/transports/procfs";
import { RUNTIME_DEFAULTS } from "../defaults.js";
import { isPidAlive } from "../infra/process-alive.js";
import { readPrivateFile, writePrivateFile } from "../infra/private-file.js";
import { SocketSetupError } from "./socket-setup-error.js";

/** Who holds a lock file: a pid and (Linux) that process's start time, which tells a reused pid apart. */
interface Holder {
  pid: number;
  startTime: string | undefined;
}

function ownHolder(): string {
  return `${process.pid} ${readProcStat(process.pid)?.startTime ?? "-"}\n`;
}

function parseHolder(text: string): Holder | undefined {
  const [pid, start] = text.trim().split(" ");
  const n = Number.parseInt(pid ?? "", 10);
  if (!Number.isSafeInteger(n) || n <= 0) return undefined;
  return { pid: n, startTime: start === undefined || start === "-" ? undefined : start };
}

/** Whether the process a lock file names still runs (the same process: a reused pid has another start time). */
function holderAlive(h: Holder): boolean {
  if (h.pid === process.pid || !isPidAlive(h.pid)) return false;
  if (h.startTime === undefined) return true;
  const now = readProcStat(h.pid)?.startTime;
  return now === undefined || now === h.startTime;
}

/**
 * Creates `path` holding `text` only if nothing is there: the content is written to a private temporary
 * file first, then hard-linked to `path` (link(2) fails with EEXIST when the name exists), so a lock file
 * is never seen half written. False when `path` exists.
 */
function createExclusive(path: string, text: string): boolean {
  const tmp = `${path}.${process.pid}.new`;
  writePrivateFile(tmp, text);
  try {
    linkSync(tmp, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
}

function readHolderText(path: string): string | undefined {
  const r = readPrivateFile(path, { maxBytes: 256 });
  return r.kind === "file" ? r.text : undefined;
}

/**
 * The daemon's exclusive claim on its socket path, held for its whole life: the file `<socket>.lock`
 * holding the pid (and, on Linux, the start time) of the daemon that owns the path. Node has no flock(2),
 * so the claim is a file created exclusively (see {@link createExclusive}); one left by a dead daemon (or
 * by a pid since reused) is stale and is replaced. Replacing a stale lock is itself serialized by a
 * short-lived `<socket>.lock.break` file, under which the lock is read again before it is removed: two
 * daemons that both found it stale cannot remove each other's fresh lock.
 */
export class DaemonLock {
  private constructor(
    readonly file: string,
    private readonly text: string,
  ) {}

  /**
   * Takes the lock of `socketPath` (whose directory has passed the socket checks).
   * @throws SocketSetupError (MCPD_ALREADY_RUNNING) naming the daemon that holds it.
   */
  static async acquire(socketPath: string): Promise<DaemonLock> {
    const file = `${socketPath}.lock`;
    const text = ownHolder();
    for (let attempt = 0; attempt < RUNTIME_DEFAULTS.daemonLockAttempts; attempt++) {
      if (createExclusive(file, text)) return new DaemonLock(file, text);
      const read = readPrivateFile(file, { maxBytes: 256 });
      // Released meanwhile: try again at once.
      if (read.kind === "missing") continue;
      if (read.kind === "unusable") throw new SocketSetupError("MCPD_UNSAFE_SOCKET_DIR", `Refusing to start: ${read.reason}; remove it`);
      const holder = parseHolder(read.text);
      if (holder !== undefined && holderAlive(holder)) {
        throw new SocketSetupError(
          "MCPD_ALREADY_RUNNING",
          `mcpd is already running (pid ${holder.pid}) on ${socketPath} (it holds ${file}); 'mcpd status' shows it`,
        );
      }
      // A break file in use (another daemon replacing the same stale lock): look again shortly.
      if (!breakStale(file, read.text)) await delay(RUNTIME_DEFAULTS.daemonLockRetryMs);
    }
    throw new SocketSetupError("MCPD_ALREADY_RUNNING", `mcpd could not take ${file}: other daemons kept starting; try again`);
  }

  /** Removes the lock file if it is still this daemon's (never another's). */
  release(): void {
    if (readHolderText(this.file) === this.text) rmSync(this.file, { force: true });
  }
}

/**
 * Removes the stale lock `file` (as it was `seen`) under the break file: only if it still reads the same
 * (no other daemon replaced it meanwhile). A break file left by a breaker that died, or older than
 * {@link RUNTIME_DEFAULTS.daemonLockBreakStaleMs}, is removed; one in use makes this attempt a no-op.
 * True when this call removed the lock or found it gone.
 */
function breakStale(file: string, seen: string): boolean {
  const brk = `${file}.break`;
  if (!createExclusive(brk, ownHolder())) {
    const h = parseHolder(readHolderText(brk) ?? "");
    let age = 0;
    try {
      age = Date.now() - lstatSync(brk).mtimeMs;
    } catch {
      return false;
    }
    // Its holder died mid-break (a holder still being written is given a moment), or it is far too old.
    const dead = (h === undefined || !holderAlive(h)) && age > RUNTIME_DEFAULTS.daemonLockRetryMs;
    if (dead || age > RUNTIME_DEFAULTS.daemonLockBreakStaleMs) rmSync(brk, { force: true });
    return false;
  }
  try {
    // Read again under the break file: a daemon that took the lock since then keeps it.
    const now = readHolderText(file);
    if (now === seen) rmSync(file, { force: true });
    return now === seen || now === undefined;
  } finally {
    rmSync(brk, { force: true });
  }
}

/** Removes the pid file if it holds this process's pid (a later daemon's stays). */
export function removeOwnPidFile(pidFile: string): void {
  if (readHolderText(pidFile)?.trim() === String(process.pid)) rmSync(pidFile, { force: true });
}
