import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { WireCode, silentLogger, type HttpFrontStatus, type Logger } from "@mcpd/protocol";
import type { HttpSettings } from "../config/index.js";
import { CONFIG_DEFAULTS } from "../defaults.js";
import type { BufferBudget } from "../infra/buffer-budget.js";
import type { Router } from "../router/router.js";
import { ConnectionCap } from "./connection-cap.js";
import { HttpBuffers } from "./http-buffers.js";
import type { MetricsPage } from "../metrics/prometheus.js";
import { LOOPBACK_NAMES, bearerDigest, checkHostAndOrigin, digestMatches, isLoopbackAddress, tokenDigest } from "./http-guard.js";
import { applyTimeouts, closeServers, listenOn, newServer } from "./http-listener.js";
import { sendError } from "./http-respond.js";
import { routeOf, type Route } from "./http-routes.js";
import { HttpSessions, type HttpSessionLimits } from "./http-sessions.js";
import { loadOrCreateToken } from "./http-token.js";
import { handleLegacyPost, handleLegacyStream } from "./legacy-handler.js";
import { ScopedAccess } from "./scoped-access.js";
import { handleDelete, handleGet, handlePost, type EndpointContext } from "./streamable-handler.js";
import { serveMetrics } from "./metrics-route.js";
import type { Dashboard } from "./dashboard/dashboard.js";

export interface HttpFrontOptions {
  router: Router;
  /** The bearer token's file (0600, in the state directory). */
  tokenFile: string;
  /** The scoped tokens' file (their SHA-256 digests; 0600, in the state directory), and how many may exist. */
  scopedTokens: { file: string; max: number };
  logger?: Logger;
  /**
   * The daemon-wide budget of bytes held for clients (`mcpd.maxBufferedBytesTotal`), shared with the
   * socket: request bodies, unread output and kept SSE events are charged to it.
   */
  budget: BufferBudget;
  /** The daemon's metrics for `/metrics` (main token only); without it that path is not found. */
  metrics?: () => Promise<MetricsPage>;
  /** The dashboard, served at `/` and under `/dashboard/` with its own access (no token opens it). */
  dashboard?: Dashboard;
  /** Told of the bytes the front end lets go (bodies read, output written, kept events trimmed): the daemon's garbage pacer. */
  released?: (bytes: number) => void;
  limits: Omit<HttpSessionLimits, "maxSessions" | "idleTimeoutMs" | "unusedIdleMs" | "streamAfterMs"> & {
    /** Largest request body, in bytes. */
    maxBodyBytes: number;
  };
}

/**
 * The daemon's HTTP face: MCP over Streamable HTTP (and the legacy HTTP+SSE transport) on loopback,
 * feeding the same router as the socket, so an HTTP session is a downstream session like any socket
 * connection. Every request needs the bearer token and a loopback `Host` (and `Origin`, when a browser
 * sends one). A port that cannot be bound is logged and reported in status; the daemon goes on.
 */
export class HttpFront {
  private readonly opts: HttpFrontOptions;
  private readonly log: Logger;
  readonly sessions: HttpSessions;
  /** The front end's account in the daemon-wide buffer budget. */
  private readonly buffers: HttpBuffers;
  /** The scoped tokens (`mcpd http --profile NAME`): each opens one profile's or server's endpoints. */
  readonly tokens: ScopedAccess;
  private servers: Server[] = [];
  private settings: HttpSettings | undefined;
  /** The bearer token's digest (see tokenDigest); empty until a token is loaded, which no digest matches. */
  private token: Buffer = Buffer.alloc(0);
  private allowed = new Set<string>(LOOPBACK_NAMES);
  private state: { url: string | null; error: string | null; addresses: string[] } = { url: null, error: null, addresses: [] };
  private sweepTimer: NodeJS.Timeout | undefined;
  /** TCP connections open over every listening server, and how many may be at once. */
  private readonly cap: ConnectionCap;

  constructor(options: HttpFrontOptions) {
    this.opts = options;
    this.log = options.logger ?? silentLogger;
    this.buffers = new HttpBuffers(options.budget, this.log);
    if (options.released) this.buffers.released = options.released;
    this.cap = new ConnectionCap(this.log);
    this.sessions = new HttpSessions(
      options.router,
      { ...options.limits, maxSessions: 0, idleTimeoutMs: 0, unusedIdleMs: 0, streamAfterMs: CONFIG_DEFAULTS.http.streamAfterMs },
      this.log,
      this.buffers,
    );
    this.tokens = new ScopedAccess({
      ...options.scopedTokens,
      router: options.router,
      sessions: this.sessions,
      log: this.log,
    });
  }

  /** Starts, restarts or stops serving to match `settings` (at start and on every reload). Never throws. */
  async apply(settings: HttpSettings): Promise<void> {
    const prev = this.settings;
    this.settings = settings;
    this.allowed = new Set([...LOOPBACK_NAMES, ...settings.allowedHosts.map((h) => h.toLowerCase())]);
    this.sessions.limits = {
      ...this.opts.limits,
      maxSessions: settings.maxSessions,
      idleTimeoutMs: settings.sessionIdleMs,
      unusedIdleMs: Math.min(settings.sessionIdleMs, settings.requestTimeoutMs),
      streamAfterMs: settings.streamAfterMs,
    };
    this.startSweep(Math.min(settings.sessionIdleMs, settings.requestTimeoutMs));
    for (const s of this.servers) applyTimeouts(s, settings.requestTimeoutMs);
    const same =
      prev &&
      prev.enabled === settings.enabled &&
      prev.port === settings.port &&
      prev.host === settings.host &&
      // Withdrawn permission to serve beyond loopback stops a front end that does.
      (prev.allowRemote === settings.allowRemote || isLoopbackAddress(settings.host));
    if (same && (this.servers.length > 0 || !settings.enabled)) return;
    // The sessions go with the address they were opened on; their open streams would also keep the old
    // server from closing (and this reload from completing) for as long as their clients hold them.
    this.sessions.closeAll();
    await this.stopListening();
    if (!settings.enabled) return;
    if (!isLoopbackAddress(settings.host) && !settings.allowRemote) {
      this.fail(
        `"mcpd.http.host" ${settings.host} is not a loopback address; set "mcpd.http.allowRemote": true to serve beyond this machine`,
      );
      return;
    }
    try {
      this.token = tokenDigest(loadOrCreateToken(this.opts.tokenFile));
    } catch (err) {
      this.fail(`cannot keep the token in ${this.opts.tokenFile}: ${(err as Error).message}`);
      return;
    }
    await this.listen(settings);
  }

  /** Bounds the TCP connections held at once by the daemon's one client connection cap (see {@link ConnectionCap}). */
  setConnectionCap(max: number, socketConnections: () => number): void {
    this.cap.set(max, socketConnections);
  }

  /** TCP connections open now. */
  get openConnections(): number {
    return this.cap.open;
  }

  /** Checks for idle sessions a few times per (shortest) idle period (at most once a second, at least once a minute). */
  private startSweep(idleMs: number): void {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    const every = Math.max(1_000, Math.min(60_000, Math.floor(idleMs / 4)));
    this.sweepTimer = setInterval(() => this.sessions.sweep(), every);
    this.sweepTimer.unref();
  }

  /** The front end for `mcpd status`. */
  status(): HttpFrontStatus {
    return {
      enabled: this.settings?.enabled ?? false,
      url: this.state.url,
      tokenFile: this.opts.tokenFile,
      listening: this.servers.length > 0,
      error: this.state.error,
      addresses: [...this.state.addresses],
      maxSessions: this.sessions.limits.maxSessions,
      ...this.sessions.stats(),
    };
  }

  /** Stops listening and ends every session (shutdown). */
  async close(): Promise<void> {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
    this.sessions.closeAll();
    this.buffers.bodyBlocks.clear();
    await this.stopListening();
  }

  private fail(error: string): void {
    this.state = { url: null, error, addresses: [] };
    this.log.error({ err: error }, "HTTP front end is not serving");
  }

  private async listen(settings: HttpSettings): Promise<void> {
    const listening = await listenOn(settings, () => this.createServer(settings.requestTimeoutMs), this.log);
    if ("error" in listening) return this.fail(listening.error);
    this.servers = listening.servers;
    this.state = { url: listening.url, error: null, addresses: listening.addresses };
    this.log.info({ url: listening.url, addresses: listening.addresses, tokenFile: this.opts.tokenFile }, "HTTP front end listening");
  }

  private createServer(requestTimeoutMs: number): Server {
    const server = newServer((req, res) => this.handle(req, res), requestTimeoutMs);
    this.cap.watch(server);
    return server;
  }

  private async stopListening(): Promise<void> {
    const servers = this.servers;
    this.servers = [];
    this.state = { url: null, error: null, addresses: [] };
    await closeServers(servers);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    try {
      if (this.opts.dashboard?.owns(req.url)) return this.opts.dashboard.serve(req, res, this.allowed);
      this.route(req, res);
    } catch (err) {
      this.log.error({ err: (err as Error).message }, "HTTP request failed");
      sendError(res, 500, WireCode.InternalError, `Internal error: ${(err as Error).message}`, "MCPD_INTERNAL");
    }
  }

  /**
   * Checks a request before it reaches an endpoint: a loopback `Host` (and `Origin`), then a token: the
   * main one opens every endpoint, a scoped one only its own (403 for anything else, even a path that is
   * no endpoint). @returns the endpoint and the sessions it is served with; undefined once answered.
   */
  private admit(req: IncomingMessage, res: ServerResponse): { route: Route; url: URL; sessions: HttpSessions } | undefined {
    const why = checkHostAndOrigin(req.headers.host, req.headers.origin, this.allowed);
    if (why) {
      sendError(
        res,
        403,
        WireCode.Forbidden,
        `Forbidden: ${why} (DNS rebinding protection; see "mcpd.http.allowedHosts")`,
        "MCPD_HTTP_FORBIDDEN_HOST",
      );
      return undefined;
    }
    const presented = bearerDigest(req.headers.authorization);
    const main = digestMatches(presented, this.token);
    const scoped = main ? undefined : this.tokens.match(presented);
    if (!main && scoped === undefined) {
      sendError(
        res,
        401,
        WireCode.Forbidden,
        "Unauthorized: send Authorization: Bearer <token>; `mcpd http` prints the token and ready client configs",
        "MCPD_HTTP_UNAUTHORIZED",
        {
          "www-authenticate": 'Bearer realm="mcpd"',
        },
      );
      return undefined;
    }
    const url = new URL(req.url ?? "/", "http://localhost");
    const route = routeOf(url.pathname);
    const refused = scoped && this.tokens.refusal(scoped, route, url.pathname);
    if (refused) {
      sendError(res, 403, WireCode.Forbidden, refused.message, refused.mcpdCode);
      return undefined;
    }
    if (!route) {
      sendError(
        res,
        404,
        WireCode.InvalidRequest,
        `Not found: ${url.pathname.slice(0, 200)} (endpoints: /mcp, /servers/<name>/mcp, /profiles/<name>/mcp, and /sse in place of /mcp; /metrics)`,
        "MCPD_HTTP_NOT_FOUND",
      );
      return undefined;
    }
    return { route, url, sessions: scoped ? this.tokens.sessionsFor(scoped, res) : this.sessions };
  }

  private route(req: IncomingMessage, res: ServerResponse): void {
    const admitted = this.admit(req, res);
    if (!admitted) return;
    const { route, url, sessions } = admitted;
    const onError = (err: unknown): void => {
      this.log.error({ err: (err as Error).message }, "HTTP request failed");
      sendError(res, 500, WireCode.InternalError, `Internal error: ${(err as Error).message}`, "MCPD_INTERNAL");
    };
    const method = req.method ?? "GET";
    const body = {
      maxBytes: this.opts.limits.maxBodyBytes,
      timeoutMs: this.settings?.requestTimeoutMs ?? CONFIG_DEFAULTS.http.requestTimeoutMs,
      buffers: this.buffers,
    };
    if (route.kind === "streamable") {
      const ctx: EndpointContext = { sessions, path: route.path, view: route.view, body };
      if (method === "POST") return void handlePost(req, res, ctx).catch(onError);
      if (method === "GET") return handleGet(req, res, ctx);
      if (method === "DELETE") return handleDelete(req, res, ctx);
      return this.notAllowed(res, "GET, POST, DELETE");
    }
    if (route.kind === "metrics") {
      if (method !== "GET") return this.notAllowed(res, "GET");
      return void serveMetrics(res, this.opts.metrics).catch(onError);
    }
    if (route.kind === "legacy-stream") {
      if (method !== "GET") return this.notAllowed(res, "GET");
      return handleLegacyStream(req, res, sessions, route.view, route.messagesPath);
    }
    if (method !== "POST") return this.notAllowed(res, "POST");
    void handleLegacyPost(req, res, sessions, route.path, url.searchParams, body).catch(onError);
  }

  private notAllowed(res: ServerResponse, allow: string): void {
    sendError(res, 405, WireCode.InvalidRequest, `Method Not Allowed: this endpoint takes ${allow}`, "MCPD_PROTOCOL_VIOLATION", { allow });
  }
}
