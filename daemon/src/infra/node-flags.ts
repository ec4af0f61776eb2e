/**
 * Node (V8) flags for the daemon process, given on its command line wherever mcpd launches it (`mcpd start`,
 * the systemd and launchd service files, and `mcpd start --foreground`, which runs the daemon as its child
 * with them: see cli/foreground-reexec.ts).
 *
 * `--max-semi-space-size=2`: V8's young generation (two semi-spaces) grows up to 16 MB each under an
 * allocation burst such as 1,000 clients connecting, and keeps them. Capped at 2 MB (measured: 20 servers,
 * 1,000 clients, 82 -> 70 MB of RSS; the daemon's CPU per relayed call 12.7 -> 12.6 µs, while 1 MB cost
 * ~9% more CPU per call for 1 MB less RSS).
 *
 * `--expose-gc`: lets the daemon's garbage pacer (infra/garbage-pacer.ts) collect once many megabytes of
 * client buffers were let go, which V8 alone leaves in the heap for seconds (docs/operations.md, "The
 * daemon's memory"). Without it the pacer does nothing.
 */
export const DAEMON_NODE_FLAGS = ["--max-semi-space-size=2", "--expose-gc"] as const;

/** The flag's name without its value and with `_` as `-` (node accepts both spellings). */
function flagName(flag: string): string {
  const eq = flag.indexOf("=");
  return (eq < 0 ? flag : flag.slice(0, eq)).replace(/_/g, "-");
}

/**
 * The {@link DAEMON_NODE_FLAGS} to put before the script when spawning the daemon with `env`: those the
 * user's NODE_OPTIONS does not set already (node's command line wins over NODE_OPTIONS, so ours would
 * override theirs).
 */
export function daemonNodeFlags(env: NodeJS.ProcessEnv): string[] {
  const own = new Set(
    (env.NODE_OPTIONS ?? "")
      .split(/\s+/)
      .filter((w) => w.startsWith("--"))
      .map(flagName),
  );
  return DAEMON_NODE_FLAGS.filter((f) => !own.has(flagName(f)));
}

/**
 * The {@link daemonNodeFlags} a process started with `execArgv` (node's own flags, `process.execArgv`)
 * and `env` runs without: empty when it already has them all.
 */
export function missingNodeFlags(env: NodeJS.ProcessEnv, execArgv: readonly string[]): string[] {
  const have = new Set(execArgv.map(flagName));
  return daemonNodeFlags(env).filter((f) => !have.has(flagName(f)));
}
