import { EventEmitter } from "node:events";
import {
  AuthRequiredError,
  silentLogger,
  type Cancellation,
  type Era,
  type JsonObject,
  type Logger,
  type RequestReply,
  type ServerState,
  type ServerStateParams,
  type Tool,
} from "@mcpd/protocol";
import type { CloseInfo, MessageContext, TransportRequestOptions } from "@mcpd/transports";
import type { ResolvedServerConfig } from "../config/config-schema.js";
import { RUNTIME_DEFAULTS } from "../defaults.js";
import { EraMemory } from "./era-memory.js";
import { HealthMonitor } from "./health-monitor.js";
import type { ListKind, UpstreamClient, UpstreamRequestHandler } from "./upstream-client.js";
import { Readiness } from "./readiness.js";
import { ReadyReason } from "./ready-reason.js";
import { RestartBackoff } from "./restart-backoff.js";
import { ServerCalls, type RelayOptions } from "./server-calls.js";
import { ServerRun, type ServerRunOptions } from "./server-run.js";
import { ServerStats } from "./server-stats.js";
import { ServerStderr } from "./server-stderr.js";
import { isPermanentStartFailure, startFailureReason } from "./start-failure.js";

/** A server's lifecycle state (declared with the control protocol, whose status reports it), and a change of it. */
export type { ServerState };
/** A state change: the server, its new and previous state, and why (the control protocol's serverState params). */
export type StateChange = ServerStateParams;

export interface ServerHandleOptions extends ServerRunOptions {
  /** Tools from the on-disk cache, served while the server starts. */
  cachedTools?: Tool[];
  onToolsListed?: (tools: readonly Tool[]) => void;
  /** A notification from the server (those the session consumes itself excepted). */
  onNotification?: (method: string, params: JsonObject | undefined, context: MessageContext) => void;
  /** A list was re-read after the server said it changed. */
  onListChanged?: (kind: ListKind) => void;
  /** Missed pings in a row before a restart. */
  maxMissedPings?: number;
  /** The era learned at an earlier start (`protocolEra: "auto"`), and who is told each era learned: see EraMemory. */
  knownEra?: Era;
  onEraLearned?: (era: Era) => void;
}

/**
 * Supervises one upstream server: its state machine, its session (an {@link UpstreamClient}), restarts with
 * backoff and a crash-loop breaker, health pings, idle stop, lazy start, per-server concurrency and a
 * bounded wait queue. Requests are never replayed: a request in flight when the session dies fails.
 *
 * A start that fails before the server is ready is restarted in the background, but requests do not
 * wait for it: until a start succeeds (or the server is stopped), they fail at once with the reason. A
 * command that is missing or not executable is not restarted at all: `failed` until `mcpd restart` or a
 * config change. The server's stderr is kept across its runs ({@link stderrTail}).
 *
 * Events: `state` ({@link StateChange}); notifications and list changes go to its options' callbacks.
 */
export class ServerHandle extends EventEmitter {
  readonly name: string;
  config: ResolvedServerConfig;
  state: ServerState;
  stateReason = "";
  client: UpstreamClient | undefined;
  readonly stats = new ServerStats();
  restarts = 0;
  startedAt: number | undefined;
  pid: number | undefined;
  lastExit: string | undefined;
  /** When the next restart attempt is due (Date.now() ms) while one is scheduled; undefined otherwise. */
  nextRestartAt: number | undefined;
  cachedTools: Tool[] | undefined;
  /** Router hook for sampling/elicitation/roots requests from this server. */
  requestHandler: UpstreamRequestHandler | undefined;
  /** What each session is given to answer the server's requests: {@link requestHandler}, as it is when asked. */
  private readonly relayRequest: UpstreamRequestHandler = (req, ctx) =>
    this.requestHandler ? this.requestHandler(req, ctx) : Promise.reject(new Error(`No handler for ${req.method}`));

  private readonly opts: ServerHandleOptions;
  private readonly log: Logger;
  private readonly calls: ServerCalls;
  private readonly backoff = new RestartBackoff();
  private restartTimer: NodeJS.Timeout | undefined;
  private readonly health: HealthMonitor;
  private starting: Promise<void> | undefined;
  /** Bumped on every stop/start so callbacks of an old session never touch the new one. */
  private generation = 0;
  /** Set by {@link close}: it never starts again. */
  private closed = false;
  /** Whether requests wait for the server to be ready; holds why the last start failed, if it did. */
  private readonly readiness = new Readiness(this);
  private readonly stderr = new ServerStderr(RUNTIME_DEFAULTS.serverStderrHistoryLines, RUNTIME_DEFAULTS.serverStderrHistoryBytes);
  private readonly readyReason = new ReadyReason();
  readonly eras: EraMemory;

  constructor(config: ResolvedServerConfig, options: ServerHandleOptions) {
    super();
    this.setMaxListeners(0);
    this.name = config.name;
    this.config = config;
    this.opts = options;
    this.log = options.logger ?? silentLogger;
    this.cachedTools = options.cachedTools;
    this.eras = new EraMemory(options.knownEra, (era) => options.onEraLearned?.(era), this.log);
    this.state = config.enabled ? "stopped" : "disabled";
    this.calls = new ServerCalls(this, config.maxConcurrency, (err, client) => {
      if (this.state === "ready" && this.client === client) void this.dropForAuth(err);
    });
    this.health = new HealthMonitor({
      stats: this.stats,
      logger: this.log,
      maxMissedPings: options.maxMissedPings,
      session: (gen) => (this.generation === gen && this.state === "ready" ? this.client : undefined),
      isCurrent: (gen) => this.generation === gen,
      onIdle: (idleMs) => void this.stop("idle", `idle for ${idleMs} ms`),
      onUnhealthy: (missed) => void this.recycle(`${missed} health pings missed`),
    });
  }

  get inFlight(): number {
    return this.stats.inFlight;
  }

  /** Whether a request would fail at once instead of waiting: `disabled`, `failed`, `needs-auth`, or its last start failed. */
  get failsAtOnce(): boolean {
    return this.readiness.failsAtOnce;
  }

  /** Tools to show: live once ready, else the cached ones. */
  get tools(): readonly Tool[] {
    if (this.state === "ready" && this.client) return this.client.tools;
    return this.cachedTools ?? [];
  }

  private setState(state: ServerState, reason: string): void {
    const previous = this.state;
    if (state !== "restarting") this.nextRestartAt = undefined;
    if (previous === state && this.stateReason === reason) return;
    this.state = state;
    this.stateReason = reason;
    this.calls.stateChanged(state);
    this.log.info({ state, previous, reason }, `server ${state}`);
    this.emit("state", { server: this.name, state, previous, reason } satisfies StateChange);
  }

  /** Starts the server if it is stopped. Resolves when it is ready or the attempt failed (never throws). */
  start(reason = "started"): Promise<void> {
    if (this.closed || this.state === "disabled" || this.state === "ready") return Promise.resolve();
    if (this.starting) return this.starting;
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    const gen = ++this.generation;
    this.starting = this.connectOnce(gen, reason).finally(() => {
      if (this.generation === gen) this.starting = undefined;
    });
    return this.starting;
  }

  private async connectOnce(gen: number, reason: string): Promise<void> {
    if (this.state !== "restarting") this.setState("starting", reason);
    const run = new ServerRun(this.config, this.opts, this.stderr, this.relayRequest);
    const client = run.client;
    this.readyReason.newSession();
    client.on("notification", (method: string, params: JsonObject | undefined, ctx: MessageContext) => {
      if (this.generation === gen) this.opts.onNotification?.(method, params, ctx);
    });
    client.on("listChanged", (kind: ListKind) => {
      if (this.generation !== gen) return;
      if (kind === "tools") this.opts.onToolsListed?.(client.tools);
      this.opts.onListChanged?.(kind);
    });
    client.on("listUnsettled", (kind: string) => this.listUnsettled(gen, kind, true));
    client.on("listSettled", (kind: string) => this.listUnsettled(gen, kind, false));
    // After the run's own close listener: the process is reported exited and its stderr kept first.
    client.on("close", (info: CloseInfo) => this.onSessionClosed(gen, client, info));
    this.client = client;
    const choice = this.eras.choice(this.config.protocolEra, this.config.transport.type);
    try {
      await run.open(choice);
    } catch (err) {
      if (this.generation !== gen) return;
      this.client = undefined;
      this.lastExit = (err as Error).message;
      const why = startFailureReason(err);
      await run.abandon(err, why);
      if (this.generation !== gen) return;
      if (this.eras.failed(choice, err)) return this.connectOnce(gen, reason);
      // Only the user can fix this (`mcpd auth`): no restart would help.
      if (err instanceof AuthRequiredError) return this.enterNeedsAuth(err);
      this.readiness.startFailure = why;
      if (isPermanentStartFailure(err)) {
        this.setState("failed", `start failed: ${why}; not retried until the config changes or \`mcpd restart ${this.name}\``);
        this.emit("failed");
        return;
      }
      this.scheduleRestart(`start failed: ${why}`);
      return;
    }
    if (this.generation !== gen) {
      await client.close().catch(() => {});
      return;
    }
    // A re-read that waited past this session's end is dropped.
    run.ready((read) => this.calls.reread(() => (this.client === client ? read() : Promise.resolve())));
    this.pid = run.pid;
    this.startedAt = Date.now();
    this.readiness.startFailure = undefined;
    this.eras.ready(choice, client.era);
    this.setState("ready", this.readyReason.ready(reason));
    this.health.arm(gen, this.config.healthCheckIntervalMs, this.config.idleTimeout);
  }

  /**
   * A list of session `gen` does or no longer keeps changing: updates the reason of a `ready` server (no
   * `state` event: listeners take every `ready` event for a (re)start).
   */
  private listUnsettled(gen: number, kind: string, unsettled: boolean): void {
    if (this.generation !== gen) return;
    const reason = this.readyReason.list(kind, unsettled);
    if (this.state !== "ready" || reason === this.stateReason) return;
    this.stateReason = reason;
    this.log.info({ state: this.state, reason }, "server state reason");
  }

  /** The server's last stderr lines (at most `n`) across its runs, oldest first: see {@link ServerStderr.tail}. */
  stderrTail(n: number): string[] {
    return this.stderr.tail(n);
  }

  /** The stderr line that best says what the server last reported: see {@link ServerStderr.last}. */
  get lastStderr(): string | undefined {
    return this.stderr.last;
  }

  private onSessionClosed(gen: number, client: UpstreamClient, info: CloseInfo): void {
    // A close during the handshake is the start's to handle (see connectOnce, EraMemory.failed), not a crash.
    if (this.generation !== gen || info.expected || this.client !== client || client.handshaking) return;
    this.lastExit = info.reason;
    this.client = undefined;
    this.pid = undefined;
    this.health.stop();
    this.scheduleRestart(`session closed: ${info.reason}`);
  }

  /**
   * The server needs the user to authorize mcpd (no token, a refused refresh token): `needs-auth`, whose
   * requests fail at once with `err` (-32076, naming `mcpd auth SERVER`) until `mcpd auth` restarts it.
   */
  private enterNeedsAuth(err: AuthRequiredError): void {
    this.readiness.authRequired = err;
    this.setState("needs-auth", `${err.reason}: run \`${err.command}\``);
  }

  /** A live session lost its authorization (a request failed with `err`): it ends, the server is `needs-auth`. */
  private async dropForAuth(err: AuthRequiredError): Promise<void> {
    const client = this.client;
    this.generation++; // the old session's close event must not schedule a restart
    [this.client, this.pid] = [undefined, undefined];
    this.health.stop();
    this.enterNeedsAuth(err);
    await client?.close().catch(() => {});
  }

  /** Restarts the session after a backoff delay, or marks the server `failed` once the crash-loop breaker trips. */
  private scheduleRestart(reason: string): void {
    const policy = this.config.restart;
    const slot = this.backoff.next(policy);
    if (slot === undefined) {
      this.setState("failed", `${reason} (gave up after ${policy.maxRestarts} restarts in ${policy.windowMs} ms)`);
      this.emit("failed");
      return;
    }
    this.restarts++;
    // Before the state event: a request it fails says when the next attempt is due.
    this.nextRestartAt = Date.now() + slot.delayMs;
    this.setState("restarting", `${reason}; restart ${slot.attempt}/${policy.maxRestarts} in ${slot.delayMs} ms`);
    const gen = ++this.generation;
    this.starting = undefined;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      this.nextRestartAt = undefined;
      if (this.generation !== gen || this.state !== "restarting") return;
      this.starting = this.connectOnce(gen, "restarted").finally(() => {
        if (this.generation === gen) this.starting = undefined;
      });
    }, slot.delayMs);
    this.restartTimer.unref();
  }

  /** Ends a live but unhealthy session and restarts it through the backoff and breaker of a crash (no restart storm). */
  private async recycle(reason: string): Promise<void> {
    const client = this.client;
    this.generation++; // the old session's close event must not schedule a second restart
    this.client = undefined;
    this.pid = undefined;
    this.health.stop();
    this.scheduleRestart(reason);
    if (client) await client.close().catch(() => {});
  }

  /**
   * Stops the session. `state` is where it ends: `stopped` (idle or shutdown), `disabled`. With `drainMs`,
   * the running calls first get up to that long to finish, new ones waiting (ServerCalls.settled). Requests
   * in flight fail with `Transport closed`; calls waiting for a slot with -32060 naming the state.
   */
  async stop(kind: "stopped" | "idle" | "disabled" = "stopped", reason = "stopped", drainMs = 0): Promise<void> {
    if (drainMs > 0) return this.calls.whileHeld(() => this.calls.settled(drainMs).then(() => this.stop(kind, reason)));
    this.generation++;
    this.starting = undefined;
    this.readiness.startFailure = undefined;
    this.readiness.authRequired = undefined;
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    this.health.stop();
    const client = this.client;
    this.client = undefined;
    this.pid = undefined;
    this.setState(kind === "disabled" ? "disabled" : "stopped", reason);
    if (client) await client.close().catch(() => {});
  }

  /**
   * Manual restart: clears the crash-loop record (a `failed` server gets a fresh start). When `signal` has
   * aborted once the old session is stopped (shutdown began meanwhile), the server is not started again.
   * Calls waiting for a slot, and new ones, wait for the new session; `drainMs`: see {@link stop}.
   */
  async restart(reason = "restart requested", signal?: AbortSignal, drainMs = 0): Promise<void> {
    if (this.state === "disabled") return;
    await this.calls.whileHeld(async () => {
      await this.stop("stopped", reason, drainMs);
      if (signal?.aborted) return;
      this.backoff.reset();
      await this.start(reason);
    });
  }

  /** Stops the server for good (mcpd shuts down): no later start, restart or enable starts it again. `drainMs`: see {@link stop}. */
  async close(reason: string, drainMs = 0): Promise<void> {
    this.closed = true;
    await this.stop("stopped", reason, drainMs);
  }

  async enable(): Promise<void> {
    if (this.state !== "disabled") return;
    this.setState("stopped", "enabled");
    this.backoff.reset();
    if (this.config.startup === "eager") await this.start("enabled");
  }

  async disable(reason = "disabled", drainMs = 0): Promise<void> {
    await this.stop("disabled", reason, drainMs);
  }

  /** Replaces the config (reload). The caller restarts the server when the transport changed (and the era learned is forgotten). */
  updateConfig(config: ResolvedServerConfig): void {
    if (config.transportHash !== this.config.transportHash) this.eras.known = undefined;
    this.config = config;
    if (config.maxConcurrency !== this.calls.concurrency) this.calls.concurrency = config.maxConcurrency;
  }

  /**
   * The session when it can take a request. A session whose server just died stays `ready` until its
   * transport has finished closing (up to closeGraceMs x 2 for a process that keeps running after closing
   * its stdout); a request arriving meanwhile waits for the restart instead of failing on a dead transport.
   */
  get usableClient(): UpstreamClient | undefined {
    return this.state === "ready" && this.client?.transport.connected ? this.client : undefined;
  }

  /**
   * Waits until the server is ready, starting it when it is stopped (lazy or idle), bounded by
   * `timeoutMs` and `signal`; fails at once when it cannot become ready (see {@link Readiness.wait}).
   * @throws ServerUnavailableError (MCPD_SERVER_UNAVAILABLE)
   */
  whenReady(timeoutMs: number, signal?: AbortSignal): Promise<UpstreamClient> {
    const usable = this.usableClient;
    return usable ? Promise.resolve(usable) : this.readiness.wait(timeoutMs, signal);
  }

  /** One request upstream, within the server's concurrency limit: see ServerCalls.request. */
  request<T = JsonObject>(
    method: string,
    params: JsonObject | undefined,
    options: TransportRequestOptions & { waitMs: number; cancellation?: Cancellation },
  ): Promise<T> {
    return this.calls.request<T>(method, params, options);
  }

  /** {@link request} for a relay, with no promise on the way: see ServerCalls.relay. */
  relay(method: string, params: JsonObject | undefined, options: RelayOptions, reply: RequestReply<JsonObject>): void {
    this.calls.relay(method, params, options, reply);
  }
}
