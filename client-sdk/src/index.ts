/**
 * @mcpd/client: the client SDK of the mcpd daemon. Every export of this file is public API.
 */
export { connect, McpdClient } from "./mcpd-client.js";
export { type ControlRequestOptions, type RequestOnceOptions, requestControl, requestOnce } from "./one-request.js";
export type { McpdClientOptions, CallOptions, ControlArgs } from "./mcpd-client-options.js";
export { McpdTransport, type McpdTransportOptions, type TransportMessage } from "./mcpd-transport.js";
export type { RequestOptions } from "./socket-connection.js";
export type { ProgressInfo } from "./request-helpers.js";
export type { ReconnectOptions, SessionState } from "./reconnecting-session.js";
export type { ResourceUpdate } from "./subscription-registry.js";
export { type AutostartOption, autostartCommand, runAutostart } from "./autostart.js";
export { CLIENT_DEFAULTS } from "./defaults.js";
export type * from "./types.js";
export * from "./paths.js";
export { checkSocketTrust, assertTrustedSocket, privateDirFault, type SocketTrustProblem } from "./socket-trust.js";
// The control protocol's declarations, for `client.control(McpdRestart, { server })` and friends.
export {
  CONTROL_METHODS,
  MCPD_SERVER_META,
  SERVER_STATES,
  McpdDisable,
  McpdEnable,
  McpdHttpTokenIssue,
  McpdHttpTokenList,
  McpdHttpTokenRevoke,
  McpdLogs,
  McpdPrompts,
  McpdReload,
  McpdResources,
  McpdRestart,
  McpdSelect,
  McpdServers,
  McpdServerStateNotification,
  McpdShutdown,
  McpdStatus,
  McpdTools,
  type ControlMethod,
  type ControlNotification,
} from "@mcpd/protocol/core";
// The error classes callers match on, re-exported so one import is enough.
export {
  McpdError,
  AbortedError,
  RequestTimeoutError,
  ConnectionLostError,
  DaemonUnavailableError,
  UntrustedSocketError,
  ServerUnavailableError,
  McpRemoteError,
  QueueFullError,
} from "@mcpd/protocol/core";
