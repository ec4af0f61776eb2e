import {
  NotFoundError,
  PROTOCOL_DEFAULTS,
  quote,
  type ClientCapabilities,
  type JsonObject,
  type JsonRpcRequest,
  type Logger,
  type MessageContext,
  type ReloadDiff,
} from "@mcpd/protocol";
import type { MCPTransport, TransportConfig } from "@mcpd/transports";
import type { LoadedConfig, ResolvedServerConfig } from "../config/config-schema.js";
import { ChildRegistry } from "./child-registry.js";
import { ServerHandle, type StateChange } from "./server-handle.js";
import { relayedCapabilities } from "./relayed-capabilities.js";
import { ToolCache, type CachedServer } from "./tool-cache.js";
import { UiSessions } from "./ui-sessions.js";
import type { ListKind } from "./upstream-client.js";
import { disabledInConfig } from "./disable-reasons.js";
import { RUNTIME_DEFAULTS } from "../defaults.js";
import { silentDaemonLogger, type DaemonLogger } from "../infra/daemon-logger.js";
import { shuttingDownError } from "../lifecycle/shutting-down-error.js";

export interface ManagerOptions {
  createTransport: (config: TransportConfig, logger: Logger, server: ResolvedServerConfig) => MCPTransport;
  /** Each server logs through a child of it, at the server's `logLevel` when it has one. */
  logger?: DaemonLogger;
  /** Directory of the on-disk tool cache. */
  cacheDir?: string;
  /** File recording child process groups (orphan cleanup after a crash of mcpd). */
  childrenFile?: string;
  /** Capabilities mcpd declares upstream on behalf of its clients. */
  clientCapabilities?: ClientCapabilities;
}

/** What a reload did: server names per outcome (declared with the control protocol's `mcpd/reload`). */
export type { ReloadDiff };

/**
 * What the manager tells a listener about its servers, each call with the server's handle (a shared one,
 * or a connection's private session: notifications, states and list changes come from both).
 */
export interface ManagerListener {
  /** A configured server's handle was made (load, reload). */
  added?(handle: ServerHandle): void;
  /** A server left the config (reload); it is being stopped. */
  removed?(handle: ServerHandle): void;
  state?(handle: ServerHandle, change: StateChange): void;
  notification?(handle: ServerHandle, method: string, params: JsonObject | undefined, context: MessageContext): void;
  listChanged?(handle: ServerHandle, kind: ListKind): void;
}

/** Answers one server's sampling, elicitation or roots request; a rejection goes to the server as an error. */
export type ServerRequestAnswerer = (handle: ServerHandle, request: JsonRpcRequest, context: MessageContext) => Promise<JsonObject>;

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
  /**
   * Private sessions of per-client servers: key `<server>\0<connectionId>` (one moved to a connection that
   * has its own already, see {@link movePrivate}: `<server>\0moved-<n>\0<connectionId>`).
   */
  private readonly privateHandles = new Map<string, ServerHandle>();
  private movedCount = 0;
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
      onToolsListed: (tools) => {
        if (!owner) {
          handle.cachedTools = [...tools];
          this.cache?.remember(config.name, config.transportHash, tools, log, handle.eras.known);
        }
      },
      onEraLearned: (era) => {
        if (!owner) this.cache?.remember(config.name, config.transportHash, handle.client?.tools ?? handle.cachedTools ?? [], log, era);
      },
      onChildStarted: (pid) => this.children?.add(config.name, pid, (config.transport as { command?: string }).command ?? ""),
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
    const key = `${name}\0${connectionId}`;
    let h = this.privateHandles.get(key);
    if (!h) {
      if (this.shuttingDown) throw shuttingDownError();
      // No await between the lookup and the set: two requests of one connection share one private session.
      h = this.makeHandle(shared.config, connectionId, shared.eras.known ? { era: shared.eras.known } : undefined, capabilities);
      this.privateHandles.set(key, h);
    }
    return h;
  }

  /**
   * A connection closed: end its private sessions, except those in `keep` (a call on it is held for a retry
   * that may come on another connection), which stay, still under this connection, until {@link movePrivate}
   * gives them to another or {@link stopPrivate} ends them.
   */
  async releaseConnection(connectionId: string, keep?: { has(handle: ServerHandle): boolean }): Promise<void> {
    const ends: Promise<void>[] = [];
    for (const [key, h] of this.privateHandles) {
      if (key.endsWith(`\0${connectionId}`) && keep?.has(h) !== true) {
        this.privateHandles.delete(key);
        ends.push(h.stop("stopped", "client disconnected"));
      }
    }
    if (!this.shuttingDown) ends.push(this.ui.release());
    await Promise.all(ends);
  }

  /** Private session `handle` becomes connection `connectionId`'s: it ends when that connection closes. */
  movePrivate(handle: object, connectionId: string): void {
    for (const [key, h] of this.privateHandles) {
      if (h !== handle) continue;
      const name = key.slice(0, key.indexOf("\0"));
      this.privateHandles.delete(key);
      const natural = `${name}\0${connectionId}`;
      this.privateHandles.set(this.privateHandles.has(natural) ? `${name}\0moved-${++this.movedCount}\0${connectionId}` : natural, h);
      return;
    }
  }

  /** Ends private session `handle` (kept at its connection's end, see {@link releaseConnection}). */
  async stopPrivate(handle: object, reason: string): Promise<void> {
    for (const [key, h] of this.privateHandles) {
      if (h !== handle) continue;
      this.privateHandles.delete(key);
      await h.stop("stopped", reason);
      return;
    }
  }

  /** Private (per-client) handles of one server, for status. */
  privateSessions(name: string): ServerHandle[] {
    return [...this.privateHandles.entries()].filter(([k]) => k.startsWith(`${name}\0`)).map(([, h]) => h);
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
        for (const p of this.privateSessions(name)) work.push(p.stop("stopped", "removed from config"));
      } else if (cfg.hash !== handle.config.hash) {
        result.changed.push(name);
        work.push(this.ui.drop(name, "config changed"));
        const transportChanged = cfg.transportHash !== handle.config.transportHash || cfg.protocolEra !== handle.config.protocolEra;
        const wasEnabled = handle.config.enabled;
        handle.updateConfig(cfg);
        if (!cfg.enabled) work.push(handle.disable(disabledInConfig(name), drainMs));
        else if (!wasEnabled) work.push(handle.enable());
        else if (transportChanged || handle.state === "failed") work.push(handle.restart("config changed", signal, drainMs));
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
    for (const h of [...this.handles.values(), ...this.privateHandles.values(), ...this.ui.all]) {
      const log = this.logs.get(h);
      if (log) log.level = next.get(h.name)?.logLevel ?? this.log.level;
    }
    await Promise.all(work);
    return result;
  }

  /**
   * Closes every upstream in parallel, each once its running requests have finished or `drainMs` has
   * passed (0: at once). Afterwards no child process of any server remains.
   */
  async shutdown(drainMs = 0): Promise<void> {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    // Closed, not only stopped: a restart under way (a reload's, `mcpd restart`) must not start it again.
    const all = [...this.handles.values(), ...this.privateHandles.values(), ...this.ui.all];
    await Promise.all(all.map((h) => h.close("mcpd shutting down", drainMs)));
    this.privateHandles.clear();
    await this.cache?.settled();
  }
}
