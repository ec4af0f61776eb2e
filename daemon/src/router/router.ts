import {
  LOG_LEVELS,
  McpRemoteError,
  WireCode,
  silentLogger,
  type JsonObject,
  type JsonRpcRequest,
  type Logger,
  type LogLevel,
} from "@mcpd/protocol";
import type { MessageContext } from "@mcpd/transports";
import type { MCPManager } from "../manager.js";
import type { ServerHandle, StateChange } from "../server-handle.js";
import { setLogScrubber } from "../logger.js";
import { Catalog } from "./catalog.js";
import { SecretScrubber } from "./secret-scrubber.js";
import { Session, type Outbound, type SessionOptions, type InFlight } from "./session.js";

/** Which client capability a server-to-client request needs. */
const REQUEST_CAPABILITY: Record<string, string> = {
  "sampling/createMessage": "sampling",
  "elicitation/create": "elicitation",
  "roots/list": "roots",
};

export interface RouterOptions extends Omit<SessionOptions, "router"> {
  logger?: Logger;
}

/**
 * A daemon-unique progress token upstream, mapped back to the caller's own token. It is valid only for
 * progress from the upstream session the request went to (`entry.handle`).
 */
interface ProgressRoute {
  session: Session;
  token: string | number;
  entry: InFlight;
}

/**
 * State shared by every downstream connection: progress-token and subscription tables, logging levels,
 * the aggregate catalog, and the delivery of upstream notifications and server-to-client requests to the
 * right connection. Per-connection request handling lives in {@link Session}.
 */
export class Router {
  readonly manager: MCPManager;
  readonly catalog: Catalog;
  readonly sessions = new Map<string, Session>();
  readonly log: Logger;
  /** Masks the configured servers' secret values in what the daemon says about them (logs, errors, status). */
  readonly secrets: SecretScrubber;
  private readonly sessionOptions: Omit<SessionOptions, "router">;
  private readonly progress = new Map<string, ProgressRoute>();
  private progressCounter = 0;
  /** Progress notifications dropped: a token never issued, already released, or issued to another upstream. */
  private progressDropped = 0;
  /** Servers that warned about it once already, so a misbehaving server cannot flood the log. */
  private readonly progressWarned = new Set<string>();
  /** Per shared server: why a server-to-client request could not be routed, and what to do (status). */
  private readonly hints = new Map<string, string>();
  private sessionCounter = 0;
  /** `<server>\0<uri>` -> subscribed sessions. */
  private readonly subscriptions = new Map<string, Set<Session>>();
  /** The level each server was last set to, to avoid redundant setLevel calls. */
  private readonly upstreamLevels = new Map<string, LogLevel>();
  /** Server-to-client requests relayed to a session: `<server>\0<upstream request id>` -> route. */
  private readonly relayed = new Map<string, { session: Session; downstreamId: number }>();

  constructor(manager: MCPManager, options: RouterOptions) {
    this.manager = manager;
    this.log = options.logger ?? silentLogger;
    this.secrets = new SecretScrubber(() => manager.servers.map((h) => h.config));
    setLogScrubber(this.log, (line) => this.secrets.scrub(line));
    this.sessionOptions = options;
    this.catalog = new Catalog(() => manager.servers);
    manager.on("state", (h: ServerHandle, change: StateChange) => this.onState(h, change));
    manager.on("listChanged", () => this.catalog.invalidate());
    manager.on("notification", (h: ServerHandle, method: string, params: JsonObject | undefined) => this.onNotification(h, method, params));
    manager.on("added", (h: ServerHandle) => this.adopt(h));
    for (const h of manager.servers) this.adopt(h);
  }

  /** Installs the server-to-client request hook on a (shared or private) handle. */
  adopt(handle: ServerHandle): void {
    handle.requestHandler = (req, ctx) => this.onServerRequest(handle, req, ctx);
  }

  /** Counters for status and for tests that check nothing is left behind. */
  tables(): { progress: number; progressDropped: number; subscriptions: number; relayed: number; inFlight: number } {
    let inFlight = 0;
    for (const s of this.sessions.values()) inFlight += s.inFlightCount;
    return { progress: this.progress.size, progressDropped: this.progressDropped, subscriptions: this.subscriptions.size, relayed: this.relayed.size, inFlight };
  }

  attach(outbound: Outbound): Session {
    const id = `c${++this.sessionCounter}`;
    const session = new Session(id, outbound, { ...this.sessionOptions, router: this });
    this.sessions.set(id, session);
    return session;
  }

  /** A connection ended: cancel its in-flight requests, drop its subscriptions and private sessions. */
  async detach(session: Session): Promise<void> {
    if (!this.sessions.delete(session.id)) return;
    session.cancelAll("client disconnected");
    for (const key of [...session.subscriptions]) await this.unsubscribe(session, key).catch(() => {});
    for (const server of this.upstreamLevels.keys()) this.relevel(server);
    for (const [key, r] of this.relayed) if (r.session === session) this.relayed.delete(key);
    await this.manager.releaseConnection(session.id);
  }

  // ---- progress ----

  registerProgress(session: Session, token: string | number, entry: InFlight): string {
    const upstream = `mcpd-p${++this.progressCounter}`;
    this.progress.set(upstream, { session, token, entry });
    return upstream;
  }

  releaseProgress(upstreamToken: string): void {
    this.progress.delete(upstreamToken);
  }

  private dropProgress(handle: ServerHandle, token: unknown): void {
    this.progressDropped++;
    if (this.progressWarned.has(handle.name)) return;
    this.progressWarned.add(handle.name);
    const shown = typeof token === "string" ? token.slice(0, 100) : typeof token === "number" ? token : typeof token;
    this.log.warn({ server: handle.name, token: shown }, "dropped progress for a token this server was not given or whose request has ended (further ones are only counted)");
  }

  // ---- subscriptions (reference-counted per server and URI) ----

  async subscribe(session: Session, handle: ServerHandle, uri: string, waitMs: number): Promise<void> {
    const key = `${handle.name}\0${uri}`;
    let set = this.subscriptions.get(key);
    if (set) {
      set.add(session);
      session.subscriptions.add(key);
      return;
    }
    set = new Set([session]);
    this.subscriptions.set(key, set);
    session.subscriptions.add(key);
    try {
      await handle.request("resources/subscribe", { uri }, { waitMs, timeout: waitMs });
    } catch (err) {
      this.subscriptions.delete(key);
      session.subscriptions.delete(key);
      throw err;
    }
  }

  async unsubscribe(session: Session, key: string): Promise<void> {
    session.subscriptions.delete(key);
    const set = this.subscriptions.get(key);
    if (!set || !set.delete(session) || set.size > 0) return;
    this.subscriptions.delete(key);
    const sep = key.indexOf("\0");
    const handle = this.manager.get(key.slice(0, sep));
    if (handle && handle.state === "ready") {
      await handle.request("resources/unsubscribe", { uri: key.slice(sep + 1) }, { waitMs: 0, timeout: 10_000 });
    }
  }

  // ---- logging levels ----

  /** Sets the server to the most verbose level any connection viewing it asked for. */
  relevel(server: string): void {
    const handle = this.manager.get(server);
    if (!handle || handle.state !== "ready" || !handle.client?.capabilities.logging) return;
    let best: number | undefined;
    for (const s of this.sessions.values()) {
      if (s.logLevel === undefined || !s.views(handle)) continue;
      const i = LOG_LEVELS.indexOf(s.logLevel);
      if (best === undefined || i < best) best = i;
    }
    if (best === undefined) return;
    const level = LOG_LEVELS[best] as LogLevel;
    if (this.upstreamLevels.get(server) === level) return;
    this.upstreamLevels.set(server, level);
    handle.client.setLoggingLevel(level, { timeout: 10_000 }).catch((err: Error) => this.log.debug({ server, err: err.message }, "setLevel failed"));
  }

  // ---- upstream events ----

  private onState(handle: ServerHandle, change: StateChange): void {
    this.catalog.invalidate();
    if (change.state === "ready") {
      // A restarted server lost its subscriptions and log level: restore them.
      this.upstreamLevels.delete(handle.name);
      this.relevel(handle.name);
      for (const key of this.subscriptions.keys()) {
        if (key.startsWith(`${handle.name}\0`)) {
          handle.request("resources/subscribe", { uri: key.slice(handle.name.length + 1) }, { waitMs: 0, timeout: 10_000 }).catch(() => {});
        }
      }
    }
    for (const s of this.sessions.values()) s.onServerState(handle, change);
  }

  private onNotification(handle: ServerHandle, method: string, params: JsonObject | undefined): void {
    if (method === "notifications/progress") {
      const token = params?.progressToken;
      const route = typeof token === "string" ? this.progress.get(token) : undefined;
      // A token we never issued, or issued for a request to another server (or another client's private
      // session): never invent progress for anyone, and never let one server extend another's timeout.
      if (!route || route.entry.handle !== handle) {
        this.dropProgress(handle, token);
        return;
      }
      route.entry.touch();
      route.session.send({ jsonrpc: "2.0", method, params: { ...params, progressToken: route.token } });
      return;
    }
    if (method === "notifications/resources/updated") {
      const uri = params?.uri;
      const set = typeof uri === "string" ? this.subscriptions.get(`${handle.name}\0${uri}`) : undefined;
      if (set) for (const s of set) s.relayNotification(handle, method, params);
      return;
    }
    if (method === "notifications/cancelled") {
      const id = params?.requestId;
      const route = id !== undefined ? this.relayed.get(`${handle.name}\0${String(id)}`) : undefined;
      if (route) route.session.cancelOutgoing(route.downstreamId, typeof params?.reason === "string" ? params.reason : undefined);
      return;
    }
    if (method.endsWith("/list_changed")) this.catalog.invalidate();
    for (const s of this.sessions.values()) {
      if (!s.views(handle)) continue;
      if (method === "notifications/message" && !s.wantsLog(params)) continue;
      s.relayNotification(handle, method, params);
    }
  }

  /**
   * The connections that may have caused a server-to-client request from `handle`: a private session's
   * owner; on Streamable HTTP, when the request arrived on the response stream of one upstream request,
   * the connection that sent that request; otherwise every connection with requests in flight to it.
   * Who declared which capability plays no part here: narrowing by capability first would hand one
   * agent's request to a bystander.
   */
  private candidatesFor(handle: ServerHandle, ctx: MessageContext): Session[] {
    const isPrivate = handle !== this.manager.get(handle.name);
    const related = ctx.relatedRequestId;
    const out: Session[] = [];
    for (const s of this.sessions.values()) {
      if (isPrivate ? s.ownsPrivate(handle) : related !== undefined ? s.hasUpstreamRequest(handle, related) : s.hasInFlightTo(handle)) out.push(s);
    }
    return out;
  }

  /**
   * Sends a server-to-client request to the one connection that caused it (see {@link candidatesFor}),
   * only when there is exactly one candidate and it declared the capability the request needs. Otherwise
   * mcpd answers itself: `roots/list` with the server's configured roots, anything else with -32066
   * saying why. It never guesses.
   */
  private async onServerRequest(handle: ServerHandle, req: JsonRpcRequest, ctx: MessageContext): Promise<JsonObject> {
    const cap = REQUEST_CAPABILITY[req.method];
    const candidates = this.candidatesFor(handle, ctx);
    const only = candidates.length === 1 ? (candidates[0] as Session) : undefined;
    if (only && (!cap || only.declared(cap))) {
      const key = `${handle.name}\0${String(req.id)}`;
      const { id, result } = only.sendRequest(handle, req.method, req.params);
      this.relayed.set(key, { session: only, downstreamId: id });
      try {
        return await result;
      } finally {
        this.relayed.delete(key);
      }
    }
    if (candidates.length > 1) this.noteAmbiguous(handle, req.method, candidates.length);
    if (req.method === "roots/list") {
      return { roots: handle.config.roots.map((r) => ({ ...r })) };
    }
    const why = only
      ? `the only client with a request in flight to it (${only.label}) did not declare the "${cap}" capability`
      : candidates.length === 0
        ? ctx.relatedRequestId !== undefined
          ? "it arrived with a request that no connected client is waiting for"
          : "no client has a request in flight to it"
        : `${candidates.length} clients have requests in flight to it, so mcpd cannot tell which one it is for; ` +
          `set "sharing": "per-client" on this server to give each client its own session`;
    throw new McpRemoteError({
      code: WireCode.NoClientForRequest,
      message: `No single client can answer ${req.method} for server "${handle.name}": ${why}`,
      data: { mcpdCode: "MCPD_NO_CLIENT_FOR_REQUEST" },
    });
  }

  /** A shared server asked while several clients were calling it: keep (and log, once) a hint for status. */
  private noteAmbiguous(handle: ServerHandle, method: string, clients: number): void {
    if (this.hints.has(handle.name)) return;
    const hint =
      `${method} from this server arrived while ${clients} clients had requests in flight to it, so mcpd could not route it` +
      `${method === "roots/list" ? " (answered with the configured roots)" : " and refused it"}; ` +
      `to use sampling, elicitation or per-agent roots with several agents at once, give this server "sharing": "per-client"`;
    this.hints.set(handle.name, hint);
    this.log.warn({ server: handle.name, hint }, "server-to-client request could not be routed");
  }

  /**
   * The routing hint for a server's status, if one of its requests could not be routed (see
   * {@link noteAmbiguous}); none once the server is per-client.
   */
  hint(handle: ServerHandle): string | undefined {
    return handle.config.sharing === "per-client" ? undefined : this.hints.get(handle.name);
  }
}
