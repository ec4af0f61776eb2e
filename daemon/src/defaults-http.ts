/**
 * Defaults of the HTTP front end and its dashboard, part of RUNTIME_DEFAULTS (defaults.ts, where every
 * default is read from). Units are in the names.
 */
export const HTTP_RUNTIME_DEFAULTS = {
  /** HTTP front end: bytes of SSE events kept per session so a dropped stream can resume with Last-Event-ID. */
  httpReplayBytesPerSession: 1024 * 1024,
  /**
   * HTTP front end: POSTs being answered at once in one session (each may hold an SSE stream open); the one
   * over gets 429. Agents keep a handful in flight; 64 leaves room for parallel tool calls.
   */
  httpMaxStreamsPerSession: 64,
  /**
   * HTTP front end: a POST answered on an SSE stream holds its first bytes (headers, priming event) this
   * long, so an answer that comes at once leaves with them in one write, in ms. Measured: three writes per
   * tools/call were ~40% of the daemon's CPU on this path.
   */
  httpSseCoalesceMs: 2,
  /**
   * HTTP front end: a request body arriving in more than one read is copied into blocks of this many bytes
   * (http/body-chunks.ts), reused from body to body: a mapping of its own each (over the allocator's mmap
   * threshold), given back whole. Left as Node's parser hands them over, the reads of 100 bodies of 4 MiB
   * refused over the budget were garbage until V8 next collected, and their small ones kept the brk heap
   * from shrinking (measured: peak +205 to +225 MiB, +21 to +66 MiB after forced collections; with the
   * blocks +168 to +173 and +5 to +22 MiB).
   */
  httpBodyBlockBytes: 256 * 1024,
  /** HTTP front end: most body blocks kept idle for the next bodies (64: 16 MiB). */
  httpBodyBlocksIdle: 64,
  /** HTTP front end: idle body blocks no body took within this many ms are let go (the garbage pacer told), in ms. */
  httpBodyBlocksIdleMs: 1_000,
  /** HTTP front end: the `retry:` advertised on SSE streams (how soon a client reconnects), in ms. */
  httpSseRetryMs: 1_000,
  /**
   * HTTP front end: a connection idle between requests is closed after this many ms (or after
   * `mcpd.http.requestTimeoutMs`, when that is lower). Node's default; clients' pools reuse a connection
   * within it, and an idle one costs the daemon a descriptor.
   */
  httpKeepAliveMs: 5_000,
  /**
   * HTTP front end: when it closes (shutdown, a reload that moves it), connections still busy (an answer
   * being written, a request a client left half sent) get this long before they are cut, in ms. Idle ones
   * are closed at once.
   */
  httpCloseLingerMs: 500,
  /** A 2026-era `subscriptions/listen` over HTTP: an SSE comment this often keeps its idle stream open through proxies, in ms. */
  httpListenKeepAliveMs: 15_000,
  /**
   * HTTP front end: scoped tokens (`mcpd http --profile NAME`, `--server NAME`) that may exist at once;
   * issuing one more is refused until one is revoked. Each is checked on every request that is not the
   * main token's, so the list stays short.
   */
  httpMaxScopedTokens: 64,
  /** Dashboard: how long a login link of `mcpd dashboard` may be opened (once), in ms. */
  dashboardLoginTtlMs: 60_000,
  /** Dashboard: how long a session cookie opens the dashboard after its login, in ms. */
  dashboardSessionTtlMs: 12 * 60 * 60 * 1000,
  /** Dashboard: login links not yet used, and sessions, kept at once (the oldest goes first). */
  dashboardMaxLogins: 16,
  /** Dashboard: the live stream's low-rate refresh while someone watches (state changes are pushed at once), in ms. */
  dashboardTickMs: 1_000,
  /** Dashboard: lines of the daemon's log, and of a server's stderr, the page is sent. */
  dashboardLogLines: 200,
} as const;
