import { EventEmitter } from "node:events";
import { silentLogger, type AuthRequiredError, type Logger, type ServerState, type ServerStateParams } from "@mcpd/protocol";
import type { ResolvedServerConfig } from "../config/config-schema.js";
import { HealthMonitor } from "./health-monitor.js";
import { Readiness } from "./readiness.js";
import { RestartBackoff } from "./restart-backoff.js";
import { ServerCalls } from "./server-calls.js";
import { ServerStats } from "./server-stats.js";
import type { UpstreamClient } from "./upstream-client.js";

/** A server's lifecycle state (declared with the control protocol, whose status reports it), and a change of it. */
export type { ServerState };
/** A state change: the server, its new and previous state, and why (the control protocol's serverState params). */
export type StateChange = ServerStateParams;

/** What the lifecycle reads of the handle's options. */
export interface LifecycleOptions {
  logger?: Logger;
  /** Missed pings in a row before a restart. */
  maxMissedPings?: number;
}

/**
 * The lifecycle of one supervised server: its state machine and `state` events, restarts with backoff and a
 * crash-loop breaker, health pings and idle stop, the needs-auth state, and the commands (start, stop,
 * restart, enable, disable, close). How a session is opened is the subclass's ({@link connectOnce}: see
 * ServerHandle); every session is of one {@link generation}, so callbacks of an old one never touch the next.
 */
export abstract class ServerLifecycle extends EventEmitter {
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

  protected readonly log: Logger;
  protected readonly calls: ServerCalls;
  protected readonly health: HealthMonitor;
  /** Whether requests wait for the server to be ready; holds why the last start failed, if it did. */
  protected readonly readiness = new Readiness(this);
  /** Bumped on every stop/start so callbacks of an old session never touch the new one. */
  protected generation = 0;
  private readonly backoff = new RestartBackoff();
  private restartTimer: NodeJS.Timeout | undefined;
  private starting: Promise<void> | undefined;
  /** Set by {@link close}: it never starts again. */
  private closed = false;
  /** Closes of sessions ended in the background (recycled, dropped for auth): {@link stop} waits for them. */
  private readonly closing = new Set<Promise<void>>();

  constructor(config: ResolvedServerConfig, options: LifecycleOptions) {
    super();
    this.setMaxListeners(0);
    this.name = config.name;
    this.config = config;
    this.log = options.logger ?? silentLogger;
    this.state = config.enabled ? "stopped" : "disabled";
    const current = (client: UpstreamClient): boolean => this.state === "ready" && this.client === client;
    this.calls = new ServerCalls(this, config.maxConcurrency, {
      authorization: (err, client) => void (current(client) && this.dropForAuth(err)),
      versionRefused: (why, client) => void (current(client) && this.reopenForEra(why)),
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

  /** The stderr line that best says what the server last reported (what readiness errors quote). */
  abstract get lastStderr(): string | undefined;

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

  /** Opens one session of generation `gen`; resolves when it is ready or the attempt failed (never throws). */
  protected abstract connectOnce(gen: number, reason: string): Promise<void>;

  protected setState(state: ServerState, reason: string): void {
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

  /**
   * The server needs the user to authorize mcpd (no token, a refused refresh token): `needs-auth`, whose
   * requests fail at once with `err` (-32076, naming `mcpd auth SERVER`) until `mcpd auth` restarts it.
   */
  protected enterNeedsAuth(err: AuthRequiredError): void {
    this.readiness.authRequired = err;
    this.setState("needs-auth", `${err.reason}: run \`${err.command}\``);
  }

  /** A live session lost its authorization (a request failed with `err`): it ends, the server is `needs-auth`. */
  protected async dropForAuth(err: AuthRequiredError): Promise<void> {
    const client = this.client;
    this.generation++; // the old session's close event must not schedule a restart
    [this.client, this.pid] = [undefined, undefined];
    this.health.stop();
    this.enterNeedsAuth(err);
    if (client) await this.closeInBackground(client);
  }

  /** Closes an old session, kept in {@link closing} until done, so that a stop (shutdown) waits for its process too. */
  private closeInBackground(client: UpstreamClient): Promise<void> {
    const closing = client.close().catch(() => {});
    this.closing.add(closing);
    return closing.finally(() => this.closing.delete(closing));
  }

  /**
   * The server refused the session's protocol version (a new build of it speaks another): the era learned
   * is forgotten and the session opened again through the backoff and breaker of a crash, its era probed.
   */
  protected async reopenForEra(why: string): Promise<void> {
    this.forgetEra();
    this.log.warn({ reason: why }, "the server refused the session's protocol version: opening it again");
    await this.recycle(`${why}: probing its era again`);
  }

  /** Forgets the era learned for the server (its next start probes it): see ServerHandle. */
  protected forgetEra(): void {}

  /** Restarts the session after a backoff delay, or marks the server `failed` once the crash-loop breaker trips. */
  protected scheduleRestart(reason: string): void {
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
  protected async recycle(reason: string): Promise<void> {
    const client = this.client;
    this.generation++; // the old session's close event must not schedule a second restart
    this.client = undefined;
    this.pid = undefined;
    this.health.stop();
    this.scheduleRestart(reason);
    if (client) await this.closeInBackground(client);
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
    // Kept in `closing` too: a stop that comes meanwhile (shutdown after an idle stop) waits for this process.
    if (client) await this.closeInBackground(client);
    // A session recycled or dropped just before is still closing: stopped means no process of the server is left.
    await Promise.all(this.closing);
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

  /** Enables a disabled server; `startEager` false leaves it stopped even when eager (a private session: its next request starts it). */
  async enable(startEager = true): Promise<void> {
    if (this.state !== "disabled") return;
    this.setState("stopped", "enabled");
    this.backoff.reset();
    if (startEager && this.config.startup === "eager") await this.start("enabled");
  }

  async disable(reason = "disabled", drainMs = 0): Promise<void> {
    await this.stop("disabled", reason, drainMs);
  }
}
