import { EventEmitter } from "node:events";
import PQueue from "p-queue";
import {
  McpdError,
  QueueFullError,
  ServerUnavailableError,
  SpawnError,
  TransportClosedError,
  silentLogger,
  type Cancellation,
  type ClientCapabilities,
  type JsonObject,
  type Logger,
  type ServerState,
  type Tool,
} from "@mcpd/protocol";
import { lastStderrLine, type CloseInfo, type MCPTransport, type RequestOptions, type TransportConfig } from "@mcpd/transports";
import type { ResolvedServerConfig } from "./config/config-schema.js";
import { RUNTIME_DEFAULTS } from "./defaults.js";
import { MCPClient, type UpstreamRequestHandler } from "./mcp-client.js";
import { ServerStats } from "./server-stats.js";
import { StderrHistory } from "./stderr-history.js";

/** A server's lifecycle state: declared with the control protocol, whose status reports it. */
export type { ServerState };

export interface StateChange {
  server: string;
  state: ServerState;
  previous: ServerState;
  reason: string;
}

export interface ServerHandleOptions {
  createTransport: (config: TransportConfig, logger: Logger) => MCPTransport;
  logger?: Logger;
  clientCapabilities?: ClientCapabilities;
  /** Tools from the on-disk cache, served while the server starts. */
  cachedTools?: Tool[];
  onToolsListed?: (tools: readonly Tool[]) => void;
  onChildStarted?: (pid: number) => void;
  onChildExited?: (pid: number) => void;
  /** Missed pings in a row before a restart. */
  maxMissedPings?: number;
}

const MAX_MISSED_PINGS = 3;

/**
 * Spawn failures no retry can fix until the config changes: the command or its working directory is
 * missing (ENOENT, ENOTDIR) or not executable (EACCES). Out of descriptors or processes (EMFILE, ENFILE,
 * EAGAIN) is a passing state: those are retried with backoff like a crash.
 */
const PERMANENT_SPAWN_ERRNOS: ReadonlySet<string> = new Set(["ENOENT", "ENOTDIR", "EACCES"]);

/** A start failure in words: a closed transport's own reason (exit code, stderr lines) without the prefix. */
function startFailure(err: unknown): string {
  if (err instanceof TransportClosedError && err.reason !== undefined) return err.reason;
  return err instanceof Error ? err.message : String(err);
}

/** How a stdio run ended, for the marker line of the stderr history. */
function runEnd(info: CloseInfo, pid: number | undefined): string {
  const proc = pid === undefined ? "process" : `process ${pid}`;
  if (info.expected) return `${proc} stopped by mcpd`;
  if (info.exitCode !== undefined && info.exitCode !== null) return `${proc} exited with code ${info.exitCode}`;
  if (info.signal) return `${proc} was killed by ${info.signal}`;
  return `${proc} ended: ${info.reason}`;
}

/**
 * Supervises one upstream server: its state machine, its session (an {@link MCPClient}), restarts with
 * backoff and a crash-loop breaker, health pings, idle stop, lazy start, per-server concurrency and a
 * bounded wait queue. Requests are never replayed: a request in flight when the session dies fails.
 *
 * A start that fails before the server is ready is restarted in the background, but requests do not
 * wait for it: until a start succeeds (or the server is stopped), they fail at once with the reason. A
 * command that is missing or not executable is not restarted at all: `failed` until `mcpd restart` or a
 * config change. The server's stderr is kept across its runs ({@link stderrTail}).
 *
 * Events: `state` ({@link StateChange}), `notification` (method, params, context), `listChanged` (kind).
 */
export class ServerHandle extends EventEmitter {
  readonly name: string;
  config: ResolvedServerConfig;
  state: ServerState;
  stateReason = "";
  client: MCPClient | undefined;
  readonly stats = new ServerStats();
  restarts = 0;
  startedAt: number | undefined;
  pid: number | undefined;
  lastExit: string | undefined;
  cachedTools: Tool[] | undefined;
  /** Router hook for sampling/elicitation/roots requests from this server. */
  requestHandler: UpstreamRequestHandler | undefined;

  private readonly opts: ServerHandleOptions;
  private readonly log: Logger;
  private queue: PQueue;
  private restartTimes: number[] = [];
  private restartTimer: NodeJS.Timeout | undefined;
  private healthTimer: NodeJS.Timeout | undefined;
  private missedPings = 0;
  private starting: Promise<void> | undefined;
  /** Bumped on every stop/start so callbacks of an old session never touch the new one. */
  private generation = 0;
  /**
   * Why the last start failed before the server became ready; cleared when a start succeeds or the
   * server is stopped. While set, requests fail at once instead of waiting for the next restart.
   */
  private startFailure: string | undefined;
  /** stderr of ended runs; the running process's lines are read from its transport. */
  private readonly stderrHistory = new StderrHistory(RUNTIME_DEFAULTS.serverStderrHistoryLines, RUNTIME_DEFAULTS.serverStderrHistoryBytes);
  /** The transport whose stderr is not in the history yet (the live run), if it keeps stderr. */
  private liveStderr: { stderrTail(n?: number): string[] } | undefined;
  /** Lists of the current session that keep changing, said in the `ready` reason. */
  private readonly unsettledLists = new Set<string>();
  private readyReason = "";

  constructor(config: ResolvedServerConfig, options: ServerHandleOptions) {
    super();
    this.setMaxListeners(0);
    this.name = config.name;
    this.config = config;
    this.opts = options;
    this.log = options.logger ?? silentLogger;
    this.cachedTools = options.cachedTools;
    this.state = config.enabled ? "stopped" : "disabled";
    this.queue = new PQueue({ concurrency: config.maxConcurrency });
  }

  get inFlight(): number {
    return this.stats.inFlight;
  }

  /** Tools to show: live once ready, else the cached ones. */
  get tools(): readonly Tool[] {
    if (this.state === "ready" && this.client) return this.client.tools;
    return this.cachedTools ?? [];
  }

  private setState(state: ServerState, reason: string): void {
    const previous = this.state;
    if (previous === state && this.stateReason === reason) return;
    this.state = state;
    this.stateReason = reason;
    this.log.info({ state, previous, reason }, `server ${state}`);
    this.emit("state", { server: this.name, state, previous, reason } satisfies StateChange);
  }

  /** Starts the server if it is stopped. Resolves when it is ready or the attempt failed (never throws). */
  start(reason = "started"): Promise<void> {
    if (this.state === "disabled" || this.state === "ready") return Promise.resolve();
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
    const transport = this.opts.createTransport(this.config.transport, this.log);
    const keepsStderr = typeof (transport as { stderrTail?: unknown }).stderrTail === "function";
    if (keepsStderr) this.liveStderr = transport as unknown as { stderrTail(n?: number): string[] };
    this.unsettledLists.clear();
    const client = new MCPClient(transport, {
      clientInfo: { name: "mcpd", version: "0.1.0" },
      capabilities: this.opts.clientCapabilities ?? {},
      logger: this.log,
      initializeTimeoutMs: this.config.timeout,
    });
    client.requestHandler = (req, ctx) => {
      if (!this.requestHandler) return Promise.reject(new Error(`No handler for ${req.method}`));
      return this.requestHandler(req, ctx);
    };
    client.on("notification", (method: string, params: JsonObject | undefined, ctx: unknown) => {
      if (this.generation === gen) this.emit("notification", method, params, ctx);
    });
    client.on("listChanged", (kind: string) => {
      if (this.generation !== gen) return;
      if (kind === "tools") this.opts.onToolsListed?.(client.tools);
      this.emit("listChanged", kind);
    });
    client.on("listUnsettled", (kind: string) => {
      if (this.generation !== gen) return;
      this.unsettledLists.add(kind);
      this.sayWhyUnsettled();
    });
    client.on("listSettled", (kind: string) => {
      if (this.generation !== gen) return;
      this.unsettledLists.delete(kind);
      this.sayWhyUnsettled();
    });
    let sessionPid: number | undefined;
    client.on("close", (info: CloseInfo) => {
      if (sessionPid !== undefined) this.opts.onChildExited?.(sessionPid);
      // The run's stderr joins the history, once: the close event fires exactly once per transport.
      if (keepsStderr) {
        this.stderrHistory.endRun(info.stderrTail ?? [], runEnd(info, sessionPid));
        if (this.liveStderr === (transport as unknown)) this.liveStderr = undefined;
      }
      this.onSessionClosed(gen, client, info);
    });
    this.client = client;
    try {
      // Spawn, and record the process, before the handshake: a daemon killed (-9) while a slow server
      // initializes (an npx cold start takes seconds) must find that process at its next start.
      await transport.connect();
      sessionPid = transport.info().pid;
      if (sessionPid !== undefined) this.opts.onChildStarted?.(sessionPid);
      await client.connect();
    } catch (err) {
      if (this.generation !== gen) return;
      this.client = undefined;
      this.lastExit = (err as Error).message;
      const why = startFailure(err);
      if (err instanceof SpawnError) {
        // Nothing ran, so no close event: the history still says what happened.
        if (keepsStderr && this.liveStderr === (transport as unknown)) this.liveStderr = undefined;
        this.stderrHistory.endRun([], `start failed: ${why}`);
      }
      await transport.close().catch(() => {});
      if (this.generation !== gen) return;
      if (err instanceof SpawnError && err.errno !== undefined && PERMANENT_SPAWN_ERRNOS.has(err.errno)) {
        this.startFailure = why;
        this.setState("failed", `start failed: ${why}; not retried until the config changes or \`mcpd restart ${this.name}\``);
        this.emit("failed");
        return;
      }
      this.startFailure = why;
      this.scheduleRestart(`start failed: ${why}`);
      return;
    }
    if (this.generation !== gen) {
      await client.close().catch(() => {});
      return;
    }
    // Streamable HTTP: open the GET stream for server-initiated messages once the session exists.
    (transport as { startSSEListener?: () => void }).startSSEListener?.();
    this.pid = sessionPid;
    this.startedAt = Date.now();
    this.missedPings = 0;
    this.startFailure = undefined;
    this.readyReason = reason;
    this.setState("ready", this.readyStateReason());
    this.armHealth(gen);
  }

  /** The `ready` reason, plus which lists keep changing (a server that never settles says so). */
  private readyStateReason(): string {
    if (this.unsettledLists.size === 0) return this.readyReason;
    const kinds = [...this.unsettledLists].sort();
    return `${this.readyReason}; the ${kinds.join(", ")} list${kinds.length > 1 ? "s keep" : " keeps"} changing (list_changed after every re-read): re-read at most once per ${RUNTIME_DEFAULTS.listRefreshMinIntervalMs} ms`;
  }

  /**
   * Updates the reason of a `ready` server whose lists do or no longer keep changing. A detail of the
   * state, not a change of it: no `state` event, since listeners take every `ready` event for a (re)start.
   */
  private sayWhyUnsettled(): void {
    if (this.state !== "ready") return;
    const reason = this.readyStateReason();
    if (reason === this.stateReason) return;
    this.stateReason = reason;
    this.log.info({ state: this.state, reason }, "server state reason");
  }

  /**
   * The server's last stderr lines (at most `n`), oldest first: those of its earlier runs (each followed
   * by a `--- mcpd: ... ---` marker saying how it ended), then the running process's.
   */
  stderrTail(n: number): string[] {
    return this.stderrHistory.tail(n, this.liveStderr?.stderrTail(n) ?? []);
  }

  /**
   * The stderr line that best says what the server last reported: the running process's last line,
   * else the line of the last ended run that states its error (see stderrHeadline).
   */
  get lastStderr(): string | undefined {
    const live = this.liveStderr?.stderrTail(5);
    return (live !== undefined ? lastStderrLine(live) : undefined) ?? this.stderrHistory.headline;
  }

  private onSessionClosed(gen: number, client: MCPClient, info: CloseInfo): void {
    if (this.generation !== gen || info.expected || this.client !== client) return;
    this.lastExit = info.reason;
    this.client = undefined;
    this.pid = undefined;
    this.stopHealth();
    this.scheduleRestart(`session closed: ${info.reason}`);
  }

  private scheduleRestart(reason: string): void {
    const now = Date.now();
    const policy = this.config.restart;
    this.restartTimes = this.restartTimes.filter((t) => now - t < policy.windowMs);
    if (this.restartTimes.length >= policy.maxRestarts) {
      this.setState("failed", `${reason} (gave up after ${policy.maxRestarts} restarts in ${policy.windowMs} ms)`);
      this.emit("failed");
      return;
    }
    this.restartTimes.push(now);
    this.restarts++;
    const attempt = this.restartTimes.length;
    const base = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (attempt - 1));
    // Jitter (+-20%) keeps servers that died together from restarting in lockstep.
    const delay = Math.round(base * (0.8 + Math.random() * 0.4));
    this.setState("restarting", `${reason}; restart ${attempt}/${policy.maxRestarts} in ${delay} ms`);
    const gen = ++this.generation;
    this.starting = undefined;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.generation !== gen || this.state !== "restarting") return;
      this.starting = this.connectOnce(gen, "restarted").finally(() => {
        if (this.generation === gen) this.starting = undefined;
      });
    }, delay);
    this.restartTimer.unref();
  }

  private armHealth(gen: number): void {
    this.stopHealth();
    const every = this.config.healthCheckIntervalMs;
    const idle = this.config.idleTimeout;
    const tick = Math.min(every > 0 ? every : Infinity, idle > 0 ? Math.max(50, Math.floor(idle / 4)) : Infinity);
    if (!Number.isFinite(tick)) return;
    let lastPing = Date.now();
    this.healthTimer = setInterval(() => {
      if (this.generation !== gen || this.state !== "ready" || !this.client) return;
      const now = Date.now();
      if (idle > 0 && this.stats.inFlight === 0 && now - this.stats.lastUsedAt >= idle) {
        void this.stop("idle", `idle for ${idle} ms`);
        return;
      }
      if (every > 0 && now - lastPing >= every && now - this.stats.lastUsedAt >= every) {
        lastPing = now;
        const client = this.client;
        client.ping({ timeout: Math.min(every, 10_000) }).then(
          () => {
            this.missedPings = 0;
          },
          (err: Error) => {
            if (this.generation !== gen) return;
            this.missedPings++;
            this.log.warn({ missed: this.missedPings, err: err.message }, "health ping failed");
            if (this.missedPings >= (this.opts.maxMissedPings ?? MAX_MISSED_PINGS)) {
              void this.recycle(`${this.missedPings} health pings missed`);
            }
          },
        );
      }
    }, tick);
    this.healthTimer.unref();
  }

  /**
   * Ends a live but unhealthy session and restarts it through the same backoff and crash-loop breaker
   * as a crash (so a server that hangs again and again ends `failed`, not in a restart storm).
   */
  private async recycle(reason: string): Promise<void> {
    const client = this.client;
    this.generation++; // the old session's close event must not schedule a second restart
    this.client = undefined;
    this.pid = undefined;
    this.stopHealth();
    this.scheduleRestart(reason);
    if (client) await client.close().catch(() => {});
  }

  private stopHealth(): void {
    clearInterval(this.healthTimer);
    this.healthTimer = undefined;
  }

  /**
   * Stops the session. `state` is where it ends: `stopped` (idle or shutdown), `disabled`.
   * In-flight requests fail with the transport's `Transport closed`.
   */
  async stop(kind: "stopped" | "idle" | "disabled" = "stopped", reason = "stopped"): Promise<void> {
    this.generation++;
    this.starting = undefined;
    this.startFailure = undefined;
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    this.stopHealth();
    const client = this.client;
    this.client = undefined;
    this.pid = undefined;
    this.setState(kind === "disabled" ? "disabled" : "stopped", reason);
    if (client) await client.close().catch(() => {});
  }

  /** Manual restart: clears the crash-loop record (a `failed` server gets a fresh start). */
  async restart(reason = "restart requested"): Promise<void> {
    if (this.state === "disabled") return;
    await this.stop("stopped", reason);
    this.restartTimes = [];
    await this.start(reason);
  }

  async enable(): Promise<void> {
    if (this.state !== "disabled") return;
    this.setState("stopped", "enabled");
    this.restartTimes = [];
    if (this.config.startup === "eager") await this.start("enabled");
  }

  async disable(reason = "disabled"): Promise<void> {
    await this.stop("disabled", reason);
  }

  /** Replaces the config (reload). The caller restarts the server when the transport changed. */
  updateConfig(config: ResolvedServerConfig): void {
    this.config = config;
    if (config.maxConcurrency !== this.queue.concurrency) this.queue.concurrency = config.maxConcurrency;
  }

  /**
   * The session when it can take a request. A session whose server just died stays `ready` until its
   * transport has finished closing (up to closeGraceMs x 2 for a process that keeps running after closing
   * its stdout); a request arriving meanwhile waits for the restart instead of failing on a dead transport.
   */
  private get usableClient(): MCPClient | undefined {
    return this.state === "ready" && this.client?.transport.connected ? this.client : undefined;
  }

  /**
   * Waits until the server is ready, starting it when it is stopped (lazy or idle), bounded by
   * `timeoutMs` and `signal`. A `failed` or `disabled` server fails at once, and so does one whose last
   * start failed before it became ready (its restarts go on; the error says why it failed).
   * @throws ServerUnavailableError (MCPD_SERVER_UNAVAILABLE)
   */
  async whenReady(timeoutMs: number, signal?: AbortSignal): Promise<MCPClient> {
    const usable = this.usableClient;
    if (usable) return usable;
    if (this.state === "failed" || this.state === "disabled" || this.startFailure !== undefined) throw this.unavailable();
    if (this.state === "stopped") void this.start("started on demand");
    return new Promise<MCPClient>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        this.off("state", onState);
        signal?.removeEventListener("abort", onAbort);
      };
      const onState = (): void => {
        if (this.state === "ready" && this.client) {
          done();
          resolve(this.client);
        } else if (this.state === "failed" || this.state === "disabled" || this.state === "stopped" || this.startFailure !== undefined) {
          done();
          reject(this.unavailable());
        }
      };
      const onAbort = (): void => {
        done();
        reject(signal?.reason);
      };
      const timer =
        timeoutMs > 0 && Number.isFinite(timeoutMs)
          ? setTimeout(() => {
              done();
              reject(new ServerUnavailableError(this.name, this.state, `not ready after ${timeoutMs} ms${this.detail()}`));
            }, timeoutMs)
          : undefined;
      this.on("state", onState);
      signal?.addEventListener("abort", onAbort, { once: true });
      if (signal?.aborted) onAbort();
    });
  }

  /** The state's reason and the last stderr line, each once (the reason often quotes stderr already). */
  private why(): string {
    const parts: string[] = [];
    if (this.stateReason) parts.push(this.stateReason);
    const last = this.lastStderr;
    if (last && !this.stateReason.includes(last)) parts.push(`last stderr: ${last}`);
    return parts.join("; ");
  }

  private detail(): string {
    const why = this.why();
    return why ? ` (${why})` : "";
  }

  private unavailable(): ServerUnavailableError {
    return new ServerUnavailableError(this.name, this.state, this.why() || undefined);
  }

  /**
   * Sends one request upstream through the server's concurrency gate. Waits for readiness first
   * (bounded by `waitMs`). The transport's own deadline is left to the caller (`options.timeout`).
   * With a `cancellation`, no AbortSignal is made unless a wait needs one: once the request is with the
   * transport, a cancel reaches it by request id (every transport cancels by id).
   * @throws ServerUnavailableError, QueueFullError, and whatever the session throws.
   */
  async request<T = JsonObject>(
    method: string,
    params: JsonObject | undefined,
    options: RequestOptions & { waitMs: number; cancellation?: Cancellation },
  ): Promise<T> {
    const c = options.cancellation;
    const client = this.usableClient ?? (await this.whenReady(options.waitMs, c ? c.signal : options.signal));
    if (this.queue.size >= this.config.maxQueue) {
      throw new QueueFullError(`Server "${this.name}" has ${this.queue.size} requests waiting (maxQueue ${this.config.maxQueue})`);
    }
    const started = this.stats.begin();
    const reqOptions: RequestOptions = { timeout: options.timeout ?? 0 };
    if (c) reqOptions.cancellation = c;
    else if (options.signal) reqOptions.signal = options.signal;
    if (options.onRequestId) reqOptions.onRequestId = options.onRequestId;
    const run = (): Promise<T> => client.request<T>(method, params, reqOptions);
    // Only a request that must wait for a slot pays for a signal to leave the queue early.
    const mustWait = this.queue.pending >= this.queue.concurrency || this.queue.size > 0;
    const queueSignal = mustWait ? (c ? c.signal : options.signal) : undefined;
    try {
      const result = await this.queue.add(run, queueSignal ? { signal: queueSignal } : {});
      this.stats.end(started);
      return result as T;
    } catch (err) {
      const e = this.clarify(err);
      this.stats.end(started, e);
      throw e;
    }
  }

  /**
   * Makes a failed request's error clear to the caller. A session mcpd ended on purpose (health restart,
   * restart, disable, reload) closes without a reason of its own: the state says why. A network error a
   * transport let through raw (undici's `UND_ERR_SOCKET`, `ECONNRESET`, ...) would reach the client as a
   * bare -32603 "other side closed": it becomes TransportClosedError (-32062) naming the server and code.
   */
  private clarify(err: unknown): unknown {
    if (err instanceof TransportClosedError && err.reason === undefined) return new TransportClosedError(`${this.state}: ${this.stateReason}`);
    const code = (err as { code?: unknown } | undefined)?.code;
    if (err instanceof Error && !(err instanceof McpdError) && err.name !== "AbortError" && typeof code === "string") {
      return new TransportClosedError(`network error talking to "${this.name}": ${err.message} (${code})`, { cause: err });
    }
    return err;
  }
}
