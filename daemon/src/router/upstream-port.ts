/**
 * The router's ports: what it needs of the servers ({@link Upstream}) and of whoever keeps them running
 * ({@link ServerDirectory}), as interfaces. Types only. The router imports these (and @mcpd/protocol, the
 * config's types), never supervision/: the daemon hands it the manager behind an adapter
 * (composition/manager-directory.ts), a test hands it fake upstreams in memory (daemon/test/router/).
 *
 * What a server says reaches the router through typed callbacks ({@link UpstreamEvents}), never event names.
 */
import type {
  Cancellation,
  ClientCapabilities,
  InitializeResult,
  JsonObject,
  JsonRpcRequest,
  MessageContext,
  Prompt,
  RequestId,
  RequestReply,
  Resource,
  ResourceTemplate,
  ServerCapabilities,
  ServerState,
  ServerStateParams,
  Tool,
} from "@mcpd/protocol";
import type { ResolvedServerConfig } from "../config/config-schema.js";

export type { ServerState };

/** A server's state changed: its name, the new and the previous state, and why (secrets not yet masked). */
export type StateChange = ServerStateParams;

/** The lists a server announces changes of with `notifications/<kind>/list_changed`. */
export type ListKind = "tools" | "prompts" | "resources";

/** The options of one call relayed to a server; they go to the transport as they are. */
export interface RelayOptions {
  /** The transport's own deadline, in ms; 0 for none (the router keeps the call's deadline). */
  readonly timeout: number;
  /** How long the call may wait for the server to become ready, in ms. */
  readonly waitMs: number;
  /**
   * Gives the call up: the upstream rejects it with the cancellation's reason and sends the server
   * `notifications/cancelled` with the id it gave the call (never an AbortSignal per call).
   */
  readonly cancellation: Cancellation;
  /** Told the id the upstream gave the call, before the call is sent. */
  onRequestId?(id: RequestId): void;
}

/** The options of a request the router makes itself (subscriptions): a wait for readiness, a deadline. */
export interface UpstreamRequestOptions {
  /** How long to wait for the server to become ready, in ms (0: fail at once when it is not). */
  waitMs: number;
  /** The request's deadline, in ms. */
  timeout?: number;
  cancellation?: Cancellation;
}

/** The live MCP session of a ready upstream: what the server answered to `initialize`, and its lists now. */
export interface UpstreamSession {
  readonly initializeResult: InitializeResult | undefined;
  readonly capabilities: ServerCapabilities;
  readonly instructions: string | undefined;
  readonly tools: readonly Tool[];
  readonly prompts: readonly Prompt[];
  readonly resources: readonly Resource[];
  readonly resourceTemplates: readonly ResourceTemplate[];
  /** Sends the server a notification (`notifications/roots/list_changed`). */
  notify(method: string, params?: JsonObject): Promise<void>;
  /** `logging/setLevel`. */
  setLoggingLevel(level: string, options?: { timeout?: number }): Promise<JsonObject>;
}

/**
 * One server as the router sees it: a configured server's shared session, or one connection's private
 * session of a `sharing: "per-client"` server (see {@link ServerDirectory.handleFor}). Its identity
 * matters: progress, server-to-client requests and subscriptions are routed by the object they came from.
 */
export interface Upstream {
  readonly name: string;
  /** The server's resolved config (timeouts, sharing, startup, roots, its own filters). */
  readonly config: ResolvedServerConfig;
  readonly state: ServerState;
  /** Whether a request would fail at once instead of waiting (disabled, failed, needs-auth, a start that failed). */
  readonly failsAtOnce: boolean;
  /** The tools of its last run (the on-disk cache), listed while it starts; undefined when none are known. */
  readonly cachedTools: readonly Tool[] | undefined;
  /** Tools to show: the live list once ready, else the cached one. */
  readonly tools: readonly Tool[];
  /** The live session, while there is one (read its lists only when `state` is `ready`). */
  readonly client: UpstreamSession | undefined;
  /**
   * The MCP session id the server gave its live session (Streamable HTTP's `Mcp-Session-Id`, a legacy SSE
   * endpoint's `sessionId`); undefined over stdio, in the stateless 2026 era, or without a session. Read
   * only for a span (`mcp.session.id`).
   */
  readonly sessionId?: string | undefined;
  /**
   * Waits until the server is ready (starting it when it is stopped), at most `timeoutMs`.
   * @throws ServerUnavailableError (MCPD_SERVER_UNAVAILABLE), AuthRequiredError (needs-auth)
   */
  whenReady(timeoutMs: number): Promise<UpstreamSession>;
  /** Sends one request of the router's own (waiting for readiness up to `options.waitMs`). */
  request<T = JsonObject>(method: string, params: JsonObject | undefined, options: UpstreamRequestOptions): Promise<T>;
  /**
   * Relays one client's call: `reply.resolve` or `reply.reject` is called once (a refusal may come before
   * `relay` returns). `options` is also how the call is cancelled ({@link RelayOptions.cancellation}).
   */
  relay(method: string, params: JsonObject | undefined, options: RelayOptions, reply: RequestReply<JsonObject>): void;
}

/**
 * What servers say, delivered to the router: one listener, typed callbacks. Every upstream's messages
 * (shared and private sessions) come here, with the upstream they came from.
 */
export interface UpstreamEvents {
  /** A configured server appeared (load, reload). */
  added(upstream: Upstream): void;
  /** A configured server left the config (reload); it is stopping. */
  removed(upstream: Upstream): void;
  state(upstream: Upstream, change: StateChange): void;
  /** The server's list of that kind was re-read (its notification follows through {@link notification}). */
  listChanged(upstream: Upstream, kind: ListKind): void;
  /** A notification from the server (progress, resource updates, log messages, list_changed, cancelled, ...). */
  notification(upstream: Upstream, method: string, params: JsonObject | undefined, context: MessageContext): void;
  /** A server-to-client request (sampling, elicitation, roots): its answer, or a rejection the server gets as an error. */
  request(upstream: Upstream, request: JsonRpcRequest, context: MessageContext): Promise<JsonObject>;
  /**
   * Whether a connection that declared the MCP Apps UI extension uses configured server `server` now (its
   * view shows it): a shared server's UI session lives only while one does.
   */
  usedByUiClient(server: string): boolean;
  /**
   * Whether a connection that did not declare the UI extension uses configured server `server` now: a
   * shared server's session is parked while none does and its UI session serves the rest.
   */
  usedWithoutUi(server: string): boolean;
}

/** The configured servers, as the router finds them (in the daemon: the MCPManager, through its adapter). */
export interface ServerDirectory {
  /** The shared session of every configured server, in configuration order. */
  readonly servers: readonly Upstream[];
  /** A configured server's shared session. */
  get(name: string): Upstream | undefined;
  /** @throws NotFoundError (MCPD_UNKNOWN_SERVER) naming the servers that exist. */
  require(name: string): Upstream;
  /**
   * The session one connection uses for a server: the shared one, or its own for a per-client server,
   * made with the connection's client `capabilities` (what it declared in initialize).
   */
  handleFor(name: string, connectionId: string, capabilities?: ClientCapabilities): Promise<Upstream>;
  /**
   * The session standing in for server `name`'s parked shared session (its UI session, while it alone
   * runs): the aggregate catalog reads its prompts and resources. Undefined: none.
   */
  standIn?(name: string): Upstream | undefined;
  /** A client without the UI extension has come to use server `name`: its parked shared session starts again. */
  unpark?(name: string): void;
  /**
   * A connection ended: its private sessions end, except those in `keep` (a call held on it for a 2026-era
   * client's retry in another request, held-calls.ts), which stay until {@link movePrivate} or {@link stopPrivate}.
   */
  releaseConnection(connectionId: string, keep?: ReadonlySet<Upstream>): Promise<void>;
  /** A private session kept at its connection's end becomes connection `connectionId`'s (and ends with it). */
  movePrivate(handle: Upstream, connectionId: string): void;
  /** A private session kept at its connection's end ends (its held call ended with no connection to take it). */
  stopPrivate(handle: Upstream, reason: string): Promise<void>;
  /** Installs the one listener of what the servers say (the router, once, when it is made). */
  listen(events: UpstreamEvents): void;
}
