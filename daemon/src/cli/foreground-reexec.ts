import { spawn } from "node:child_process";
import { constants } from "node:os";
import { lacksAllocatorEnv, withAllocatorEnv } from "../infra/allocator-env.js";
import { missingNodeFlags } from "../infra/node-flags.js";
import { binPath } from "../infra/package-root.js";
import { eprintln, type CliContext } from "./context.js";

/**
 * Set by `mcpd start --foreground` in the environment of the daemon it runs as its child: the parent's
 * pid. Its presence means the settings are given (no second re-execution); the daemon shuts down if that
 * parent goes away (see {@link watchForegroundParent}).
 */
export const FOREGROUND_PARENT_ENV = "MCPD_FOREGROUND_PARENT";
/** `0`: `mcpd start --foreground` runs the daemon in the process started, with whatever settings it has. */
export const FOREGROUND_REEXEC_ENV = "MCPD_FOREGROUND_REEXEC";
/** Signals the parent passes on to the daemon (SIGHUP: reload). SIGUSR1 is node's own (its inspector). */
const FORWARDED_SIGNALS: readonly NodeJS.Signals[] = ["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR2"];
/** How often a re-executed daemon checks that its parent is still there, in ms. */
const PARENT_CHECK_MS = 1_000;

/** How to run the daemon as a child with its settings: node's arguments before the script, and its environment. */
export interface ReexecPlan {
  nodeArgs: string[];
  env: NodeJS.ProcessEnv;
}

/**
 * Whether `mcpd start --foreground`, running in a node started with `execArgv` and `env`, should run the
 * daemon as its child to give it the settings every daemon mcpd launches has: glibc's allocator told to
 * give memory back (DAEMON_ALLOCATOR_ENV) and node's flags (DAEMON_NODE_FLAGS). A node already running
 * with them all (a service file, or a user who gave them) needs no child; neither does the child itself
 * ({@link FOREGROUND_PARENT_ENV}), nor a user who opts out ({@link FOREGROUND_REEXEC_ENV}=0).
 * @returns the plan, or undefined to run the daemon in this process
 */
export function foregroundReexecPlan(env: NodeJS.ProcessEnv, execArgv: readonly string[], parentPid: number): ReexecPlan | undefined {
  if (env[FOREGROUND_PARENT_ENV] || env[FOREGROUND_REEXEC_ENV] === "0") return undefined;
  const flags = missingNodeFlags(env, execArgv);
  if (flags.length === 0 && !lacksAllocatorEnv(env)) return undefined;
  return {
    nodeArgs: [...execArgv, ...flags],
    env: { ...withAllocatorEnv(env), [FOREGROUND_PARENT_ENV]: String(parentPid) },
  };
}

/**
 * Runs `mcpd ARGS` (the foreground start) as a child of this process, as `plan` says, and resolves with
 * the exit code this process must end with: the child's. The child shares stdin, stdout and stderr (its
 * log lines go where this process's would) and runs in a session of its own, so a terminal's Ctrl-C
 * reaches it once, through this process, which passes on SIGTERM, SIGINT, SIGHUP (reload), SIGQUIT and
 * SIGUSR2. A child killed by a signal is answered by this process ending by that signal too.
 *
 * The daemon's pid (in `mcpd status` and the pid file) is the child's; a supervisor signals this one.
 */
export function runForegroundChild(ctx: CliContext, plan: ReexecPlan, args: readonly string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...plan.nodeArgs, binPath(), ...args], {
      stdio: "inherit",
      env: plan.env,
      cwd: ctx.cwd,
      detached: true,
    });
    const forward = (signal: NodeJS.Signals): void => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    };
    for (const s of FORWARDED_SIGNALS) process.on(s, forward);
    const done = (): void => {
      for (const s of FORWARDED_SIGNALS) process.off(s, forward);
    };
    child.once("error", (err) => {
      done();
      eprintln(ctx, `cannot start the daemon: ${err.message}`);
      resolve(1);
    });
    child.once("exit", (code, signal) => {
      done();
      if (signal === null) return resolve(code ?? 1);
      // Our handlers are gone: the same signal ends this process as it ended the child.
      process.kill(process.pid, signal);
      resolve(128 + (constants.signals[signal] ?? 0));
    });
  });
}

/**
 * In the daemon a foreground start runs as its child: shuts it down (SIGTERM to itself, the daemon's own
 * graceful stop) once the parent named by {@link FOREGROUND_PARENT_ENV} is no longer its parent (killed
 * with SIGKILL, say), so a supervisor that killed the process it started leaves no daemon behind. The
 * variable is removed from the environment, which the servers may inherit. No-op in any other process.
 */
export function watchForegroundParent(env: NodeJS.ProcessEnv): void {
  const parent = Number(env[FOREGROUND_PARENT_ENV]);
  delete env[FOREGROUND_PARENT_ENV];
  if (!Number.isSafeInteger(parent) || parent <= 0) return;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    process.kill(process.pid, "SIGTERM");
  }, PARENT_CHECK_MS);
  timer.unref();
}
