import type { JsonObject, McpdError, Prompt, RequestId, Resource, ResourceTemplate, Tool } from "@mcpd/protocol";

/** A server's lifecycle state in the daemon. */
export type ServerState = "stopped" | "starting" | "ready" | "restarting" | "failed" | "disabled";

/** One entry of `mcpd/servers` ({@link McpdClient.servers}). */
export interface ServerSummary {
  name: string;
  state: ServerState;
  /** `stdio`, `http`, `sse` or `ws`. */
  transport: string;
  /** `shared` or `per-client`. */
  mode: string;
  enabled: boolean;
  /** Number of tools the server exposes (cached while it starts). */
  tools: number;
  [key: string]: unknown;
}

/** One server in `mcpd/status`. Durations in ms. */
export interface ServerStatus extends ServerSummary {
  pid: number | null;
  startedAt: string | null;
  uptimeMs: number | null;
  restarts: number;
  requests: number;
  errors: number;
  inFlight: number;
  latencyMs: { p50: number | null; p99: number | null };
  lastError: string | null;
  lastStderr: string | null;
  stateReason: string | null;
  commandFound?: boolean;
  sessions?: number;
  /** Advice about the server (e.g. use `sharing: "per-client"` for sampling with several agents), or null. */
  hint?: string | null;
}

/** One connected client in `mcpd/status`. */
export interface ClientStatus {
  id: string | number;
  view: "aggregate" | "server";
  server?: string | null;
  clientInfo?: { name: string; version: string } | null;
  inFlight: number;
  connectedAt: string;
  [key: string]: unknown;
}

/**
 * The result of `mcpd/status` ({@link McpdClient.status}). On a connection that is not a control
 * connection it is reduced: `restricted: true`, `daemon` holds only pid, version, startedAt and uptimeMs,
 * `clients` only this connection, and every server's `lastError` and `lastStderr` are null.
 */
export interface DaemonStatus {
  /** True when reduced (not a control connection). */
  restricted?: boolean;
  daemon: {
    pid: number;
    version: string;
    uptimeMs: number;
    socketPath: string;
    configFile: string;
    logFile: string;
    startedAt: string;
    [key: string]: unknown;
  };
  servers: ServerStatus[];
  /** The other connections to the daemon (the one asking is not listed). */
  clients: ClientStatus[];
  [key: string]: unknown;
}

/** The result of `mcpd/reload` ({@link McpdClient.reload}): server names per outcome. */
export interface ReloadResult {
  added: string[];
  removed: string[];
  changed: string[];
  unchanged: string[];
  warnings: string[];
  [key: string]: unknown;
}

/** A tool with the server it belongs to. `name` is the server's own (unprefixed) name. */
export interface ToolInfo extends Tool {
  server: string;
  /** The aggregate view's name for it (`<server>__<name>`, sanitized); set by aggregate listings. */
  exposedName?: string;
}

/** A prompt with the server it belongs to. `name` is the server's own (unprefixed) name. */
export interface PromptInfo extends Prompt {
  server: string;
  /** The aggregate view's name for it; set by aggregate listings. */
  exposedName?: string;
}

/** A resource with the server it belongs to. */
export interface ResourceInfo extends Resource {
  server: string;
}

/** A resource template with the server it belongs to. */
export interface ResourceTemplateInfo extends ResourceTemplate {
  server: string;
}

/** Context given to a handler of a server-to-client request. */
export interface RequestHandlerContext {
  /** The method, e.g. `sampling/createMessage`. */
  method: string;
  /** The server that asked, when the daemon said (`_meta["mcpd/server"]`) or the view is one server. */
  server: string | undefined;
  /** The daemon's id for this request on this connection. */
  requestId: RequestId;
  /** Aborted when the server cancels the request or the connection drops; the answer is then discarded. */
  signal: AbortSignal;
}

/**
 * Answers a server-to-client request (`sampling/createMessage`, `elicitation/create`, `roots/list`, ...).
 * Return the result object; throw to answer with an error (an {@link McpdError} keeps its wire code, any
 * other error becomes -32603 with its message).
 */
export type RequestHandler = (params: JsonObject, context: RequestHandlerContext) => JsonObject | Promise<JsonObject>;

/** Payload of the `notification` event: every notification the daemon sent on this connection. */
export interface NotificationEvent {
  method: string;
  params: JsonObject | undefined;
  /** The server it came from (`_meta["mcpd/server"]`, else the view's server); undefined for mcpd's own. */
  server: string | undefined;
}

/** Payload of the `listChanged` event. */
export interface ListChangedEvent {
  kind: "tools" | "prompts" | "resources";
  server: string | undefined;
}

/** Payload of the `serverState` event (`notifications/mcpd/serverState`). */
export interface ServerStateEvent {
  server: string;
  state: ServerState;
  previous: ServerState | undefined;
  reason: string | undefined;
}

/** Payload of the `connectionLost` event. */
export interface ConnectionLostEvent {
  /** `MCPD_CONNECTION_LOST`, with the socket error as `cause` when there was one. */
  error: McpdError;
}

/** Payload of the `reconnected` event. */
export interface ReconnectedEvent {
  /** Connection attempts it took. */
  attempts: number;
}

/** Payload of the `close` event. */
export interface CloseEvent {
  /**
   * Undefined after `close()`; `MCPD_CONNECTION_LOST` when the connection dropped with `reconnect: false`;
   * `MCPD_DAEMON_UNAVAILABLE` when the client gave up reconnecting.
   */
  error: McpdError | undefined;
}

/** The events of {@link McpdClient}, for `client.on(name, listener)`. */
export interface McpdClientEvents {
  notification: [NotificationEvent];
  listChanged: [ListChangedEvent];
  serverState: [ServerStateEvent];
  connectionLost: [ConnectionLostEvent];
  reconnected: [ReconnectedEvent];
  close: [CloseEvent];
}
