import { HTTP_RUNTIME_DEFAULTS } from "./defaults-http.js";

/**
 * Defaults of the daemon, in one place. Units are in the names. Per-server config keys (`timeout`,
 * `idleTimeout`, ...) keep the names users already write in their files; their defaults live here.
 * docs/configuration.md documents every one of them; keep the two in step.
 *
 * `CONFIG_DEFAULTS` holds the defaults of what a config file can set (per server and under `mcpd`);
 * `RUNTIME_DEFAULTS` below, the running daemon's own limits.
 */
export const CONFIG_DEFAULTS = {
  /** Per-server `timeout`: deadline of one request to a server, in ms. */
  requestTimeoutMs: 30_000,
  /** Per-server `maxTotalTimeout`: progress notifications restart `timeout`, but never past this total, in ms. */
  maxTotalTimeoutMs: 300_000,
  /** Per-server `startup`: `eager` starts the server with the daemon; `lazy` on first use. */
  startup: "eager",
  /** Per-server `idleTimeout`: stop a server after this long without use, in ms. 0 = never. */
  idleTimeoutMs: 0,
  /**
   * Per-server `maxConcurrency`: requests in flight to one server at a time. 64 keeps a pipelining server
   * busy (measured: throughput stops growing past ~64 in flight over stdio) without flooding it.
   */
  maxConcurrency: 64,
  /**
   * Per-server `maxQueue`: requests allowed to wait for a concurrency slot; more are refused (MCPD_QUEUE_FULL).
   * Sized for many agents at once (each connection may have 1,024 in flight), still bounded.
   */
  maxQueue: 10_000,
  /** Per-server `restart`: crash-loop breaker and backoff for restarting a server that died. */
  restart: {
    /** Restarts allowed within `windowMs`; one more and the server is marked failed. */
    maxRestarts: 5,
    /** The sliding window the restarts are counted in, in ms. */
    windowMs: 60_000,
    /** Delay before the first restart, in ms; later delays grow (exponential backoff) up to `maxDelayMs`. */
    initialDelayMs: 500,
    /** Largest delay between restarts, in ms. */
    maxDelayMs: 30_000,
  },
  /** Per-server `sharing`: `shared` = one upstream session for every client; `per-client` = one each. */
  sharing: "shared",
  /** Per-server `healthCheckIntervalMs`: ping an idle server this often, in ms. 0 disables. */
  healthCheckIntervalMs: 30_000,
  /**
   * Per-server `envMode` (stdio): `allowlist` passes a stdio server only the variables in the transport
   * layer's `ENV_ALLOWLIST` (PATH, HOME, locale, temp dir, XDG, proxy and CA-bundle settings) plus its own
   * `env`, so one server never sees another's token; `inherit` passes the daemon's whole environment.
   */
  envMode: "allowlist",
  /** `mcpd.logLevel`: the daemon's log level. */
  logLevel: "info",
  /**
   * Per-server `logLevel`: the level of that server's lines in the daemon's log (a server being debugged
   * at `debug` while the rest stay at `info`). null: the daemon's own level, followed as reloads change it.
   */
  serverLogLevel: null,
  /**
   * Per-server `protocolEra`: `auto` probes a server with `server/discover` on its first start (a 2026-era
   * answer: the 2026 era; anything else: `initialize`, the 2025 era) and remembers the era per config.
   */
  protocolEra: "auto",
  /**
   * `mcpd.http`: the HTTP front end. On by default, on loopback only (127.0.0.1 and ::1), behind a bearer
   * token. 7767 ("MC" in ASCII) is fixed so client configs keep working across restarts; 0 = any free port.
   */
  http: {
    enabled: true,
    port: 7767,
    host: "127.0.0.1",
    allowRemote: false,
    /** Sessions (Streamable HTTP and legacy SSE together) open at once; the next initialize gets 503. */
    maxSessions: 256,
    /**
     * A Streamable HTTP session with no request being answered and no stream open for this long ends (its
     * client gets 404 and initializes again), in ms.
     */
    sessionIdleMs: 30 * 60_000,
    /**
     * A `tools/call`, `prompts/get`, `resources/read` or `completion/complete` not answered within this
     * many ms (and with nothing else for it before) is switched from a JSON answer to an SSE stream, primed
     * with an event id, so a long call can be resumed if the connection drops; one answered sooner leaves as
     * plain JSON. 0: always on SSE. Measured against 0, the official SDK client with 16 calls in flight:
     * calls/s +14%, its CPU per call -15% (no stream parser per response), the daemon's -7%.
     */
    streamAfterMs: 50,
    /**
     * A request's headers and body must arrive within this many ms (counted from the connection, for its
     * first request); past it the request gets 408 and its connection is closed. A slow client (slowloris)
     * holds a connection no longer than this.
     */
    requestTimeoutMs: 30_000,
  },
  /**
   * `mcpd.maxInputRounds`: how many times a 2026-era server may answer one call relayed for a 2025-era
   * client with `input_required` (mcpd asks the client, then retries); one more and the call fails
   * (MCPD_INPUT_ROUNDS_EXCEEDED).
   */
  maxInputRounds: 8,
  /**
   * `mcpd.requestStateTtlMs`: how long a 2026-era client has to retry with the `requestState` mcpd gave it
   * for a 2025-era server's mid-call request, in ms; then the server's request is answered with an error
   * and the call is cancelled.
   */
  requestStateTtlMs: 60_000,
  /** Largest config file read, in bytes; a bigger file is refused (MCPD_CONFIG_INVALID). */
  maxConfigFileBytes: 4 * 1024 * 1024,
  /** Deepest nesting of arrays/objects accepted in a config file. */
  maxConfigNestingDepth: 64,
  /** Most globs in one `include` or `exclude` list (of a server's filter or a profile). */
  maxGlobsPerList: 1_000,
  /** Longest glob accepted, in characters (in the config, and in a connection's `tools` selection). */
  maxGlobChars: 256,
  /** Most profiles under `mcpd.profiles`. */
  maxProfiles: 256,
  /** A profile's `toolSearch` (docs/tool-search.md): `auto` is on past `autoThreshold` tools (VS Code refuses over 128). */
  toolSearch: { mode: "off", autoThreshold: 100, callTool: false },
  /**
   * `mcpd.telemetry.otlp`: span export over OTLP/HTTP (JSON), off unless `endpoint` is set. Spans are sent
   * in batches: the oldest waits at most `batchDelayMs`; past `maxQueueSpans` waiting, new ones are dropped.
   */
  telemetryOtlp: { serviceName: "mcpd", batchDelayMs: 1_000, exportTimeoutMs: 10_000, maxQueueSpans: 2_048 },
} as const;

/** The type of {@link CONFIG_DEFAULTS}. */
export type ConfigDefaults = typeof CONFIG_DEFAULTS;

/** Defaults of the running daemon (socket, router, shutdown, logs). Units are in the names. */
export const RUNTIME_DEFAULTS = {
  /**
   * How long mcpd gathers a 2025-era server's requests for one 2026-era call before answering it
   * `input_required` with them, in ms: each request that comes within it of the one before joins (a server
   * asking for several things at once writes them one after the other).
   */
  inputGatherMs: 10,
  ...HTTP_RUNTIME_DEFAULTS,
  /** Largest line accepted from a client on the socket, in bytes. */
  maxMessageBytes: 4 * 1024 * 1024,
  /** Requests one connection may have in flight; more are answered -32063. */
  maxInFlightPerConnection: 1024,
  /** Bytes waiting to be written to one client before it is disconnected as not reading. */
  maxOutgoingBytesPerConnection: 16 * 1024 * 1024,
  /**
   * `mcpd.maxConnections`: client connections accepted at once; the one over gets -32072
   * (MCPD_TOO_MANY_CONNECTIONS) and is closed. The daemon accepts fewer when its open-file limit leaves
   * less room once {@link fdReserve} and its servers' share are set aside.
   */
  maxConnections: 4096,
  /**
   * `mcpd.fdReserve`: open files kept free for the daemon's own use (log file, config and cache files,
   * restarts in progress, a burst of refused connections), besides each server's share
   * ({@link fdsPerStdioServer} and the others).
   */
  fdReserve: 64,
  /** Open files set aside per stdio server: its three pipes, plus three more while a restart spawns its successor. */
  fdsPerStdioServer: 8,
  /** Open files set aside per HTTP or legacy SSE server: its keep-alive sockets (16 by default) and an SSE stream. */
  fdsPerHttpServer: 20,
  /** Open files set aside per WebSocket server: its socket, and a second one while it reconnects. */
  fdsPerWsServer: 4,
  /**
   * `mcpd.maxBufferedBytesTotal`: bytes the daemon holds for all its clients together, in bytes: their
   * unfinished input lines plus output not yet written to them. Past it, the connection holding the most
   * is closed (-32073, MCPD_BUFFER_BUDGET_EXCEEDED), then the next, until the total is under it again.
   * 128 MiB: eight connections' worth of {@link maxOutgoingBytesPerConnection}.
   */
  maxBufferedBytesTotal: 128 * 1024 * 1024,
  /**
   * The garbage pacer (infra/garbage-pacer.ts, active when node runs with `--expose-gc`, as every daemon
   * mcpd launches does): a full collection is forced once this many bytes of client buffers were let go
   * (lines read, ended or dropped, output written, connections closed over a limit)...
   */
  gcPaceReleasedBytes: 16 * 1024 * 1024,
  /**
   * ...and at most once per this many ms. A collection with the daemon's usual heap takes a few ms, so a
   * client streaming lines at it cannot make it spend more than a few % of a core collecting.
   */
  gcPaceIntervalMs: 250,
  /**
   * ...and once nothing was let go for {@link gcPaceCompactQuietMs} after one, when V8's heap has this much
   * room beyond what is in use (and what is in use is under half of it), a compacting collection, so that
   * V8 gives back the pages a load grew its heap to (measured: 10 never-read GET streams under a flood left
   * 20 MiB in use in 150 MiB of heap, +130 to +141 MiB of RSS 5 s after the load; +19 MiB compacted).
   */
  gcPaceCompactRoomBytes: 32 * 1024 * 1024,
  /** The quiet time before that compacting collection, in ms (compacting under a load makes its peak higher). */
  gcPaceCompactQuietMs: 1_000,
  /**
   * `mcpd.partialLineTimeoutMs`: a line from a client must be finished (its newline received) within this
   * many ms of its first byte, or the connection is closed (-32074, MCPD_LINE_TIMEOUT). Clients write
   * each message whole, so on a local socket a line takes microseconds; the deadline only ends stalls.
   */
  partialLineTimeoutMs: 30_000,
  /** Deadline for a server-to-client request relayed to a client (sampling can take a while), in ms. */
  clientRequestTimeoutMs: 300_000,
  /** Most globs in a connection's one-off `tools` selection (`mcpd/select {"tools": [...]}`). */
  maxSelectionGlobs: 100,
  /**
   * Names whose verdict one compiled filter remembers (a Map lookup instead of a glob match on every
   * call); past it the memory is cleared and refilled. Names come from the catalog, so it rarely fills.
   */
  filterMemoEntries: 10_000,
  /** Aggregate view: how long a listing or an unknown name waits for servers still starting, in ms. */
  aggregateSettleMs: 10_000,
  /**
   * 2026-era clients: `ttlMs` on a list, read or `server/discover` result that has none of its own (0: stale
   * at once; mcpd's lists follow its servers, which may change them at any time, and a client that wants
   * to hear of changes opens `subscriptions/listen`).
   */
  modernTtlMs: 0,
  /** 2026-era `subscriptions/listen`: most resource URIs one listen subscribes to (the rest are left out of its acknowledgement). */
  maxListenUris: 256,
  /** 2026-era clients: `cacheScope` of such a result ("private": views differ by token and profile). */
  modernCacheScope: "private",
  /** How often the daemon checks that its socket file is still there (and re-creates it when removed), in ms. */
  socketWatchIntervalMs: 2_000,
  /** Tries to take the daemon's lock file (`<socket>.lock`) while other starting daemons replace a stale one. */
  daemonLockAttempts: 100,
  /** Pause between those tries, in ms (also the least age of a break file whose holder is gone). */
  daemonLockRetryMs: 20,
  /** A `<socket>.lock.break` file older than this is removed whoever holds it, in ms (its breaker is stuck). */
  daemonLockBreakStaleMs: 10_000,
  /**
   * Shutdown: how long in-flight requests may finish before they are answered with an error, in ms; the
   * servers' own requests (list re-reads, subscriptions) get what is left of it before they are stopped.
   */
  shutdownGraceMs: 5_000,
  /**
   * Reload: how long a server that is removed, disabled or restarted (its transport changed) lets its running
   * calls finish before it is stopped, in ms; calls meanwhile wait in its queue (for the new session, when it
   * restarts).
   */
  reloadDrainMs: 5_000,
  /**
   * Least time between the starts of two re-reads of one server's tool, prompt or resource list, in ms.
   * A server that sends `list_changed` faster (some send it after every response) is re-read at this rate.
   */
  listRefreshMinIntervalMs: 1_000,
  /**
   * Longest wait for the answer to the `server/discover` that probes a server's era (`protocolEra: "auto"`),
   * in ms, and never longer than the server's `timeout`. A stdio server silent that long speaks the 2025 era
   * (some ignore requests before `initialize`); an HTTP server's silence proves nothing (the start fails).
   */
  eraProbeTimeoutMs: 10_000,
  /**
   * A 2026 server's `subscriptions/listen` stream that ended while its session lives is opened again after
   * this long, in ms (its lists re-read then: changes may have been missed), at most `listenReopenMax` times.
   */
  listenReopenDelayMs: 1_000,
  listenReopenMax: 10,
  /**
   * stderr lines kept per server across its restarts, for `mcpd logs SERVER` (each run's lines are added
   * when it ends, with a marker line; the running process's own last lines are kept by its transport).
   */
  serverStderrHistoryLines: 200,
  /** ...and at most this many bytes of them (UTF-8); a line longer than a quarter of it is cut. */
  serverStderrHistoryBytes: 64 * 1024,
  /**
   * `mcpd auth`: how long the daemon waits for the browser to come back to its loopback listener after
   * the authorization URL was handed out, in ms.
   */
  authFlowTimeoutMs: 300_000,
  /** Secret values of replaced OAuth tokens still masked in logs and errors (a late line may quote one). */
  retiredSecretsKept: 64,
  /** The background daemon's log file rotates at this size... */
  logFileMaxBytes: 10 * 1024 * 1024,
  /** ...keeping this many old files. */
  logFileMaxFiles: 3,
  /**
   * Bytes of log lines held in memory while the log file cannot be written (a full disk), written once it
   * can; lines past it are dropped and counted (`mcpd status`).
   */
  logHeldMaxBytes: 1024 * 1024,
  /** While the log file cannot be written, what is held is tried again this often (and with every new line), in ms. */
  logRetryMs: 1000,
  /**
   * A foreground daemon that is shutting down waits this long for what stderr holds (a stopped terminal, a
   * pipe nobody reads) to be written, then discards it, in ms.
   */
  stderrCloseWaitMs: 1000,
  /**
   * Once the daemon has shut down, its process exits after at most this long even if a write it cannot
   * cancel (to a stopped terminal) still keeps Node's event loop alive, in ms.
   */
  exitLingerMs: 500,
  /**
   * Largest private file the daemon reads back from its state directory (the tool cache, the OAuth
   * store, the child records), in bytes; a larger one is ignored, and replaced by the next write.
   */
  stateFileMaxBytes: 64 * 1024 * 1024,
  /**
   * Tool search: the matches `search_tools` answers without a `limit` and at most, the longest query read (characters), and
   * the tools a search-mode session keeps listed beside it (found or used; past it, the oldest found and unused leave first).
   */
  toolSearchLimit: 5,
  toolSearchMaxLimit: 20,
  toolSearchMaxQueryChars: 500,
  toolSearchKeptTools: 32,
} as const;
