import { EventEmitter } from "node:events";
import {
  LATEST_PROTOCOL_VERSION,
  McpdDisable,
  McpdEnable,
  McpdError,
  McpdLogs,
  McpdPrompts,
  McpdReload,
  McpdResources,
  McpdRestart,
  McpdServers,
  McpdShutdown,
  McpdStatus,
  McpdTools,
  isControlMethod,
  silentLogger,
  type CallToolResult,
  type InitializeResult,
  type JsonObject,
  type ControlMethod,
  type Logger,
  type LogsParams,
  type RequestId,
} from "@mcpd/protocol/core";
import { declaredCapabilities, openSession, selectParams, viewServerOf } from "./client-handshake.js";
import { CLIENT_DEFAULTS } from "./defaults.js";
import { IncomingNotifications } from "./incoming-notifications.js";
import { IncomingRequests } from "./incoming-requests.js";
import type { CallOptions, ControlArgs, McpdClientOptions } from "./mcpd-client-options.js";
import { resolvePaths } from "./paths.js";
import { ReconnectingSession, type SessionState } from "./reconnecting-session.js";
import { routeToServer, serverOf } from "./server-routing.js";
import type { SocketConnection } from "./socket-connection.js";
import { SubscriptionRegistry, type ResourceUpdate } from "./subscription-registry.js";
import type {
  McpdClientEvents,
  PromptInfo,
  ReloadResult,
  RequestHandler,
  ResourceInfo,
  ResourceTemplateInfo,
  ServerStateResult,
  ServerSummary,
  StatusResult,
  ToolInfo,
} from "./types.js";

const MAX_PAGES = 1_000;

/**
 * A client of the mcpd daemon: one socket connection carrying one MCP session (aggregate view, or one
 * server's view), plus mcpd's control methods. Reaches any server with per-request routing
 * (`_meta["mcpd/server"]`), reconnects when the daemon restarts, and emits the events of
 * {@link McpdClientEvents}.
 *
 * Errors are {@link McpdError}s; match on `code`: `MCPD_REQUEST_TIMEOUT`, `MCPD_ABORTED`,
 * `MCPD_SERVER_UNAVAILABLE`, `MCPD_UNKNOWN_TOOL`, `MCPD_DAEMON_UNAVAILABLE`, `MCPD_CONNECTION_LOST`,
 * `MCPD_QUEUE_FULL`; an upstream server's own JSON-RPC error is `MCPD_MCP_ERROR` (its code in `wireCode`,
 * its `data` in `data`). Create with {@link connect}, or `new McpdClient(options)` then {@link McpdClient.connect}.
 */
export class McpdClient extends EventEmitter<McpdClientEvents> {
  /** The socket this client connects to. */
  readonly socketPath: string;
  /** The server of a transparent view, or undefined for the aggregate view. */
  readonly viewServer: string | undefined;
  private readonly session: ReconnectingSession;
  private readonly incoming = new IncomingRequests();
  private readonly subscriptions: SubscriptionRegistry;
  private readonly notifications: IncomingNotifications;
  private readonly logger: Logger;

  constructor(private readonly options: McpdClientOptions = {}) {
    super();
    const env = options.env ?? process.env;
    this.socketPath = options.socketPath ?? resolvePaths(env).socketPath;
    this.viewServer = viewServerOf(options.view);
    this.logger = options.logger ?? silentLogger;
    for (const [method, handler] of Object.entries(options.handlers ?? {})) this.setRequestHandler(method, handler);
    this.subscriptions = new SubscriptionRegistry({
      send: async (method, server, uri) => {
        await this.request(server, method, { uri });
      },
      connected: () => this.session.state === "ready",
    });
    this.notifications = new IncomingNotifications(this, {
      subscriptions: this.subscriptions,
      incoming: this.incoming,
      viewServer: this.viewServer,
      logger: this.logger,
    });
    const select = selectParams(this.viewServer, options.control, options);
    const reconnect = options.reconnect;
    this.session = new ReconnectingSession({
      socketPath: this.socketPath,
      select,
      initializeParams: () => ({
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: declaredCapabilities(options.capabilities, this.incoming.handlers.keys()),
        clientInfo: options.clientInfo ?? CLIENT_DEFAULTS.clientInfo,
      }),
      ...(options.connectTimeout !== undefined ? { connectTimeoutMs: options.connectTimeout } : {}),
      ...(options.timeout !== undefined ? { requestTimeoutMs: options.timeout } : {}),
      ...(reconnect !== undefined ? { reconnect } : {}),
      logger: this.logger,
      onNotification: (method, params) => this.notifications.handle(method, params),
      onRequest: (conn, id, method, params) => this.onRequest(conn, id, method, params),
      afterHandshake: (conn, timeoutMs) => this.restoreSubscriptions(conn, timeoutMs),
      onConnectionLost: (error) => {
        this.incoming.abortAll(error);
        this.emit("connectionLost", { error });
      },
      onReconnected: (attempts) => this.emit("reconnected", { attempts }),
      onClosed: (error) => {
        this.incoming.abortAll(error ?? new McpdError("MCPD_CONNECTION_LOST", "The mcpd client is closed"));
        this.emit("close", { error });
      },
    });
  }

  /** `idle` (not connected yet), `connecting`, `ready`, `reconnecting` or `closed`. */
  get state(): SessionState {
    return this.session.state;
  }

  /** The daemon's answer to the latest `initialize` (serverInfo `mcpd` in the aggregate view). */
  get initializeResult(): InitializeResult | undefined {
    return this.session.initializeResult;
  }

  /**
   * Connects (starting the daemon first when `autostart` says so) and performs the handshake:
   * `mcpd/select {events: true, server?, control?}`, `initialize`, `notifications/initialized`.
   * @throws `MCPD_DAEMON_UNAVAILABLE` (no daemon; the message says to run `mcpd start`),
   * `MCPD_UNTRUSTED_SOCKET` (the socket or its directory is another user's, or others can write the
   * directory: nothing is sent and autostart is not tried), `MCPD_TOO_MANY_CONNECTIONS` when the daemon
   * is at its connection cap (no autostart then: it is running), or the daemon's handshake error (e.g.
   * `view` names an unknown server, `MCPD_UNKNOWN_PROFILE`).
   */
  async connect(): Promise<this> {
    await openSession(this.session, this.options, this.socketPath, this.logger);
    return this;
  }

  /** Closes the connection for good (no reconnection). In-flight calls fail with `MCPD_CONNECTION_LOST`. Idempotent. */
  close(): Promise<void> {
    return this.session.close();
  }

  /**
   * Registers the handler of a server-to-client request method (replacing any previous one). Register
   * `sampling/createMessage`, `elicitation/create` or `roots/list` before connecting (or pass `handlers`)
   * so the capability is declared; one registered later is declared at the next reconnection.
   */
  setRequestHandler(method: string, handler: RequestHandler): this {
    if (typeof method !== "string" || method === "") throw new TypeError("setRequestHandler: method must be a non-empty string");
    if (typeof handler !== "function") throw new TypeError(`setRequestHandler("${method}"): handler must be a function`);
    this.incoming.handlers.set(method, handler);
    return this;
  }

  /** Removes a handler; later requests of that method are answered with -32601. */
  removeRequestHandler(method: string): this {
    this.incoming.handlers.delete(method);
    return this;
  }

  /**
   * Sends any MCP request. `server` routes it to that server with unprefixed names (per-request routing,
   * `_meta["mcpd/server"]`); `undefined` sends it to the connection's view.
   */
  request<T extends object = JsonObject>(
    server: string | undefined,
    method: string,
    params?: JsonObject,
    options?: CallOptions,
  ): Promise<T> {
    let routed: JsonObject | undefined;
    try {
      routed = this.route(server, params);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.session.request(method, routed, options) as Promise<T>;
  }

  /** Sends any MCP notification (e.g. `notifications/roots/list_changed`), routed like {@link request}. */
  async notify(server: string | undefined, method: string, params?: JsonObject): Promise<void> {
    await this.session.notify(method, this.route(server, params));
  }

  /**
   * Calls a control method by its declaration in @mcpd/protocol (`McpdStatus`, `McpdRestart`, ...): the
   * params and the result are typed by it. `client.control(McpdRestart, { server: "github" })`.
   */
  control<P, R>(method: ControlMethod<string, P, R>, ...args: ControlArgs<P>): Promise<R>;
  /**
   * Calls an `mcpd/*` control method by name, untyped (e.g. one newer than this SDK).
   * @throws TypeError when `method` is not `mcpd/...`.
   */
  control<T extends object = JsonObject>(method: string, params?: JsonObject, options?: CallOptions): Promise<T>;
  control(method: ControlMethod | string, params?: object, options?: CallOptions): Promise<unknown> {
    const name = typeof method === "object" && method !== null ? method.method : method;
    if (typeof name !== "string" || !isControlMethod(name)) {
      return Promise.reject(new TypeError(`control(): "${String(name)}" is not an mcpd/* method; use request() for MCP methods`));
    }
    return this.session.request(name, params as JsonObject | undefined, options);
  }

  /** Checks the daemon answers (`ping`). */
  async ping(options?: CallOptions): Promise<void> {
    await this.session.request("ping", undefined, options);
  }

  /** The configured servers with their state and transport (`mcpd/servers`). */
  async servers(options?: CallOptions): Promise<ServerSummary[]> {
    return (await this.control(McpdServers, undefined, options)).servers;
  }

  /**
   * Tools with their server. With `server` (or in a server view): that server's tools, unprefixed, from
   * its `tools/list` (every page). Without: every server's tools (`mcpd/tools`), each with `exposedName`.
   * Either way only those this connection's `profile` and `tools` selection let through.
   */
  async listTools(filter: { server?: string } = {}, options?: CallOptions): Promise<ToolInfo[]> {
    const server = filter.server ?? this.viewServer;
    if (server === undefined) return (await this.control(McpdTools, undefined, options)).tools;
    const tools = await this.listAll<ToolInfo>(server, "tools/list", "tools", options);
    return tools.map((t) => ({ ...t, server }));
  }

  /**
   * Calls a tool. With `server`, `name` is the server's own tool name; without (aggregate view), the
   * exposed name (`<server>__<name>`). A tool that reports failure resolves with `isError: true`.
   * A name the server does not list: with `server`, the server's own answer; without, `MCPD_UNKNOWN_TOOL`.
   * @throws `MCPD_UNKNOWN_TOOL`, `MCPD_SERVER_UNAVAILABLE`, `MCPD_REQUEST_TIMEOUT`, `MCPD_ABORTED`,
   * `MCPD_CONNECTION_LOST`, `MCPD_DAEMON_UNAVAILABLE`, or the server's error (`MCPD_MCP_ERROR`).
   */
  callTool(
    call: { server?: string; name: string; arguments?: JsonObject; _meta?: JsonObject },
    options?: CallOptions,
  ): Promise<CallToolResult> {
    const params: JsonObject = { name: call.name, arguments: call.arguments ?? {} };
    if (call._meta) params._meta = call._meta;
    return this.request<CallToolResult>(call.server, "tools/call", params, options);
  }

  /** Prompts with their server; like {@link listTools} (`prompts/list` per server, or `mcpd/prompts`). */
  async listPrompts(filter: { server?: string } = {}, options?: CallOptions): Promise<PromptInfo[]> {
    const server = filter.server ?? this.viewServer;
    if (server === undefined) return (await this.control(McpdPrompts, undefined, options)).prompts;
    const prompts = await this.listAll<PromptInfo>(server, "prompts/list", "prompts", options);
    return prompts.map((p) => ({ ...p, server }));
  }

  /** Gets a prompt (`prompts/get`); `name` as in {@link callTool}. */
  getPrompt(get: { server?: string; name: string; arguments?: Record<string, string> }, options?: CallOptions): Promise<JsonObject> {
    const params: JsonObject = { name: get.name };
    if (get.arguments) params.arguments = get.arguments;
    return this.request(get.server, "prompts/get", params, options);
  }

  /** Resources with their server (`resources/list` per server, every page, or `mcpd/resources`). */
  async listResources(filter: { server?: string } = {}, options?: CallOptions): Promise<ResourceInfo[]> {
    const server = filter.server ?? this.viewServer;
    if (server === undefined) return (await this.control(McpdResources, undefined, options)).resources;
    const resources = await this.listAll<ResourceInfo>(server, "resources/list", "resources", options);
    return resources.map((r) => ({ ...r, server }));
  }

  /** Resource templates with their server (`resources/templates/list` per server, or `mcpd/resources`). */
  async listResourceTemplates(filter: { server?: string } = {}, options?: CallOptions): Promise<ResourceTemplateInfo[]> {
    const server = filter.server ?? this.viewServer;
    if (server === undefined) return (await this.control(McpdResources, undefined, options)).templates;
    const templates = await this.listAll<ResourceTemplateInfo>(server, "resources/templates/list", "resourceTemplates", options);
    return templates.map((t) => ({ ...t, server }));
  }

  /** Reads a resource (`resources/read`). Without `server`, the daemon routes by URI. */
  readResource(read: { server?: string; uri: string }, options?: CallOptions): Promise<JsonObject> {
    return this.request(read.server, "resources/read", { uri: read.uri }, options);
  }

  /**
   * Subscribes to a resource's updates: `onUpdate` runs for each `notifications/resources/updated` of
   * `uri`. Survives reconnections (re-subscribed on the new connection). Resolves with an idempotent
   * async unsubscribe; the upstream subscription ends when the last callback for (server, uri) goes.
   */
  subscribe(uri: string, onUpdate: (update: ResourceUpdate) => void, options: { server?: string } = {}): Promise<() => Promise<void>> {
    if (typeof uri !== "string" || uri === "") return Promise.reject(new TypeError("subscribe: uri must be a non-empty string"));
    if (typeof onUpdate !== "function") return Promise.reject(new TypeError("subscribe: onUpdate must be a function"));
    return this.subscriptions.add(uri, options.server, onUpdate);
  }

  /**
   * The daemon's status: its process, every server, every client (`mcpd/status`). Without `control: true`
   * it is reduced (`restricted: true`, a {@link RestrictedDaemonStatus}): this connection alone among the
   * clients, no paths, no stderr or last error.
   */
  status(options?: CallOptions): Promise<StatusResult> {
    return this.control(McpdStatus, undefined, options);
  }

  /**
   * Restarts one server, or all when `server` is omitted. Resolves with the names restarted. Needs
   * `control: true` (else `MCPD_FORBIDDEN`).
   */
  async restart(server?: string, options?: CallOptions): Promise<string[]> {
    const result = await this.control(McpdRestart, server === undefined ? {} : { server }, options);
    return result.restarted;
  }

  /**
   * Re-reads the config file (`mcpd/reload`). Needs `control: true`.
   * @throws the daemon's error naming the problem when the file is invalid; `MCPD_FORBIDDEN` without control.
   */
  reload(options?: CallOptions): Promise<ReloadResult> {
    return this.control(McpdReload, undefined, options);
  }

  /** Enables a server (starting it per its startup mode). Needs `control: true` (else `MCPD_FORBIDDEN`). */
  enable(server: string, options?: CallOptions): Promise<ServerStateResult> {
    return this.control(McpdEnable, { server }, options);
  }

  /** Disables a server (stopping it); calls to it then fail with `MCPD_SERVER_UNAVAILABLE`. Needs `control: true`. */
  disable(server: string, options?: CallOptions): Promise<ServerStateResult> {
    return this.control(McpdDisable, { server }, options);
  }

  /** A server's stderr tail, or the daemon's recent log lines when `server` is omitted. Needs `control: true`. */
  async logs(query: { server?: string; lines?: number } = {}, options?: CallOptions): Promise<string[]> {
    const params: LogsParams = {};
    if (query.server !== undefined) params.server = query.server;
    if (query.lines !== undefined) params.lines = query.lines;
    return (await this.control(McpdLogs, params, options)).lines;
  }

  /**
   * Asks the daemon to shut down gracefully (needs `control: true`). The connection then drops: the client
   * reconnects as usual (to a daemon started again), so call {@link close} when done.
   */
  async shutdown(options?: CallOptions): Promise<void> {
    await this.control(McpdShutdown, undefined, options);
  }

  private route(server: string | undefined, params: JsonObject | undefined): JsonObject | undefined {
    return routeToServer(server, this.viewServer, params);
  }

  /** Fetches every page of a list method, guarding against a server that repeats its cursor. */
  private async listAll<T>(server: string, method: string, key: string, options?: CallOptions): Promise<T[]> {
    const items: T[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await this.request<JsonObject>(server, method, cursor === undefined ? {} : { cursor }, options);
      const list = result[key];
      if (Array.isArray(list)) items.push(...(list as T[]));
      const next = result.nextCursor;
      if (typeof next !== "string" || next === "" || seen.has(next)) break;
      seen.add(next);
      cursor = next;
    }
    return items;
  }

  private onRequest(conn: SocketConnection, id: RequestId, method: string, params: JsonObject | undefined): void {
    this.incoming.handle(conn, id, method, params, serverOf(params, this.viewServer));
  }

  private async restoreSubscriptions(conn: SocketConnection, timeoutMs: number): Promise<void> {
    if (this.subscriptions.size === 0) return;
    const failures = await this.subscriptions.restore(async (server, uri) => {
      await conn.request("resources/subscribe", this.route(server, { uri }), { timeout: timeoutMs });
    });
    for (const f of failures) {
      this.logger.warn({ uri: f.uri, server: f.server, err: f.error.message }, "could not restore a resource subscription");
    }
  }
}

/**
 * Creates an {@link McpdClient}, connects it (starting the daemon when `autostart` says so) and performs
 * the handshake. The returned client is ready for calls.
 *
 * @example
 * const client = await connect({ clientInfo: { name: "my-agent", version: "1.0.0" } });
 * const tools = await client.listTools();
 * @throws `MCPD_DAEMON_UNAVAILABLE` when no daemon answers (with a hint to run `mcpd start`),
 * `MCPD_UNTRUSTED_SOCKET` when another user could have made the socket (see {@link McpdClient.connect}).
 */
export function connect(options: McpdClientOptions = {}): Promise<McpdClient> {
  return new McpdClient(options).connect();
}
