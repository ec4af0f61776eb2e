import { AuthRequiredError, type Cancellation, type Era, type JsonObject, type RequestReply, type Tool } from "@mcpd/protocol";
import type { CloseInfo, MessageContext, TransportRequestOptions } from "@mcpd/transports";
import type { ResolvedServerConfig } from "../config/config-schema.js";
import { RUNTIME_DEFAULTS } from "../defaults.js";
import { EraMemory } from "./era-memory.js";
import type { ListKind, UpstreamClient, UpstreamRequestHandler } from "./upstream-client.js";
import { ReadyReason } from "./ready-reason.js";
import type { RelayOptions } from "./server-calls.js";
import { ServerLifecycle, type LifecycleOptions, type ServerState, type StateChange } from "./server-lifecycle.js";
import { ServerRun, type ServerRunOptions } from "./server-run.js";
import { ServerStderr } from "./server-stderr.js";
import { isPermanentStartFailure, startFailureReason } from "./start-failure.js";

export type { ServerState, StateChange };

export interface ServerHandleOptions extends ServerRunOptions, LifecycleOptions {
  /** Tools from the on-disk cache, served while the server starts. */
  cachedTools?: Tool[];
  onToolsListed?: (tools: readonly Tool[]) => void;
  /** A notification from the server (those the session consumes itself excepted). */
  onNotification?: (method: string, params: JsonObject | undefined, context: MessageContext) => void;
  /** A list was re-read after the server said it changed. */
  onListChanged?: (kind: ListKind) => void;
  /** The era learned at an earlier start (`protocolEra: "auto"`), and who is told each era learned: see EraMemory. */
  knownEra?: Era;
  onEraLearned?: (era: Era) => void;
}

/**
 * Supervises one upstream server: its sessions (an {@link UpstreamClient} per run, opened in the server's era),
 * lazy start, per-server concurrency and a bounded wait queue; its state machine, restarts with backoff and a
 * crash-loop breaker, health pings, idle stop and commands are {@link ServerLifecycle}'s. Requests are never
 * replayed: a request in flight when the session dies fails.
 *
 * A start that fails before the server is ready is restarted in the background, but requests do not
 * wait for it: until a start succeeds (or the server is stopped), they fail at once with the reason. A
 * command that is missing or not executable is not restarted at all: `failed` until `mcpd restart` or a
 * config change. The server's stderr is kept across its runs ({@link stderrTail}).
 *
 * Events: `state` ({@link StateChange}); notifications and list changes go to its options' callbacks.
 */
export class ServerHandle extends ServerLifecycle {
  cachedTools: Tool[] | undefined;
  /** Router hook for sampling/elicitation/roots requests from this server. */
  requestHandler: UpstreamRequestHandler | undefined;
  /** What each session is given to answer the server's requests: {@link requestHandler}, as it is when asked. */
  private readonly relayRequest: UpstreamRequestHandler = (req, ctx) =>
    this.requestHandler ? this.requestHandler(req, ctx) : Promise.reject(new Error(`No handler for ${req.method}`));

  private readonly opts: ServerHandleOptions;
  private readonly stderr = new ServerStderr(RUNTIME_DEFAULTS.serverStderrHistoryLines, RUNTIME_DEFAULTS.serverStderrHistoryBytes);
  private readonly readyReason = new ReadyReason();
  readonly eras: EraMemory;

  constructor(config: ResolvedServerConfig, options: ServerHandleOptions) {
    super(config, options);
    this.opts = options;
    this.cachedTools = options.cachedTools;
    this.eras = new EraMemory(options.knownEra, (era) => options.onEraLearned?.(era), this.log);
  }

  get inFlight(): number {
    return this.stats.inFlight;
  }

  /** Whether a request would fail at once instead of waiting: `disabled`, `failed`, `needs-auth`, or its last start failed. */
  get failsAtOnce(): boolean {
    return this.readiness.failsAtOnce;
  }

  /** The session id the server gave its live session (HTTP), if any: see Upstream.sessionId. */
  get sessionId(): string | undefined {
    return this.client?.transport.info().sessionId;
  }

  /** Tools to show: live once ready, else the cached ones. */
  get tools(): readonly Tool[] {
    if (this.state === "ready" && this.client) return this.client.tools;
    return this.cachedTools ?? [];
  }

  protected async connectOnce(gen: number, reason: string): Promise<void> {
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

  protected override forgetEra(): void {
    this.eras.known = undefined;
  }

  /**
   * Replaces the config (reload). The caller restarts the server when the transport changed (and the era
   * learned is forgotten). A ready session's health monitor is armed again when `idleTimeout` or
   * `healthCheckIntervalMs` changed, so the running server follows them.
   */
  updateConfig(config: ResolvedServerConfig): void {
    const previous = this.config;
    if (config.transportHash !== previous.transportHash) this.forgetEra();
    this.config = config;
    if (config.maxConcurrency !== this.calls.concurrency) this.calls.concurrency = config.maxConcurrency;
    const timersChanged = config.idleTimeout !== previous.idleTimeout || config.healthCheckIntervalMs !== previous.healthCheckIntervalMs;
    if (timersChanged && this.state === "ready" && this.client)
      this.health.arm(this.generation, config.healthCheckIntervalMs, config.idleTimeout);
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
