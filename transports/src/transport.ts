import type { Cancellation, JsonObject, JsonRpcRequest, Logger, MessageContext, RequestId, RequestReply } from "@mcpd/protocol";

export type { MessageContext } from "@mcpd/protocol";

/**
 * The transport contract every upstream transport implements (stdio, Streamable HTTP / legacy SSE,
 * WebSocket). Transports deliver messages and own lifecycles; they never retry, reconnect a dead
 * session on their own initiative, or resend a request: the manager above does that.
 *
 * `TransportRequestOptions` are one upstream request's options (the client SDK's `RequestOptions` are an
 * agent's, towards the daemon).
 */
export interface TransportRequestOptions {
  /** Caller cancellation. An abort rejects with `signal.reason` unchanged and sends `notifications/cancelled`. */
  signal?: AbortSignal;
  /**
   * Cancellation without an AbortSignal: once the request is sent, `cancellation.cancel(reason)` gives it
   * up by id (rejects with `reason`, sends `notifications/cancelled`); cancelled before, it is never sent.
   */
  cancellation?: Cancellation;
  /**
   * Deadline in ms for this request; `0` or `Infinity` disables the transport's own deadline. Default: the
   * config's `timeout`, else 30000.
   */
  timeout?: number;
  /**
   * Called synchronously with the id the transport gave this request, before it is sent. Lets the layer
   * above match messages that name it (e.g. `MessageContext.relatedRequestId`) to the caller.
   */
  onRequestId?: (id: RequestId) => void;
}

/** Why a transport closed. */
export interface CloseInfo {
  /** Human-readable reason: "closed by client", "process exited with code 1", "HTTP 404 ...". */
  reason: string;
  /** true when `close()` was called; false for crashes, exits and dropped connections. */
  expected: boolean;
  /** stdio: the child's exit code and signal, when it exited. */
  exitCode?: number | null;
  signal?: string | null;
  /** stdio: the last stderr lines at close time. */
  stderrTail?: string[];
}

/** What a transport can tell about itself, for status. Secrets never appear. */
export interface TransportInfo {
  type: "stdio" | "http" | "sse" | "ws";
  /** The wire mode in use: `stdio`, `streamable-http`, `legacy-sse` (2024-11-05) or `websocket`. */
  mode: "stdio" | "streamable-http" | "legacy-sse" | "websocket";
  pid?: number;
  sessionId?: string;
  /** Messages that could not be used (bad lines, unknown ids), counted. */
  droppedMessages: number;
}

/**
 * Handler for requests the server sends to the client (ping, roots/list, sampling/createMessage,
 * elicitation/create). Resolve with the result object; throw an McpdError/McpRemoteError to answer with
 * an error. When no handler is set the transport answers -32601 (ping is answered by the MCP client).
 */
export type ServerRequestHandler = (request: JsonRpcRequest, context: MessageContext) => Promise<JsonObject>;

export interface MCPTransport {
  /** True while the transport can carry messages. */
  readonly connected: boolean;
  connect(): Promise<void>;
  request<T = JsonObject>(method: string, params?: JsonObject, options?: TransportRequestOptions): Promise<T>;
  /**
   * {@link request} without a promise: `reply` learns the outcome exactly once, with the same results and
   * errors (a refusal before `call` returns). The daemon relays every call through it; optional in the
   * contract (a transport without it is driven through {@link request}), every mcpd transport has it.
   */
  call?(method: string, params: JsonObject | undefined, options: TransportRequestOptions | undefined, reply: RequestReply): void;
  /**
   * Gives up one request as a caller abort would (rejects it with `reason`, sends
   * `notifications/cancelled`), by the id reported through `onRequestId`. Lets a caller cancel without
   * creating an AbortSignal per request. Returns false when no such request is pending.
   */
  cancel(id: RequestId, reason: unknown): boolean;
  notify(method: string, params?: JsonObject): Promise<void>;
  /** Idempotent. Resolves when every resource (process, sockets, streams) is released. */
  close(): Promise<void>;
  /** Fired exactly once when the transport closes, expectedly or not. */
  onClose?: (info: CloseInfo) => void;
  /** Non-fatal problems (bad lines, listener parse errors). Fatal ones close the transport. */
  onError?: (error: Error) => void;
  onNotification?: (method: string, params: JsonObject | undefined, context: MessageContext) => void;
  onRequest?: ServerRequestHandler;
  /**
   * Streamable HTTP only: the `Mcp-Param-{Name}` headers a 2026-era request carries (MCP 2026-07-28,
   * "Custom Headers from Tool Parameters"), given by the layer that knows the tools' `inputSchema`s.
   * Other transports have no headers and ignore it.
   */
  paramHeaders?: (method: string, params: JsonObject | undefined) => Record<string, string> | undefined;
  info(): TransportInfo;
}

/** Options every transport constructor accepts besides its config. */
export interface TransportOptions {
  logger?: Logger;
}

export interface StdioServerConfig {
  type?: "stdio";
  command: string;
  args?: string[];
  /** Added to the child's environment (see `envMode`). */
  env?: Record<string, string>;
  cwd?: string;
  /** Default request timeout in ms (30000). */
  timeout?: number;
  /**
   * `allowlist` (default): only the variables in `ENV_ALLOWLIST` (HOME, PATH, USER, locale, temp dir,
   * XDG, proxy and CA-bundle settings) and `LC_*`, plus `env`. `inherit`: the whole environment plus `env`.
   */
  envMode?: "inherit" | "allowlist";
}

export interface HttpServerConfig {
  type: "http" | "sse";
  url: string;
  headers?: Record<string, string>;
  timeout?: number;
}

export interface WsServerConfig {
  type: "ws";
  url: string;
  headers?: Record<string, string>;
  timeout?: number;
}

export type TransportConfig = StdioServerConfig | HttpServerConfig | WsServerConfig;
