/**
 * Timing of the `mcpd` command's dealings with the daemon. Units in the names. A module of its own, with no
 * imports, so that `mcpd connect` reads it without loading the daemon-starting code.
 */
export const CLI_DEFAULTS = {
  /** `mcpd start`: how long to wait for a detached daemon's socket to answer (env `MCPD_START_TIMEOUT_MS`). */
  startTimeoutMs: 10_000,
  /**
   * `mcpd connect`: how long the daemon has to answer the bridge's `mcpd/select` once its socket accepted the
   * connection (env `MCPD_CONNECT_TIMEOUT_MS`). A daemon that does not (stopped, or stuck) counts as not
   * running. The same bound as the client SDK's `connectTimeout`.
   */
  connectTimeoutMs: 10_000,
  /** `mcpd stop`: how long the daemon has to exit after `mcpd/shutdown` before SIGTERM. */
  stopTimeoutMs: 20_000,
  /** `mcpd stop`: how long to wait after SIGTERM before giving up. */
  termTimeoutMs: 10_000,
  /** Polling interval while waiting for a socket or a process, in ms. */
  pollMs: 50,
  /** Log lines shown when a daemon fails to come up. */
  failureLogLines: 20,
  /** Bytes of the log read to explain a failure. */
  failureLogBytes: 64 * 1024,
  /**
   * The largest compile cache entry read (compile-cache.ts): a bundled file's source plus V8's code for it,
   * a few hundred KiB for the largest. Anything bigger is not one mcpd wrote, and is compiled from source.
   */
  compileCacheMaxEntryBytes: 16 * 1024 * 1024,
  /**
   * When a process writes the compile cache entries it lacked, if it has not exited by then: late enough that
   * a command's start-up is compiled (and a short command has exited), early enough that `mcpd connect`,
   * which an agent may end with a signal, has written them.
   */
  compileCacheWriteDelayMs: 2_000,
  /** A compile cache temporary file older than this was left by a process that died while writing it. */
  compileCacheTempMaxAgeMs: 60_000,
  /** A compile cache directory that records no bundle (a write was cut short) is removed once this old. */
  compileCacheStaleEntryMaxAgeMs: 7 * 24 * 3600_000,
} as const;

/** The environment variable `name` when it is a positive integer (ms), else `fallback`. */
export function envTimeoutMs(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  const n = raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : fallback;
}
