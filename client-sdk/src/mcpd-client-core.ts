/**
 * The session half of {@link McpdClient}: one socket connection carrying one MCP session, kept across
 * daemon restarts, with any request, notification or control method sent on it (routed to a server
 * when asked), the handlers of server-to-client requests, resource subscriptions, and the events.
 */
import { EventEmitter } from "node:events";
import {
  LATEST_PROTOCOL_VERSION,
  McpdError,
  isControlMethod,
  silentLogger,
  type InitializeResult,
  type JsonObject,
  type ControlMethod,
  type Logger,
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
import type { McpdClientEvents, RequestHandler } from "./types.js";

/**
 * A client of the mcpd daemon without the methods named for MCP's and mcpd's requests, which
 * {@link McpdClient} adds. Errors are {@link McpdError}s, as {@link McpdClient} says.
 */
export class McpdClientCore extends EventEmitter<McpdClientEvents> {
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
   * `view` names an unknown server, `MCPD_UNKNOWN_PROFILE`), or `MCPD_CONNECTION_LOST` when `close()`
   * ran before it finished.
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

  private route(server: string | undefined, params: JsonObject | undefined): JsonObject | undefined {
    return routeToServer(server, this.viewServer, params);
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
