import type { JsonObject, McpdError, RequestId, ServerState } from "@mcpd/protocol/core";

// The control protocol's shapes are declared once, in @mcpd/protocol; re-exported as part of this API.
export type {
  ClientStatus,
  DaemonInfo,
  DaemonStatus,
  HttpFrontStatus,
  HttpTokenInfo,
  HttpTokenIssueResult,
  HttpTokenListResult,
  HttpTokenRevokeResult,
  HttpTokenScope,
  LatencyMs,
  LogWriteStatus,
  PromptInfo,
  ReloadDiff,
  ReloadResult,
  ResourceInfo,
  ResourceTemplateInfo,
  RestrictedDaemonInfo,
  RestrictedDaemonStatus,
  RouterTables,
  ServerState,
  ServerStateResult,
  ServerStatus,
  ServerSummary,
  SocketWatchStatus,
  StatusResult,
  ToolInfo,
  UiSessionStatus,
} from "@mcpd/protocol/core";

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
