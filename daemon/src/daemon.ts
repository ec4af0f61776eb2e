import { rmSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, McpdShutdown, type Logger } from "@mcpd/protocol";
import { createTransport } from "@mcpd/transports";
import { resolvePaths, type McpdPaths } from "@mcpd/client";
import {
  explicitConfigOrigin,
  httpPortFromEnv,
  loadConfig,
  LOG_LEVELS,
  type HttpSettings,
  type LoadedConfig,
  type LogLevel,
} from "./config/index.js";
import { HttpFront } from "./http/http-front.js";
import { CONFIG_DEFAULTS, RUNTIME_DEFAULTS } from "./defaults.js";
import { createControl } from "./socket/control.js";
import { BufferBudget } from "./infra/buffer-budget.js";
import { RotatingFileStream, type LogWriteStatus } from "./infra/log-file.js";
import { JsonLogger } from "./infra/logger.js";
import { MCPManager } from "./supervision/manager.js";
import { Router } from "./router/router.js";
import { SecretScrubber } from "./secrets/index.js";
import { connectionCap, openFileCount, openFileLimit } from "./socket/fd-budget.js";
import type { SocketLimits } from "./socket/client-limits.js";
import { prepareSocketPath } from "./socket/socket-path.js";
import { SocketServer } from "./socket/socket-server.js";
import { SocketWatch, assertNoDaemonWithoutSocket } from "./socket/socket-watch.js";
import { preparePrivateDir } from "./infra/state-dir.js";
import { writePrivateFile } from "./infra/private-file.js";
import { StderrLog, ignoreStdioErrors } from "./infra/stderr-log.js";
import { VERSION } from "./version.js";
import { AuthStore } from "./auth/auth-store.js";
import { AuthFlows } from "./auth/auth-flows.js";
import { isoTime } from "./infra/iso-time.js";
import { DaemonLifecycle } from "./lifecycle/daemon-lifecycle.js";
import { abandonOnAbort } from "./lifecycle/reload-queue.js";
import { shuttingDownError } from "./lifecycle/shutting-down-error.js";

export interface RunDaemonOptions {
  configFile?: string;
  logLevel?: string;
  /** true: log to stderr (systemd, launchd, debugging). false: JSON log file with rotation. */
  foreground: boolean;
  env?: NodeJS.ProcessEnv;
  /** Install SIGTERM/SIGINT/SIGHUP handlers (default true). */
  handleSignals?: boolean;
}

/** A running daemon, for embedding and tests. */
export interface DaemonHandle {
  paths: McpdPaths;
  manager: MCPManager;
  router: Router;
  /** Resolves with the exit code once the daemon has shut down. */
  done: Promise<number>;
  shutdown(reason?: string): Promise<number>;
  reload(): Promise<unknown>;
}

/**
 * The level named by `--log-level` or else `MCPD_LOG_LEVEL`, if either is set.
 * @throws ConfigError (MCPD_CONFIG_INVALID) naming the setting, for a value that is not a level.
 */
function daemonLogLevel(option: string | undefined, envValue: string | undefined): LogLevel | undefined {
  const [value, origin] = option !== undefined ? [option, "--log-level"] : [envValue || undefined, "MCPD_LOG_LEVEL"];
  if (value === undefined) return undefined;
  if ((LOG_LEVELS as readonly string[]).includes(value)) return value as LogLevel;
  throw new ConfigError(`${origin} must be one of ${LOG_LEVELS.join(", ")}, got ${JSON.stringify(value)}`);
}

/**
 * Starts the daemon in this process: checks and claims the socket, writes the pid file, starts every
 * eager server, and serves until SIGTERM/SIGINT or `mcpd/shutdown`. SIGHUP reloads the config.
 * @throws SocketSetupError (MCPD_ALREADY_RUNNING, MCPD_UNSAFE_SOCKET_DIR), StateDirError (MCPD_UNSAFE_STATE_DIR),
 *   ConfigError (MCPD_CONFIG_INVALID)
 */
export async function startDaemon(options: RunDaemonOptions): Promise<DaemonHandle> {
  const env = options.env ?? process.env;
  const paths = resolvePaths(env, options.configFile ? { configFile: options.configFile } : {});
  // A file named with --config or MCPD_CONFIG must exist (a typo must not mean zero servers); the default may be absent.
  const namedBy = explicitConfigOrigin(env, options.configFile);
  const load = (): Promise<LoadedConfig> =>
    loadConfig({ file: paths.configFile, env, required: namedBy !== undefined, ...(namedBy ? { namedBy } : {}) });
  let config: LoadedConfig = await load();
  const level = daemonLogLevel(options.logLevel, env.MCPD_LOG_LEVEL) ?? config.settings.logLevel ?? CONFIG_DEFAULTS.logLevel;

  assertNoDaemonWithoutSocket(paths.socketPath);
  await prepareSocketPath(paths.socketPath);
  // Nothing is opened in the state directory (log, tool cache, child records) before it passes the
  // socket directory's checks: another user's directory could hold a link to one of our files there.
  const stateDirNote = preparePrivateDir(paths.stateDir, "state directory");
  ignoreStdioErrors();
  const onResume = (s: LogWriteStatus): void =>
    root.warn({ dropped: s.droppedLines, err: s.lastError }, "the log could not be written for a while; lines were dropped");
  const openLogFile = (): RotatingFileStream =>
    new RotatingFileStream(paths.logFile, {
      maxBytes: RUNTIME_DEFAULTS.logFileMaxBytes,
      maxFiles: RUNTIME_DEFAULTS.logFileMaxFiles,
      onResume,
    });
  const sink = options.foreground
    ? new StderrLog(process.stderr, {
        openFallback: openLogFile,
        onFallback: (err) => root.warn({ err }, `stderr cannot be written; logging to ${paths.logFile} from now on`),
      })
    : openLogFile();
  // JSON lines to stderr in the foreground, to the log file otherwise.
  const root = new JsonLogger(level, sink);
  const log: Logger = root;
  for (const w of config.warnings) root.warn({ file: config.file }, w);
  if (stateDirNote) root.warn({ dir: paths.stateDir }, stateDirNote);

  // OAuth tokens and client registrations: 0600 files in <stateDir>/auth, never anywhere else.
  const authStore = new AuthStore(join(paths.stateDir, "auth"), log);
  const manager = new MCPManager({
    createTransport: (cfg, logger, server) => {
      const auth = authFlows.providerFor(server);
      return createTransport(cfg, auth ? { logger, auth } : { logger });
    },
    logger: log,
    cacheDir: paths.cacheDir,
    childrenFile: paths.childrenFile,
    // Declared upstream on behalf of clients; requests are relayed only to a client that declared them.
    clientCapabilities: { roots: { listChanged: true }, sampling: {}, elicitation: {} },
  });
  const authFlows = new AuthFlows(authStore, manager, log);
  // Secret values (the loaded config's and the running servers', OAuth tokens) are masked in every line
  // the root logger writes from here on, and in what the router and the control methods say.
  const secrets = new SecretScrubber(() => [...config.servers, ...manager.servers.map((h) => h.config)], authStore);
  root.setScrubber(secrets.scrubValue);
  const startedAt = Date.now();

  // The daemon's own descriptors, counted once it listens and before any server runs; the rest of the
  // open-file limit is shared between the servers, fdReserve and client connections.
  const fdLimit = openFileLimit();
  let fdsInUse = 0;
  const socketLimits = (cfg: LoadedConfig): SocketLimits => {
    const { cap, why } = connectionCap({
      maxConnections: cfg.settings.maxConnections ?? RUNTIME_DEFAULTS.maxConnections,
      fdReserve: cfg.settings.fdReserve ?? RUNTIME_DEFAULTS.fdReserve,
      limit: fdLimit,
      inUse: fdsInUse,
      servers: cfg.servers,
    });
    return {
      maxConnections: cap,
      maxConnectionsWhy: why,
      partialLineTimeoutMs: cfg.settings.partialLineTimeoutMs ?? RUNTIME_DEFAULTS.partialLineTimeoutMs,
    };
  };
  // Bytes held for clients by both faces (socket lines and output, HTTP bodies, output and kept events).
  const budgetOf = (cfg: LoadedConfig): number => cfg.settings.maxBufferedBytesTotal ?? RUNTIME_DEFAULTS.maxBufferedBytesTotal;
  const budget = new BufferBudget(budgetOf(config));
  const applyLimits = (cfg: LoadedConfig): void => {
    const limits = socketLimits(cfg);
    server.setLimits(limits);
    budget.setMax(budgetOf(cfg));
    http.setConnectionCap(limits.maxConnections, () => server.connections);
    root.info(
      { maxConnections: limits.maxConnections, why: limits.maxConnectionsWhy, openFileLimit: fdLimit ?? null, fdsInUse },
      "client connection limit",
    );
  };

  // MCPD_HTTP_PORT overrides the file's port (tests and a second daemon use 0: any free port).
  const httpSettings = (cfg: LoadedConfig): HttpSettings => {
    const port = httpPortFromEnv(env);
    return port === undefined ? cfg.settings.http : { ...cfg.settings.http, port };
  };
  // One reload; the lifecycle runs them one at a time. Once shutdown begins (`signal` aborts) it changes
  // nothing more: the manager applies no diff, and the wait for the servers it started is given up (the
  // shutdown ends them). An HTTP change under way is finished first: the shutdown waits for it.
  const reload = async (signal: AbortSignal) => {
    const next = await load();
    const before = router.filtersSnapshot();
    const result = await abandonOnAbort(manager.reload(next, signal), signal);
    signal.throwIfAborted();
    router.applyFilters(next.settings, before);
    applyLimits(next);
    await http.apply(httpSettings(next));
    config = next;
    root.info({ ...result }, "config reloaded");
    // Globs that match nothing are judged once the servers the reload started are up.
    const unmatched = router.filterWarnings();
    for (const w of unmatched) root.warn({ file: next.file }, w);
    return { ...result, warnings: [...next.warnings, ...unmatched] };
  };
  const lifecycle = new DaemonLifecycle({ reload, teardown: () => teardown(), logger: log });

  const router: Router = new Router(manager, {
    logger: log,
    maxInFlightPerConnection: RUNTIME_DEFAULTS.maxInFlightPerConnection,
    clientRequestTimeoutMs: RUNTIME_DEFAULTS.clientRequestTimeoutMs,
    secrets,
    control: createControl({
      manager,
      get router() {
        return router;
      },
      info: () => ({
        pid: process.pid,
        version: VERSION,
        startedAt: isoTime(startedAt),
        uptimeMs: Date.now() - startedAt,
        socketPath: paths.socketPath,
        pidFile: paths.pidFile,
        configFile: config.file,
        configSource: config.source,
        logFile: sink.file ?? null,
        log: { ...sink.status() },
        ...server.stats(),
        socket: socketWatch.status(),
      }),
      http: () => http.status(),
      get httpTokens() {
        return http.tokens;
      },
      reload: () => lifecycle.reload(),
      shutdown: () => void lifecycle.shutdown(McpdShutdown.method),
      logTail: (n) => sink.tail(n),
      auth: authFlows,
    }),
  });
  const server = new SocketServer({
    socketPath: paths.socketPath,
    router,
    logger: log,
    maxLineBytes: RUNTIME_DEFAULTS.maxMessageBytes,
    maxOutgoingBytes: RUNTIME_DEFAULTS.maxOutgoingBytesPerConnection,
    limits: socketLimits(config),
    budget,
    traceMessages: root.isLevelEnabled("trace"),
  });
  const http = new HttpFront({
    router,
    tokenFile: join(paths.stateDir, "http-token"),
    scopedTokens: { file: join(paths.stateDir, "http-tokens.json"), max: RUNTIME_DEFAULTS.httpMaxScopedTokens },
    logger: log,
    budget,
    limits: {
      retryMs: RUNTIME_DEFAULTS.httpSseRetryMs,
      maxOutgoingBytes: RUNTIME_DEFAULTS.maxOutgoingBytesPerConnection,
      maxReplayBytes: RUNTIME_DEFAULTS.httpReplayBytesPerSession,
      maxStreamsPerSession: RUNTIME_DEFAULTS.httpMaxStreamsPerSession,
      maxBodyBytes: RUNTIME_DEFAULTS.maxMessageBytes,
    },
  });
  server.shareCapWith(() => http.openConnections);
  await manager.load(config);
  router.applyFilters(config.settings, router.filtersSnapshot());
  // Before the socket answers: once `mcpd start` returns, status already says where HTTP is (or why not).
  await http.apply(httpSettings(config));
  try {
    await server.listen();
  } catch (err) {
    await http.close();
    throw err;
  }
  fdsInUse = openFileCount() ?? 0;
  applyLimits(config);
  const socketWatch = new SocketWatch({
    socketPath: paths.socketPath,
    server,
    logger: log,
    onTakenOver: (why) => void lifecycle.shutdown(why),
  }).start();
  writePrivateFile(paths.pidFile, `${process.pid}\n`);
  root.info({ socket: paths.socketPath, config: config.file, servers: config.servers.length }, "mcpd started");

  const teardown = async (): Promise<void> => {
    socketWatch.stop();
    server.stopAccepting();
    // In-flight requests may finish within the grace; those that do not are answered MCPD_SHUTTING_DOWN.
    await router.whenIdle(RUNTIME_DEFAULTS.shutdownGraceMs);
    const err = shuttingDownError();
    for (const s of router.sessions.values()) s.failAll(err);
    await http.close();
    server.closeAll();
    authFlows.close();
    await manager.shutdown();
    rmSync(paths.socketPath, { force: true });
    rmSync(paths.pidFile, { force: true });
    root.info("mcpd stopped");
    removeSignals();
  };

  const onTerm = (): void => void lifecycle.shutdown("signal");
  const onHup = (): void => {
    lifecycle.reload().catch((err: Error) => {
      if (!lifecycle.shuttingDown) root.error({ err: err.message }, "reload failed; keeping the old config");
    });
  };
  const removeSignals = (): void => {
    process.off("SIGTERM", onTerm);
    process.off("SIGINT", onTerm);
    process.off("SIGHUP", onHup);
  };
  if (options.handleSignals !== false) {
    process.on("SIGTERM", onTerm);
    process.on("SIGINT", onTerm);
    process.on("SIGHUP", onHup);
  }

  manager.startAll().then(
    () => {
      for (const w of router.filterWarnings()) root.warn({ file: config.file }, w);
    },
    (err: Error) => root.error({ err: err.message }, "starting servers failed"),
  );
  return {
    paths,
    manager,
    router,
    done: lifecycle.done,
    shutdown: (reason) => lifecycle.shutdown(reason),
    reload: () => lifecycle.reload(),
  };
}

/** Runs the daemon until it shuts down; returns the process exit code. */
export async function runDaemon(options: RunDaemonOptions): Promise<number> {
  const d = await startDaemon(options);
  return d.done;
}
