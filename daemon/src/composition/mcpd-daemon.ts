import { join } from "node:path";
import { McpdShutdown, type DaemonInfo } from "@mcpd/protocol";
import { createTransport, type OAuthClock } from "@mcpd/transports";
import type { McpdPaths } from "@mcpd/client";
import type { LoadedConfig } from "../config/index.js";
import { RUNTIME_DEFAULTS } from "../defaults.js";
import { AuthFlows } from "../auth/auth-flows.js";
import { AuthStore } from "../auth/auth-store.js";
import { createControl } from "../control/control-handlers.js";
import type { DaemonControl } from "../control/daemon-control.js";
import { metricsSnapshot } from "../metrics/metrics-snapshot.js";
import { PrometheusMetrics } from "../metrics/prometheus.js";
import { HttpFront } from "../http/http-front.js";
import { Dashboard } from "../http/dashboard/dashboard.js";
import type { DaemonLogger } from "../infra/daemon-logger.js";
import { isoTime } from "../infra/iso-time.js";
import { writePrivateFile } from "../infra/private-file.js";
import { DaemonLifecycle } from "../lifecycle/daemon-lifecycle.js";
import { abandonOnAbort } from "../lifecycle/reload-queue.js";
import { shuttingDownError } from "../lifecycle/shutting-down-error.js";
import { Router } from "../router/router.js";
import { SecretScrubber } from "../secrets/index.js";
import { SocketServer } from "../socket/socket-server.js";
import { type DaemonLock, removeOwnPidFile } from "../socket/daemon-lock.js";
import { SocketWatch } from "../socket/socket-watch.js";
import { Telemetry } from "../telemetry/telemetry.js";
import { MCPManager } from "../supervision/manager.js";
import { ManagerDirectory } from "./manager-directory.js";
import { VERSION } from "../version.js";
import { ConfigSource } from "./config-source.js";
import { ConnectionBudget } from "./connection-budget.js";
import { BufferBudget } from "../infra/buffer-budget.js";
import { GarbagePacer } from "../infra/garbage-pacer.js";
import type { DaemonLog } from "./daemon-log.js";
import { installSignals } from "./signals.js";

/** What a reload did, as `mcpd/reload` answers it. */
export type ReloadOutcome = Awaited<ReturnType<MCPManager["reload"]>> & { warnings: string[] };

/** What the composition root is made from: the checked paths, the config as first read, the open log. */
export interface DaemonInputs {
  paths: McpdPaths;
  source: ConfigSource;
  config: LoadedConfig;
  log: DaemonLog;
  /** The daemon's claim on its socket path, released last at shutdown. */
  lock: DaemonLock;
  /** Install SIGTERM/SIGINT/SIGHUP handlers. */
  handleSignals: boolean;
  /** The clock of OAuth token lifetimes (tests inject a fake one); default the real one. */
  oauthClock?: OAuthClock;
}

/**
 * The daemon's composition root: it makes every part, in dependency order, and owns the running daemon's
 * start, reloads (one at a time, through its {@link DaemonLifecycle}) and shutdown (the router's in-flight
 * requests drained when idle, then each part closed in reverse order). Nothing here is reached through a
 * closure over a part declared later: each field is set before anything can call into it.
 */
export class McpdDaemon {
  readonly paths: McpdPaths;
  readonly manager: MCPManager;
  readonly router: Router;
  readonly lifecycle: DaemonLifecycle<ReloadOutcome>;
  private readonly log: DaemonLogger;
  private readonly source: ConfigSource;
  private config: LoadedConfig;
  private readonly daemonLog: DaemonLog;
  private readonly authStore: AuthStore;
  private readonly authFlows: AuthFlows;
  private readonly socket: SocketServer;
  private readonly http: HttpFront;
  private readonly dashboard: Dashboard;
  private readonly budget = new ConnectionBudget();
  /** Bytes held for clients by both faces (socket lines and output, HTTP bodies, output and kept events). */
  private readonly buffers: BufferBudget;
  /** Collects the client buffers both faces let go (see infra/garbage-pacer.ts). */
  private readonly pacer = GarbagePacer.withDaemonDefaults();
  /** The control methods' dispatcher the sessions call. */
  private readonly control: ReturnType<typeof createControl>;
  private readonly telemetry: Telemetry;
  /** `/metrics` on the HTTP front end. */
  private readonly metrics: PrometheusMetrics;
  private readonly startedAt = Date.now();
  private readonly socketWatch: SocketWatch;
  private removeSignals: () => void = () => {};

  constructor(private readonly inputs: DaemonInputs) {
    const { paths, config, log } = inputs;
    this.paths = paths;
    this.source = inputs.source;
    this.config = config;
    this.daemonLog = log;
    this.log = log.root;
    // OAuth tokens and client registrations: 0600 files in <stateDir>/auth, never anywhere else.
    this.authStore = new AuthStore(join(paths.stateDir, "auth"), this.log);
    this.manager = new MCPManager({
      // Called once servers start (in start()), when authFlows is set.
      createTransport: (cfg, logger, server) => {
        const auth = this.authFlows.providerFor(server);
        return createTransport(cfg, auth ? { logger, auth } : { logger });
      },
      logger: this.log,
      cacheDir: paths.cacheDir,
      childrenFile: paths.childrenFile,
      // Declared upstream on behalf of clients; requests are relayed only to a client that declared them.
      clientCapabilities: { roots: { listChanged: true }, sampling: {}, elicitation: {} },
    });
    this.authFlows = new AuthFlows(this.authStore, this.manager, this.log, undefined, inputs.oauthClock);
    // Secret values (config's, running servers', OAuth tokens) are masked in every line logged from here on, and in replies.
    const secrets = new SecretScrubber(() => [...this.config.servers, ...this.manager.servers.map((h) => h.config)], this.authStore);
    log.setScrubber(secrets.scrubValue);
    this.buffers = new BufferBudget(ConfigSource.bufferBudget(config));
    this.lifecycle = new DaemonLifecycle({ reload: (s) => this.reloadOnce(s), teardown: () => this.teardown(), logger: this.log });
    // The router sees the servers through its ports (router/upstream-port.ts), the manager behind its adapter.
    this.router = new Router(new ManagerDirectory(this.manager), {
      logger: this.log,
      maxInFlightPerConnection: RUNTIME_DEFAULTS.maxInFlightPerConnection,
      clientRequestTimeoutMs: RUNTIME_DEFAULTS.clientRequestTimeoutMs,
      secrets,
      // Sessions speak only after start(), when the control handlers below are set.
      control: (session, method, params) => this.control(session, method, params),
    });
    this.socket = new SocketServer({
      socketPath: paths.socketPath,
      router: this.router,
      logger: this.log,
      maxLineBytes: RUNTIME_DEFAULTS.maxMessageBytes,
      maxOutgoingBytes: RUNTIME_DEFAULTS.maxOutgoingBytesPerConnection,
      limits: this.budget.limits(config),
      budget: this.buffers,
      pacer: this.pacer,
    });
    this.dashboard = new Dashboard({ router: this.router, manager: this.manager, logger: this.log });
    this.telemetry = new Telemetry(this.router.spans, VERSION, this.log, (text) => secrets.scrub(text));
    this.http = new HttpFront({
      dashboard: this.dashboard,
      router: this.router,
      tokenFile: join(paths.stateDir, "http-token"),
      scopedTokens: { file: join(paths.stateDir, "http-tokens.json"), max: RUNTIME_DEFAULTS.httpMaxScopedTokens },
      logger: this.log,
      budget: this.buffers,
      released: (bytes) => this.pacer.release(bytes),
      metrics: () => this.metrics.render(),
      limits: {
        retryMs: RUNTIME_DEFAULTS.httpSseRetryMs,
        maxOutgoingBytes: RUNTIME_DEFAULTS.maxOutgoingBytesPerConnection,
        maxReplayBytes: RUNTIME_DEFAULTS.httpReplayBytesPerSession,
        maxStreamsPerSession: RUNTIME_DEFAULTS.httpMaxStreamsPerSession,
        maxBodyBytes: RUNTIME_DEFAULTS.maxMessageBytes,
      },
    });
    this.socket.shareCapWith(() => this.http.openConnections);
    this.socketWatch = new SocketWatch({
      socketPath: paths.socketPath,
      server: this.socket,
      logger: this.log,
      onTakenOver: (why) => void this.lifecycle.shutdown(why),
    });
    const control = this.daemonControl();
    this.control = createControl(control);
    this.metrics = new PrometheusMetrics(() => metricsSnapshot(control));
  }

  /**
   * Starts serving: loads the servers, opens the HTTP front end (before the socket answers: once `mcpd
   * start` returns, status already says where HTTP is, or why not), listens on the socket, writes the pid
   * file, then starts every eager server in the background.
   */
  async start(): Promise<void> {
    const { config } = this;
    await this.manager.load(config);
    this.router.applyFilters(config.settings, this.router.filtersSnapshot());
    await this.http.apply(this.source.http(config));
    await this.telemetry.apply(config.settings.telemetry?.otlp);
    try {
      await this.socket.listen();
    } catch (err) {
      await this.http.close();
      throw err;
    }
    this.budget.countOwnDescriptors();
    this.applyLimits(config);
    this.socketWatch.start();
    writePrivateFile(this.paths.pidFile, `${process.pid}\n`);
    this.log.info({ socket: this.paths.socketPath, config: config.file, servers: config.servers.length }, "mcpd started");
    if (this.inputs.handleSignals) this.removeSignals = installSignals(this.lifecycle);
    this.manager.startAll().then(
      () => this.warnUnmatchedFilters(),
      (err: Error) => this.log.error({ err: err.message }, "starting servers failed"),
    );
  }

  /**
   * One reload; the lifecycle runs them one at a time. Once shutdown begins (`signal` aborts) it changes
   * nothing more: the manager applies no diff, and the wait for the servers it started is given up (the
   * shutdown ends them). An HTTP change under way is finished first: the shutdown waits for it.
   */
  private async reloadOnce(signal: AbortSignal): Promise<ReloadOutcome> {
    const next = await this.source.load();
    // Before the servers are reloaded: a server whose level follows the daemon's takes the new one.
    this.daemonLog.setLevel(this.source.logLevel(next));
    const before = this.router.filtersSnapshot();
    const result = await abandonOnAbort(this.manager.reload(next, signal), signal);
    signal.throwIfAborted();
    this.router.applyFilters(next.settings, before);
    this.applyLimits(next);
    await this.http.apply(this.source.http(next));
    await this.telemetry.apply(next.settings.telemetry?.otlp);
    this.config = next;
    this.log.info({ ...result }, "config reloaded");
    // Globs that match nothing are judged once the servers the reload started are up.
    const unmatched = this.warnUnmatchedFilters();
    return { ...result, warnings: [...next.warnings, ...unmatched] };
  }

  /** Ends every part, in reverse order: in-flight requests may finish within the grace (each wait woken by their ends, never polled). */
  private async teardown(): Promise<void> {
    this.socketWatch.stop();
    this.socket.stopAccepting();
    const graceEnds = Date.now() + RUNTIME_DEFAULTS.shutdownGraceMs;
    await this.router.whenIdle(RUNTIME_DEFAULTS.shutdownGraceMs);
    const err = shuttingDownError();
    for (const s of this.router.sessions.values()) s.failAll(err);
    await this.dashboard.close();
    await this.http.close();
    this.socket.closeAll();
    this.authFlows.close();
    // The servers' own requests (list re-reads, subscriptions) get what is left of the grace.
    await this.manager.shutdown(Math.max(0, graceEnds - Date.now()));
    await this.telemetry.close();
    // Only what is still this daemon's: another daemon's socket or pid file stays.
    this.socketWatch.removeOwnFile();
    removeOwnPidFile(this.paths.pidFile);
    this.inputs.lock.release();
    this.log.info("mcpd stopped");
    this.removeSignals();
    await this.daemonLog.close();
  }

  private applyLimits(config: LoadedConfig): void {
    const limits = this.budget.limits(config);
    this.socket.setLimits(limits);
    this.buffers.setMax(ConfigSource.bufferBudget(config));
    this.http.setConnectionCap(limits.maxConnections, () => this.socket.connections);
    this.log.info(
      {
        maxConnections: limits.maxConnections,
        why: limits.maxConnectionsWhy,
        openFileLimit: this.budget.fdLimit ?? null,
        fdsInUse: this.budget.ownDescriptors,
      },
      "client connection limit",
    );
  }

  /** Logs (and returns) the filter globs that match nothing among the servers now up. */
  private warnUnmatchedFilters(): string[] {
    const unmatched = this.router.filterWarnings();
    for (const w of unmatched) this.log.warn({ file: this.config.file }, w);
    return unmatched;
  }

  /** What the control methods and the metrics read of the running daemon. */
  private daemonControl(): DaemonControl {
    const { sink } = this.daemonLog;
    return {
      manager: this.manager,
      router: this.router,
      info: () => this.info(),
      http: () => this.http.status(),
      httpTokens: this.http.tokens,
      dashboardLogin: () => this.dashboard.login(this.http.status().url),
      reload: () => this.lifecycle.reload(),
      shutdown: () => void this.lifecycle.shutdown(McpdShutdown.method),
      logTail: (n) => sink.tail(n),
      auth: this.authFlows,
    };
  }

  /** The daemon's part of `mcpd/status`. */
  private info(): DaemonInfo {
    const { sink } = this.daemonLog;
    return {
      pid: process.pid,
      version: VERSION,
      startedAt: isoTime(this.startedAt),
      uptimeMs: Date.now() - this.startedAt,
      socketPath: this.paths.socketPath,
      pidFile: this.paths.pidFile,
      configFile: this.config.file,
      configSource: this.config.source,
      logFile: sink.file ?? null,
      log: { ...sink.status() },
      ...this.socket.stats(),
      socket: this.socketWatch.status(),
    };
  }
}
