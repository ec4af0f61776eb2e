/**
 * @mcpd/transports: how mcpd talks to upstream MCP servers (stdio children, Streamable HTTP and legacy
 * HTTP+SSE, WebSocket). Every export of this file is public API.
 */
export * from "./transport.js";
export { TRANSPORT_DEFAULTS } from "./defaults.js";
export { ENV_ALLOWLIST, ENV_ALLOWLIST_PREFIXES, buildChildEnv, isAllowlisted, type EnvMode } from "./stdio/env.js";
export { createTransport } from "./create-transport.js";
export { StdioTransport, type StdioTransportOptions } from "./stdio/stdio-transport.js";
export { WebSocketTransport, MCP_WS_SUBPROTOCOL, type WsTransportOptions } from "./ws/ws-transport.js";
export { HttpTransport, type HttpTransportOptions, type HttpTransportMode } from "./http/http-transport.js";
export { callMCP, type CallMcpOptions } from "./http/call-mcp.js";
export { stderrHeadline, stderrErrorLine, lastStderrLine } from "./stdio/stderr-headline.js";
export { TRUNCATED, cutToBytes } from "./stdio/stderr-ring.js";
export {
  isDeadState,
  listProcPids,
  parseProcStat,
  readProcIdentity,
  readProcStat,
  readProcStatAsync,
  type ProcIdentity,
  type ProcStat,
} from "./procfs.js";
export { OAuthClient, type OAuthClientOptions } from "./http/auth/oauth-client.js";
export type {
  AuthorizationContext,
  ClientRegistration,
  OAuthClock,
  OAuthGrant,
  OAuthProvider,
  OAuthSettings,
  OAuthTokens,
} from "./http/auth/oauth-provider.js";
export { parseBearerChallenge, type BearerChallenge } from "./http/auth/www-authenticate.js";
export { JWT_ALGORITHMS, readPrivateKey } from "./http/auth/signing-key.js";
