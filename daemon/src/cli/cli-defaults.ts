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
  /**
   * Every other command that talks to the daemon: how long it has to accept the connection and answer its
   * first message (env `MCPD_CONNECT_TIMEOUT_MS`, as for `mcpd connect`). A daemon that does not (stopped,
   * or stuck) counts as not running (exit 3), unless the request's own deadline (`mcpd call --timeout`) ends
   * first. Shorter than `mcpd connect`'s: a person at a terminal waits for this one.
   */
  commandConnectTimeoutMs: 5_000,
  /**
   * `mcpd connect`: the longest line of the daemon's that the bridge parses to see which of its client's
   * requests are answered (parsing a 1 MiB answer costs it about 2 ms); a longer one streams past unparsed,
   * its id read off its start.
   */
  connectTapMaxLineBytes: 64 * 1024,
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
} as const;

/** The environment variable `name` when it is a positive integer (ms), else `fallback`. */
export function envTimeoutMs(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  const n = raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : fallback;
}
