import { isDeadState, listProcPids, readProcStatAsync } from "../procfs.js";

/**
 * Process-group helpers for ending a stdio server together with everything it started.
 *
 * A server spawned with `detached: true` leads its own process group (pgid = its pid), and children it
 * starts (the real server behind `npx`/`uvx`/`sh -c`) stay in that group unless they call setsid.
 * Signalling `-pgid` reaches all of them, which is how orphans are avoided (see field notes).
 * POSIX only; on Windows these are no-ops that report "gone".
 */

const isPosix = process.platform !== "win32";

/**
 * Sends `signal` (0: only probe) to every process in group `pgid`. Returns false when the group no longer exists
 * (ESRCH) or cannot be signalled (EPERM: it is not ours any more); never throws.
 */
export function signalGroup(pgid: number | undefined, signal: NodeJS.Signals | 0): boolean {
  if (!isPosix || pgid === undefined || !Number.isInteger(pgid) || pgid <= 1) return false;
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * True while group `pgid` has at least one live (non-zombie) member.
 *
 * `kill(-pgid, 0)` alone is not enough: a killed grandchild whose parent already died is reparented to
 * PID 1, and where PID 1 does not reap (containers, micro-VM inits: seen on our CI machines) it stays a
 * zombie forever and still counts as a member. So when the cheap probe says "exists", Linux scans
 * /proc for members that are not zombies. Elsewhere the probe is trusted.
 */
export async function groupAlive(pgid: number | undefined): Promise<boolean> {
  if (!signalGroup(pgid, 0)) return false;
  if (process.platform !== "linux") return true;
  const pids = await listProcPids();
  if (pids === undefined) return true;
  const results = await Promise.all(
    pids.map((pid) => readProcStatAsync(pid).then((stat) => stat !== undefined && stat.pgrp === pgid && !isDeadState(stat.state))),
  );
  return results.includes(true);
}

/** Resolves true once `check()` is false (polled every `intervalMs`), or false after `timeoutMs`. */
export async function waitUntilGone(check: () => Promise<boolean>, timeoutMs: number, intervalMs = 25): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!(await check())) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Process groups still running, SIGKILLed synchronously if this process exits without closing them. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

/**
 * Remembers a running group so it dies with this process even when close() never runs (uncaught
 * error, `process.exit()`). 'exit' handlers must be synchronous, so there is no grace period there:
 * SIGKILL is the only signal sure to work. (A daemon killed by an unhandled signal runs no handlers.)
 */
export function trackGroup(pgid: number | undefined): void {
  if (pgid === undefined || !isPosix) return;
  liveGroups.add(pgid);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const id of liveGroups) signalGroup(id, "SIGKILL");
  });
}

/** Forgets a group that has been ended. */
export function untrackGroup(pgid: number | undefined): void {
  if (pgid !== undefined) liveGroups.delete(pgid);
}

export interface TerminateOptions {
  /** The group to end (the server's pid when spawned detached). */
  pgid: number | undefined;
  /** Resolves when the direct child has exited. */
  exited: Promise<void>;
  /** True once the direct child has exited. */
  hasExited: () => boolean;
  /** Signals the direct child alone; used when the group cannot be signalled. */
  killChild: (signal: NodeJS.Signals) => void;
  /** Wait after stdin EOF before SIGTERM, and after SIGTERM before SIGKILL, in ms. */
  graceMs: number;
  /** Called with a short note at each escalation (for logs). */
  onStep?: (step: string) => void;
}

/**
 * Ends a server the way MCP's stdio transport asks, once its stdin is closed: wait for it to exit,
 * SIGTERM, wait, SIGKILL. Then ends whatever the server left in its group (npx's real server, helpers)
 * the same way: SIGTERM, wait, SIGKILL. Resolves when nothing live remains, or after the bounded waits.
 */
export async function terminateProcessTree(options: TerminateOptions): Promise<void> {
  const { pgid, exited, hasExited, graceMs, onStep = () => {} } = options;
  const kill = (signal: NodeJS.Signals): void => {
    if (!signalGroup(pgid, signal)) options.killChild(signal);
  };
  const exitedWithin = (ms: number): Promise<boolean> => (hasExited() ? Promise.resolve(true) : withinMs(exited, ms));
  if (!(await exitedWithin(graceMs))) {
    onStep("still running after stdin EOF: SIGTERM");
    kill("SIGTERM");
    if (!(await exitedWithin(graceMs))) {
      onStep("ignored SIGTERM: SIGKILL");
      kill("SIGKILL");
      // SIGKILL cannot be ignored; the bound only guards against a process stuck in the kernel.
      await exitedWithin(graceMs);
    }
  }
  const alive = (): Promise<boolean> => groupAlive(pgid);
  if (await alive()) {
    onStep("children outlived the server: SIGTERM to the group");
    signalGroup(pgid, "SIGTERM");
    if (!(await waitUntilGone(alive, graceMs))) {
      onStep("children ignored SIGTERM: SIGKILL to the group");
      signalGroup(pgid, "SIGKILL");
      await waitUntilGone(alive, graceMs);
    }
  }
}

/** Resolves true when `promise` settles within `ms`, false otherwise. Never rejects. */
export async function withinMs(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<boolean>((resolve) => (timer = setTimeout(resolve, ms, false)));
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      expired,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
