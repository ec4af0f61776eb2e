import { NotFoundError, PROTOCOL_DEFAULTS, quote, type ClientCapabilities, type ReloadDiff } from "@mcpd/protocol";
import type { LoadedConfig, ResolvedServerConfig } from "../config/config-schema.js";
import { ChildRegistry } from "./child-registry.js";
import { ServerHandle, type StateChange } from "./server-handle.js";
import type { ManagerListener, ManagerOptions, ServerRequestAnswerer } from "./manager-types.js";
import { relayedCapabilities } from "./relayed-capabilities.js";
import { ToolCache, type CachedServer } from "./tool-cache.js";
import { UiSessions } from "./ui-sessions.js";
import { applyConfig } from "./apply-config.js";
import { disabledInConfig } from "./disable-reasons.js";
import { PrivateSessions } from "./private-sessions.js";
import { RUNTIME_DEFAULTS } from "../defaults.js";
import { silentDaemonLogger, type DaemonLogger } from "../infra/daemon-logger.js";
import { shuttingDownError } from "../lifecycle/shutting-down-error.js";

export type { ManagerListener, ManagerOptions, ServerRequestAnswerer } from "./manager-types.js";
/** What a reload did: server names per outcome (declared with the control protocol's `mcpd/reload`). */
export type { ReloadDiff };

/**
 * Owns every upstream server: one {@link ServerHandle} per configured server (plus private sessions for
 * `sharing: "per-client"` servers), discovery, reload by diff, and shutdown. Tells its listeners
 * ({@link watch}) what every handle says, through typed callbacks, and hands the servers' own requests to
 * {@link serverRequests}.
 */
export class MCPManager {
  /** Answers every server's requests to clients (the router, through its adapter); unset: they fail. */
  serverRequests: ServerRequestAnswerer | undefined;
  private readonly listeners = new Set<ManagerListener>();
  private readonly handles = new Map<string, ServerHandle>();
  /** Private sessions of per-client servers, one per server and connection. */
  private readonly privates = new PrivateSessions();
  private readonly opts: ManagerOptions;
  private readonly log: DaemonLogger;
  /** Each handle's logger (a child of {@link log}), whose level follows its config. */
  private readonly logs = new WeakMap<ServerHandle, DaemonLogger>();
  private readonly cache: ToolCache | undefined;
  /** Shared servers' second sessions, for clients that declared the UI extension (ui-sessions.ts). */
  readonly ui: UiSessions;
  readonly children: ChildRegistry | undefined;
  private shuttingDown = false;

  constructor(options: ManagerOptions) {
    this.opts = options;
    this.log = options.logger ?? silentDaemonLogger;
    this.cache = options.cacheDir ? new ToolCache(options.cacheDir, this.log) : undefined;
    this.children = options.childrenFile ? new ChildRegistry(options.childrenFile, this.log) : undefined;
    this.ui = new UiSessions(options.clientCapabilities ?? {}, (shared, caps) => this.makeHandle(shared.config, "ui", undefined, caps));
  }

  /** Adds a listener of every server's events; returns the function that removes it. */
  watch(listener: ManagerListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get servers(): ServerHandle[] {
    return [...this.handles.values()];
  }

  get(name: string): ServerHandle | undefined {
    return this.handles.get(name);
  }

  /** @throws NotFoundError (MCPD_UNKNOWN_SERVER) naming the servers that exist. */
  require(name: string): ServerHandle {
    const h = this.handles.get(name);
    if (!h) {
      const known = [...this.handles.keys()];
      throw new NotFoundError(
        "MCPD_UNKNOWN_SERVER",
        `Unknown server ${JSON.stringify(quote(name, PROTOCOL_DEFAULTS.quotedNameChars))}; configured: ${known.length ? known.join(", ") : "(none)"}`,
      );
    }
    return h;
  }

  /** A handle for `config`, made in one step (no await): see {@link reload}. */
  private makeHandle(config: ResolvedServerConfig, owner?: string, cached?: CachedServer, caps?: ClientCapabilities): ServerHandle {
    // Every line about the server names it (and the client owning a per-client session).
    const bindings = { server: config.name, ...(owner ? { owner } : {}) };
    const log = this.log.child(bindings, config.logLevel ? { level: config.logLevel } : undefined);
    const handle = new ServerHandle(config, {
      createTransport: this.opts.createTransport,
      logger: log,
      clientCapabilities: caps ? relayedCapabilities(this.opts.clientCapabilities ?? {}, caps) : (this.opts.clientCapabilities ?? {}),
      ...(cached?.tools ? { cachedTools: cached.tools } : {}),
      ...(cached?.era ? { knownEra: cached.era } : {}),
      // The handle's config as it is now, not `config`: a reload replaces it (updateConfig), and the tools
      // a session of the new config lists belong under the new config's hash.
      onToolsListed: (tools) => {
        if (!owner) {
          handle.cachedTools = [...tools];
          this.cache?.remember(handle.config.name, handle.config.transportHash, tools, log, handle.eras.known);
        }
      },
      onEraLearned: (era) => {
        if (!owner)
          this.cache?.remember(handle.config.name, handle.config.transportHash, handle.client?.tools ?? handle.cachedTools ?? [], log, era);
      },
      onChildStarted: (pid) => this.children?.add(handle.config.name, pid, (handle.config.transport as { command?: string }).command ?? ""),
      onChildExited: (pid) => this.children?.remove(pid),
      onNotification: (method, params, ctx) => {
        for (const l of this.listeners) l.notification?.(handle, method, params, ctx);
      },
      onListChanged: (kind) => {
        for (const l of this.listeners) l.listChanged?.(handle, kind);
      },
    });
    this.logs.set(handle, log);
    if (!config.enabled) handle.stateReason = disabledInConfig(config.name);
    handle.requestHandler = (req, ctx) =>
      this.serverRequests ? this.serverRequests(handle, req, ctx) : Promise.reject(new Error(`No handler for ${req.method}`));
    handle.on("state", (change: StateChange) => {
      for (const l of this.listeners) l.state?.(handle, change);
    });
    return handle;
  }

  /**
   * Ends process groups left by a previous run, creates a handle per server, and starts every eager,
   * enabled server in parallel. Resolves when each has become ready or failed its first attempt; one
   * slow server never delays another's readiness.
   */
  async discoverAndConnect(config: LoadedConfig): Promise<void> {
    await this.load(config);
    await this.startAll();
  }

  /**
   * Ends process groups left by a previous run and creates a handle per server (with its cached tools),
   * without starting anything: the daemon does this before it listens, so no client ever sees a
   * configured server missing.
   */
  async load(config: LoadedConfig): Promise<void> {
    await this.children?.reapOrphans();
    const cached = await this.readCache(config.servers);
    for (const server of config.servers) {
      const handle = this.makeHandle(server, undefined, cached.get(server.name));
      this.handles.set(server.name, handle);
      for (const l of this.listeners) l.added?.(handle);
    }
  }

  private async readCache(servers: readonly ResolvedServerConfig[]): Promise<Map<string, CachedServer>> {
    return (await this.cache?.readAll(servers)) ?? new Map();
  }

  /** Starts every enabled eager server in parallel; resolves when each is ready or failed its first attempt. */
  async startAll(): Promise<void> {
    await Promise.all(this.servers.filter((h) => h.config.enabled && h.config.startup === "eager").map((h) => h.start()));
  }

  /**
   * The handle a connection should use for a server: the shared one, or for `sharing: "per-client"` a
   * private session owned by that connection (started on first use, ended by {@link releaseConnection}),
   * which declares `capabilities`, the client's own, upstream (as far as mcpd relays them). A client that
   * declared the UI extension uses a shared server's UI session (ui-sessions.ts).
   */
  async handleFor(name: string, connectionId: string, capabilities: ClientCapabilities = {}): Promise<ServerHandle> {
    const shared = this.require(name);
    if (shared.state === "disabled") return shared;
    if (shared.config.sharing !== "per-client") return (this.shuttingDown ? undefined : this.ui.for(shared, capabilities)) ?? shared;
    return this.privates.for(name, connectionId, () => {
      if (this.shuttingDown) throw shuttingDownError();
      return this.makeHandle(shared.config, connectionId, shared.eras.known ? { era: shared.eras.known } : undefined, capabilities);
    });
  }

  /**
   * A connection closed: end its private sessions, except those in `keep` (a call on it is held for a retry
   * that may come on another connection), which stay, still under this connection, until {@link movePrivate}
   * gives them to another or {@link stopPrivate} ends them.
   */
  async releaseConnection(connectionId: string, keep?: { has(handle: ServerHandle): boolean }): Promise<void> {
    const ends = this.privates.takeConnection(connectionId, keep).map((h) => h.stop("stopped", "client disconnected"));
    if (!this.shuttingDown) ends.push(this.ui.release());
    await Promise.all(ends);
  }

  /** Private session `handle` becomes connection `connectionId`'s: it ends when that connection closes. */
  movePrivate(handle: object, connectionId: string): void {
    this.privates.move(handle, connectionId);
  }

  /** Ends private session `handle` (kept at its connection's end, see {@link releaseConnection}). */
  async stopPrivate(handle: object, reason: string): Promise<void> {
    await this.privates.take(handle)?.stop("stopped", reason);
  }

  /** Private (per-client) handles of one server, for status. */
  privateSessions(name: string): ServerHandle[] {
    return this.privates.of(name);
  }

  /**
   * Applies a new config by diff: added servers start, removed ones stop, changed ones restart with the
   * new config; unchanged servers keep their sessions and in-flight requests. Resolves once the servers it
   * started are ready or failed their first attempt.
   *
   * The diff is applied in one step, with no await between finding a server missing and adding it, so
   * reloads that overlap cannot both start one server. When `signal` has aborted by then (or the manager
   * is shutting down) nothing is applied: it rejects with the signal's reason (MCPD_SHUTTING_DOWN). A
   * changed server whose restart is under way when `signal` aborts is not started again.
   *
   * A server removed, disabled or restarted lets its running calls finish first, up to `drainMs`
   * (default `RUNTIME_DEFAULTS.reloadDrainMs`), while new calls wait in its queue (see ServerHandle.stop).
   */
  async reload(config: LoadedConfig, signal?: AbortSignal, drainMs: number = RUNTIME_DEFAULTS.reloadDrainMs): Promise<ReloadDiff> {
    const cached = await this.readCache(config.servers.filter((s) => !this.handles.has(s.name)));
    signal?.throwIfAborted();
    if (this.shuttingDown) throw shuttingDownError();
    const next = new Map(config.servers.map((s) => [s.name, s]));
    const result: ReloadDiff = { added: [], removed: [], changed: [], unchanged: [] };
    const work: Promise<void>[] = [];
    for (const [name, handle] of this.handles) {
      const cfg = next.get(name);
      if (!cfg) {
        result.removed.push(name);
        this.handles.delete(name);
        for (const l of this.listeners) l.removed?.(handle);
        work.push(handle.stop("stopped", "removed from config", drainMs), this.ui.drop(name, "removed from config", false));
        // Forgotten too: a server of that name added later must not hand a connection this old session.
        for (const p of this.privates.takeServer(name)) work.push(p.stop("stopped", "removed from config", drainMs));
      } else if (cfg.hash !== handle.config.hash) {
        result.changed.push(name);
        work.push(this.ui.drop(name, "config changed"));
        work.push(applyConfig(handle, cfg, true, signal, drainMs));
        for (const p of this.privateSessions(name)) work.push(applyConfig(p, cfg, false, signal, drainMs));
      } else {
        result.unchanged.push(name);
      }
    }
    for (const cfg of config.servers) {
      if (this.handles.has(cfg.name)) continue;
      result.added.push(cfg.name);
      const handle = this.makeHandle(cfg, undefined, cached.get(cfg.name));
      this.handles.set(cfg.name, handle);
      for (const l of this.listeners) l.added?.(handle);
      if (cfg.enabled && cfg.startup === "eager") work.push(handle.start("added by reload"));
    }
    // The daemon's level may have changed too: a server without a level of its own takes it.
    for (const h of [...this.handles.values(), ...this.privates.all, ...this.ui.all]) {
      const log = this.logs.get(h);
      if (log) log.level = next.get(h.name)?.logLevel ?? this.log.level;
    }
    await Promise.all(work);
    return result;
  }

  /**
   * `mcpd restart`: restarts a server and its private (per-client) sessions, which then run again at once.
   * @throws NotFoundError (MCPD_UNKNOWN_SERVER)
   */
  async restartServer(name: string, reason = "restart requested"): Promise<void> {
    const shared = this.require(name);
    await Promise.all([shared, ...this.privateSessions(name)].map((h) => h.restart(reason)));
  }

  /**
   * `mcpd disable`: disables a server and its private sessions (their connections' requests fail at once).
   * @throws NotFoundError (MCPD_UNKNOWN_SERVER)
   */
  async disableServer(name: string, reason: string): Promise<void> {
    const shared = this.require(name);
    await Promise.all([shared, ...this.privateSessions(name)].map((h) => h.disable(reason)));
  }

  /**
   * `mcpd enable`: enables a server (started when eager) and its private sessions (started by their next request).
   * @throws NotFoundError (MCPD_UNKNOWN_SERVER)
   */
  async enableServer(name: string): Promise<void> {
    const shared = this.require(name);
    await Promise.all([shared.enable(), ...this.privateSessions(name).map((h) => h.enable(false))]);
  }

  /**
   * Closes every upstream in parallel, each once its running requests have finished or `drainMs` has
   * passed (0: at once). Afterwards no child process of any server remains.
   */
  async shutdown(drainMs = 0): Promise<void> {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    // Closed, not only stopped: a restart under way (a reload's, `mcpd restart`) must not start it again.
    const all = [...this.handles.values(), ...this.privates.all, ...this.ui.all];
    await Promise.all(all.map((h) => h.close("mcpd shutting down", drainMs)));
    this.privates.clear();
    await this.cache?.settled();
  }
}
