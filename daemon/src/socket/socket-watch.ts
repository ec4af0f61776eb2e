import { lstatSync, readdirSync, readFileSync, readlinkSync, rmSync, unlinkSync, type Stats } from "node:fs";
import { RUNTIME_DEFAULTS } from "../defaults.js";
import { dirname, join } from "node:path";
import { silentLogger, type Logger, type SocketWatchStatus } from "@mcpd/protocol";
import { bindPathFor, probeSocket } from "./socket-path.js";
import { SocketSetupError } from "./socket-setup-error.js";
import { isPidAlive } from "../infra/process-alive.js";
import { isoTime } from "../infra/iso-time.js";
import { readPrivateFile } from "../infra/private-file.js";

/** What {@link SocketWatch} needs from the socket server: its public listen/stop pair. */
export interface Relistenable {
  /** Stops accepting on the current listener (existing connections stay). */
  stopAccepting(): void;
  /** Listens on the socket path, creating the socket file (mode 0600). */
  listen(): Promise<void>;
}

export interface SocketWatchOptions {
  socketPath: string;
  server: Relistenable;
  logger?: Logger;
  /** Check interval in ms. Default {@link RUNTIME_DEFAULTS.socketWatchIntervalMs}. */
  intervalMs?: number;
  /**
   * Another live daemon now answers on our path: nobody can reach this one any more, and its servers
   * would run twice. The daemon should shut down. Default: log only.
   */
  onTakenOver?: (reason: string) => void;
}

/**
 * Keeps the daemon reachable when its socket file is removed from under it (a `rm -rf` of the runtime
 * directory, a tmp cleaner, a careless script): a listening Unix socket whose file is gone can never be
 * connected to again, so clients would start a second daemon.
 *
 * Every `intervalMs` it checks that the socket path still is the socket this daemon created (same device
 * and inode). Removed, or a stale socket nobody answers on: it listens again (a new socket file; existing
 * connections are untouched) and logs a warning. A live socket of another process: it logs an error and
 * calls `onTakenOver` (this daemon is unreachable). Anything else (a regular file): it logs an error
 * and leaves the file alone. {@link status} reports the re-creations and the last problem for
 * `mcpd/status`.
 */
export class SocketWatch {
  private readonly opts: SocketWatchOptions;
  private readonly log: Logger;
  private timer: NodeJS.Timeout | undefined;
  private identity: { dev: number; ino: number } | undefined;
  private busy = false;
  private stopped = false;
  private recreated = 0;
  private lastProblem: string | undefined;
  private lastProblemAt: number | undefined;

  constructor(options: SocketWatchOptions) {
    this.opts = options;
    this.log = options.logger ?? silentLogger;
  }

  /** Records the socket file just created by `listen()` and starts checking. Returns `this`. */
  start(): this {
    this.identity = this.currentIdentity();
    const every = this.opts.intervalMs ?? RUNTIME_DEFAULTS.socketWatchIntervalMs;
    this.timer = setInterval(() => void this.check(), every);
    this.timer.unref();
    return this;
  }

  /** Stops checking (shutdown). */
  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Removes the socket file if it still is the one this daemon created (same device and inode), never another's. */
  removeOwnFile(): void {
    const now = this.currentIdentity();
    if (now !== undefined && this.isMine(now)) rmSync(this.opts.socketPath, { force: true });
  }

  /** Whether `st` (device and inode) is the socket file this daemon created. */
  private isMine(st: { dev: number; ino: number }): boolean {
    const mine = this.identity;
    return mine !== undefined && st.dev === mine.dev && st.ino === mine.ino;
  }

  /** For `mcpd/status`: `{ path, recreated, lastProblem, lastProblemAt }` (ISO time, or null). */
  status(): SocketWatchStatus {
    return {
      path: this.opts.socketPath,
      recreated: this.recreated,
      lastProblem: this.lastProblem ?? null,
      lastProblemAt: this.lastProblemAt === undefined ? null : isoTime(this.lastProblemAt),
    };
  }

  private currentIdentity(): { dev: number; ino: number } | undefined {
    try {
      const st = lstatSync(this.opts.socketPath);
      return st.isSocket() ? { dev: st.dev, ino: st.ino } : undefined;
    } catch {
      return undefined;
    }
  }

  /** One check now. Never throws. */
  async check(): Promise<void> {
    if (this.busy || this.stopped) return;
    this.busy = true;
    try {
      await this.checkOnce();
    } catch (err) {
      this.log.error({ err: (err as Error).message, socket: this.opts.socketPath }, "socket check failed");
    } finally {
      this.busy = false;
    }
  }

  private async checkOnce(): Promise<void> {
    const path = this.opts.socketPath;
    let st: Stats;
    try {
      st = lstatSync(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      return this.relisten(`socket file ${path} was removed`);
    }
    if (st.isSocket() && this.isMine(st)) return;
    if (!st.isSocket()) {
      // Never delete what someone put there; say so once per change.
      this.problem(`${path} was replaced by something that is not a socket; mcpd cannot be reached until it is removed`, "error");
      return;
    }
    if (await probeSocket(path)) {
      const why = `another process now listens on ${path}; this daemon (pid ${process.pid}) cannot be reached any more`;
      this.problem(why, "error");
      this.stop();
      this.opts.onTakenOver?.(why);
      return;
    }
    // A socket nobody answers on (left by a crashed process): replace it, as a starting daemon would.
    unlinkSync(path);
    await this.relisten(`socket file ${path} was replaced by a dead socket`);
  }

  private async relisten(why: string): Promise<void> {
    if (this.stopped) return;
    this.opts.server.stopAccepting();
    await this.opts.server.listen();
    this.identity = this.currentIdentity();
    this.recreated++;
    this.problem(`${why}; listening again on a new one`, "warn");
  }

  private problem(text: string, level: "warn" | "error"): void {
    if (this.lastProblem === text && level === "error") return;
    this.lastProblem = text;
    this.lastProblemAt = Date.now();
    this.log[level]({ socket: this.opts.socketPath }, text);
  }
}

/**
 * Inodes of the listening Unix sockets bound to `path` (Linux: /proc/net/unix; a socket keeps its bound
 * path there after its file is removed). Empty elsewhere.
 */
function listeningInodes(paths: readonly string[]): Set<string> {
  const out = new Set<string>();
  let table: string;
  try {
    table = readFileSync("/proc/net/unix", "utf8");
  } catch {
    return out;
  }
  // Num RefCount Protocol Flags Type St Inode Path; Flags 00010000 = listening (__SO_ACCEPTCON).
  for (const line of table.split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length >= 8 && paths.includes(f.slice(7).join(" ")) && (Number.parseInt(f[3] as string, 16) & 0x10000) !== 0)
      out.add(f[6] as string);
  }
  return out;
}

/**
 * Whether process `pid` holds a listening Unix socket bound to `socketPath` (or to the temporary name a
 * daemon with that pid binds first, see `bindPathFor`), even when the socket file has been removed since:
 * that process is the daemon of `socketPath`. Linux only (/proc/net/unix and /proc/<pid>/fd); false
 * elsewhere and whenever it cannot tell.
 */
export function holdsListeningSocket(pid: number, socketPath: string): boolean {
  // The kernel names a socket by the path it was bound to: the daemon binds a temporary name first.
  const inodes = listeningInodes([socketPath, bindPathFor(socketPath, pid)]);
  if (inodes.size === 0) return false;
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        return m !== null && inodes.has(m[1] as string);
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

/**
 * Refuses to start a second daemon while the first one still runs but has lost its socket file (the
 * case {@link SocketWatch} repairs within seconds): when there is no socket file, the pid file beside
 * it names a live process other than this one, and (on Linux) that process holds a listening socket
 * bound to the same path. Call before `prepareSocketPath`. The pid file is `<socket dir>/mcpd.pid`, as
 * `resolvePaths` places it. Linux only (elsewhere it never refuses).
 * @throws SocketSetupError (MCPD_ALREADY_RUNNING) naming the pid and what to do.
 */
export function assertNoDaemonWithoutSocket(socketPath: string): void {
  // Elsewhere a reused pid could not be told from a daemon: never refuse on a guess.
  if (process.platform !== "linux") return;
  try {
    lstatSync(socketPath);
    return; // a file is there: prepareSocketPath probes it
  } catch {
    // No socket file: is its daemon still around?
  }
  // Never blocking: a FIFO at the pid file is no pid (it is replaced once the daemon listens).
  const read = readPrivateFile(join(dirname(socketPath), "mcpd.pid"), { maxBytes: 64 });
  if (read.kind !== "file") return;
  const pid = Number.parseInt(read.text.trim(), 10);
  if (!Number.isSafeInteger(pid) || pid <= 1 || pid === process.pid || !isPidAlive(pid)) return;
  if (!holdsListeningSocket(pid, socketPath)) return;
  throw new SocketSetupError(
    "MCPD_ALREADY_RUNNING",
    `mcpd is already running (pid ${pid}) but its socket file ${socketPath} is missing; it re-creates it within ` +
      `${RUNTIME_DEFAULTS.socketWatchIntervalMs / 1000} s (then 'mcpd status' answers again), or stop it with 'kill ${pid}'`,
  );
}
