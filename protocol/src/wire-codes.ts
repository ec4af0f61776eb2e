/**
 * Numeric JSON-RPC error codes on the wire. Standard JSON-RPC codes first, then mcpd's own block.
 *
 * mcpd's codes sit in -32060..-32079, inside the implementation-defined -32000..-32099 range and clear
 * of the codes MCP and its SDKs already use there (-32000 connection closed, -32001 request timeout in
 * the TypeScript SDK, -32002 resource not found, -32042 URL elicitation required).
 */
export const WireCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,

  /** The server is `failed` or `disabled` and cannot take requests. */
  ServerUnavailable: -32060,
  /** mcpd gave up waiting for the upstream (its `timeout`, or the caller's). */
  RequestTimeout: -32061,
  /** The upstream session closed (crash, exit, network) while the request was in flight. */
  UpstreamClosed: -32062,
  /** The connection already has its maximum number of requests in flight. */
  TooManyRequests: -32063,
  /** The server's bounded wait queue is full. */
  QueueFull: -32064,
  /** mcpd is shutting down and will not finish this request. */
  ShuttingDown: -32065,
  /** A server-to-client request had no single connection that could answer it. */
  NoClientForRequest: -32066,
  /** The upstream answered with an HTTP error status. */
  UpstreamHttpError: -32067,
  /** A message exceeded the configured size limit. */
  MessageTooLarge: -32068,
  /** The server did not declare the capability the method needs. */
  CapabilityNotSupported: -32069,
  /** The request was cancelled by the caller. */
  Cancelled: -32070,
  /** A privileged control method on a connection that is not a control connection (an agent's MCP session). */
  Forbidden: -32071,
  /** The daemon already has its maximum number of client connections; this one is closed. */
  TooManyConnections: -32072,
  /** The daemon-wide budget for bytes held for clients ran out and this connection held the most; it is closed. */
  BufferBudgetExceeded: -32073,
  /** A line from the client was not finished (no newline) within the deadline; the connection is closed. */
  LineTimeout: -32074,
  /**
   * The tool, prompt or resource exists but the connection's view hides it: its profile, its one-off tools
   * selection, or the server's own filter in the config.
   */
  Hidden: -32075,
  /** The server needs the user to authorize mcpd (OAuth): run `mcpd auth SERVER`. */
  AuthRequired: -32076,
} as const;

export type WireCodeName = keyof typeof WireCode;
