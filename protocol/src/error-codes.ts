import { WireCode } from "./wire-codes.js";

/** One row of {@link ERROR_CODES}: the JSON-RPC code the error crosses the wire with, and what it means. */
export interface ErrorCodeInfo {
  /** The wire code, or `"peer"` when the error carries the peer's own code unchanged. */
  readonly wire: number | "peer";
  /** The class that raises it, when one does (else `McpdError` itself, or an HTTP answer's `data.mcpdCode`). */
  readonly raisedBy?: string;
  /** What happened, in one sentence: the docs' table is generated from these. */
  readonly meaning: string;
}

/**
 * Every stable error code mcpd raises, in one table: the `code` of an {@link McpdError} and the
 * `data.mcpdCode` of a JSON-RPC error mcpd sends. Match on these, never on message text. docs/errors.md's
 * code table is generated from this one (`npm run docs:errors`); a test fails when they differ.
 */
export const ERROR_CODES = {
  MCPD_TRANSPORT_CLOSED: {
    wire: WireCode.UpstreamClosed,
    raisedBy: "TransportClosedError",
    meaning: "The upstream session closed (crash, exit, network) while a request needed it; the message names why.",
  },
  MCPD_REQUEST_TIMEOUT: {
    wire: WireCode.RequestTimeout,
    raisedBy: "RequestTimeoutError",
    meaning: "A deadline passed: the request's, the SSE response's or a notification's.",
  },
  MCPD_ABORTED: { wire: WireCode.Cancelled, raisedBy: "AbortedError", meaning: "The caller cancelled the request." },
  MCPD_HTTP_ERROR: {
    wire: WireCode.UpstreamHttpError,
    raisedBy: "HttpError",
    meaning: "An upstream HTTP server answered with an error status; `data.status` holds it.",
  },
  MCPD_MCP_ERROR: {
    wire: "peer",
    raisedBy: "McpRemoteError",
    meaning: "A peer answered with a JSON-RPC error; it is forwarded unchanged.",
  },
  MCPD_NO_RESPONSE: {
    wire: WireCode.UpstreamClosed,
    raisedBy: "NoResponseError",
    meaning: "A stream ended without the response to a request.",
  },
  MCPD_PARSE_ERROR: { wire: WireCode.ParseError, raisedBy: "ParseError", meaning: "Bytes that are not JSON where JSON was required." },
  MCPD_PROTOCOL_VIOLATION: {
    wire: WireCode.InvalidRequest,
    raisedBy: "ProtocolError",
    meaning: "A peer broke the protocol: not JSON-RPC, a missing or mistyped field, a message out of order.",
  },
  MCPD_MESSAGE_TOO_LARGE: {
    wire: WireCode.MessageTooLarge,
    raisedBy: "MessageTooLargeError",
    meaning: "A line, message, body or SSE event exceeded its size limit; the message names both sizes.",
  },
  MCPD_QUEUE_FULL: {
    wire: WireCode.QueueFull,
    raisedBy: "QueueFullError",
    meaning: "A bounded queue is full; the work was refused rather than buffered without limit.",
  },
  MCPD_CONFIG_INVALID: {
    wire: WireCode.InvalidParams,
    raisedBy: "ConfigError",
    meaning: "A configuration file or value is invalid; the message names the file, the server and the key.",
  },
  MCPD_SPAWN_FAILED: {
    wire: WireCode.ServerUnavailable,
    raisedBy: "SpawnError",
    meaning: "A server's process could not be started; `errno` says why.",
  },
  MCPD_SERVER_UNAVAILABLE: {
    wire: WireCode.ServerUnavailable,
    raisedBy: "ServerUnavailableError",
    meaning: "The server is failed, disabled, restarting or stopped; the message names its state and reason.",
  },
  MCPD_UNKNOWN_SERVER: {
    wire: WireCode.InvalidParams,
    raisedBy: "NotFoundError",
    meaning: "No server of that name; the message names the configured ones.",
  },
  MCPD_UNKNOWN_TOOL: {
    wire: WireCode.InvalidParams,
    raisedBy: "NotFoundError",
    meaning: "No tool of that name; close names are suggested.",
  },
  MCPD_UNKNOWN_PROMPT: {
    wire: WireCode.InvalidParams,
    raisedBy: "NotFoundError",
    meaning: "No prompt of that name; close names are suggested.",
  },
  MCPD_UNKNOWN_RESOURCE: { wire: WireCode.InvalidParams, raisedBy: "NotFoundError", meaning: "No resource with that URI in the view." },
  MCPD_UNKNOWN_PROFILE: {
    wire: WireCode.InvalidParams,
    raisedBy: "NotFoundError",
    meaning: "No profile of that name; the message names the configured ones.",
  },
  MCPD_AMBIGUOUS_RESOURCE: {
    wire: WireCode.InvalidParams,
    meaning: "A plain resource URI that several servers of the view offer; the message names the prefixed forms.",
  },
  MCPD_AMBIGUOUS_TOOL: {
    wire: WireCode.InvalidParams,
    meaning: "An app's unprefixed tool name that several servers of the aggregate view offer; the message names them.",
  },
  MCPD_APP_ONLY_TOOL: {
    wire: WireCode.InvalidParams,
    meaning: 'A call of an app-only tool (`_meta.ui.visibility: ["app"]`) by a client that did not declare the MCP Apps UI extension.',
  },
  MCPD_CAPABILITY_NOT_SUPPORTED: {
    wire: WireCode.CapabilityNotSupported,
    raisedBy: "CapabilityError",
    meaning: "The server did not declare the capability the method needs; refused before going upstream.",
  },
  MCPD_FORBIDDEN: {
    wire: WireCode.Forbidden,
    raisedBy: "ForbiddenError",
    meaning: "A privileged control method on a connection that is not a control connection.",
  },
  MCPD_HIDDEN: {
    wire: WireCode.Hidden,
    raisedBy: "HiddenError",
    meaning: "The item exists but the connection's profile, tools selection or the server's filter hides it.",
  },
  MCPD_DAEMON_UNAVAILABLE: {
    wire: WireCode.InternalError,
    raisedBy: "DaemonUnavailableError",
    meaning: "The daemon's socket did not answer (not running, missing, refused).",
  },
  MCPD_UNTRUSTED_SOCKET: {
    wire: WireCode.InternalError,
    raisedBy: "UntrustedSocketError",
    meaning: "A client refused a socket another user could have made or replaced; nothing was sent.",
  },
  MCPD_CONNECTION_LOST: {
    wire: WireCode.UpstreamClosed,
    raisedBy: "ConnectionLostError",
    meaning: "The connection to mcpd dropped with a request in flight; never replayed.",
  },
  MCPD_TOO_MANY_CONNECTIONS: {
    wire: WireCode.TooManyConnections,
    raisedBy: "ConnectionLimitError",
    meaning: "The daemon already has its maximum of connections (or HTTP sessions); this one is refused.",
  },
  MCPD_BUFFER_BUDGET_EXCEEDED: {
    wire: WireCode.BufferBudgetExceeded,
    raisedBy: "ConnectionLimitError",
    meaning:
      "The daemon-wide budget for bytes held for clients ran out and this connection held the most: it is closed (HTTP: 503, the request body is refused).",
  },
  MCPD_LINE_TIMEOUT: {
    wire: WireCode.LineTimeout,
    raisedBy: "ConnectionLimitError",
    meaning: "A line from the client was not finished within the deadline; the connection is closed.",
  },
  MCPD_AUTH_REQUIRED: {
    wire: WireCode.AuthRequired,
    raisedBy: "AuthRequiredError",
    meaning: "The server needs the user to authorize mcpd: run `mcpd auth SERVER`.",
  },
  MCPD_OAUTH_DISCOVERY_FAILED: {
    wire: WireCode.UpstreamHttpError,
    raisedBy: "OAuthError",
    meaning: "OAuth discovery found no usable metadata.",
  },
  MCPD_OAUTH_RESOURCE_MISMATCH: {
    wire: WireCode.UpstreamHttpError,
    raisedBy: "OAuthError",
    meaning: "The protected resource metadata names another resource than the server's URL.",
  },
  MCPD_OAUTH_REGISTRATION_FAILED: {
    wire: WireCode.UpstreamHttpError,
    raisedBy: "OAuthError",
    meaning: "No OAuth client identity could be had, or registration was refused.",
  },
  MCPD_OAUTH_TOKEN_REFUSED: {
    wire: WireCode.UpstreamHttpError,
    raisedBy: "OAuthError",
    meaning: "The authorization server refused a token request; `data.oauthError` holds its `error`.",
  },
  MCPD_OAUTH_AUTHORIZATION_FAILED: {
    wire: WireCode.UpstreamHttpError,
    raisedBy: "OAuthError",
    meaning: "The user's authorization did not come back: denied, state mismatch or timeout.",
  },
  MCPD_OAUTH_TOKEN_REJECTED: {
    wire: WireCode.UpstreamHttpError,
    raisedBy: "OAuthError",
    meaning: "The MCP server refused an access token obtained for the very request it refused (answered 401 again).",
  },
  MCPD_OAUTH_UNSUPPORTED: {
    wire: WireCode.UpstreamHttpError,
    raisedBy: "OAuthError",
    meaning: "The authorization server's requirements cannot be met (no PKCE S256, no usable grant, too many step-ups).",
  },
  MCPD_AUTH_NOT_APPLICABLE: { wire: WireCode.InvalidParams, meaning: "`mcpd auth` for a server that does not use OAuth." },
  MCPD_AUTH_NOT_STARTED: { wire: WireCode.InvalidParams, meaning: "A wait for an authorization that was never started." },
  MCPD_SHUTTING_DOWN: { wire: WireCode.ShuttingDown, meaning: "mcpd is shutting down and will not finish (or start) this." },
  MCPD_TOO_MANY_REQUESTS: {
    wire: WireCode.TooManyRequests,
    meaning: "The connection already has its maximum number of requests in flight.",
  },
  MCPD_NO_CLIENT_FOR_REQUEST: {
    wire: WireCode.NoClientForRequest,
    meaning: "A server-to-client request had no single connection that could answer it.",
  },
  MCPD_INPUT_ROUNDS_EXCEEDED: {
    wire: WireCode.InternalError,
    meaning: "A 2026-era server answered `input_required` more times than `mcpd.maxInputRounds` allows for one call.",
  },
  MCPD_REQUEST_STATE_INVALID: {
    wire: WireCode.InvalidParams,
    meaning: "A retry's `requestState` is not one mcpd issued to this connection, was altered, has expired or was used already.",
  },
  MCPD_METHOD_NOT_FOUND: { wire: WireCode.MethodNotFound, meaning: "A method mcpd does not serve here." },
  MCPD_INTERNAL: { wire: WireCode.InternalError, meaning: "Anything unexpected; the message says what." },
  MCPD_ALREADY_RUNNING: {
    wire: WireCode.InternalError,
    raisedBy: "SocketSetupError",
    meaning: "A daemon already listens on the socket (or holds it while its file is missing).",
  },
  MCPD_UNSAFE_SOCKET_DIR: {
    wire: WireCode.InternalError,
    raisedBy: "SocketSetupError",
    meaning: "The daemon refused a socket path or directory that is not safely its user's own.",
  },
  MCPD_UNSAFE_STATE_DIR: {
    wire: WireCode.InternalError,
    raisedBy: "StateDirError",
    meaning: "The state directory, or a file in it, is another user's, a link, a FIFO or shared; nothing was opened.",
  },
  MCPD_HTTP_UNAUTHORIZED: { wire: WireCode.Forbidden, meaning: "HTTP 401: no valid bearer token." },
  MCPD_HTTP_FORBIDDEN_HOST: { wire: WireCode.Forbidden, meaning: "HTTP 403: a Host or Origin header the front end does not serve." },
  MCPD_HTTP_TOKEN_SCOPE: {
    wire: WireCode.Forbidden,
    meaning: "HTTP 403, or -32071 in a session: a scoped token used outside its profile's or server's endpoints.",
  },
  MCPD_HTTP_TOKEN_SCOPE_GONE: {
    wire: WireCode.Forbidden,
    meaning: "HTTP 403: the scoped token's profile or server is not in the config now.",
  },
  MCPD_HTTP_SESSION_NOT_FOUND: { wire: WireCode.InvalidRequest, meaning: "HTTP 404: no session with that id (expired or closed)." },
  MCPD_HTTP_NOT_FOUND: { wire: WireCode.InvalidRequest, meaning: "HTTP 404: no endpoint at that path." },
  MCPD_HTTP_REQUEST_TIMEOUT: {
    wire: WireCode.LineTimeout,
    meaning: "HTTP 408: a request body not finished within `mcpd.http.requestTimeoutMs`; the connection is closed.",
  },
  MCPD_HTTP_TOKEN_LIMIT: {
    wire: WireCode.InvalidParams,
    meaning: "`mcpd/httpTokenIssue` with the maximum of scoped HTTP tokens already issued; revoke one.",
  },
  MCPD_DASHBOARD_UNAUTHORIZED: {
    wire: WireCode.Forbidden,
    meaning: "HTTP 401 from the dashboard: no valid dashboard session cookie, or a login link used twice, late or never issued.",
  },
  MCPD_DASHBOARD_FORBIDDEN: {
    wire: WireCode.Forbidden,
    meaning: "HTTP 403 from the dashboard: an action without its CSRF token or from another Origin than the dashboard's own.",
  },
  MCPD_DASHBOARD_UNAVAILABLE: {
    wire: WireCode.InvalidRequest,
    meaning: "`mcpd/dashboardLogin` while the HTTP front end is off or not listening (the dashboard is served by it).",
  },
  MCPD_UNKNOWN_HTTP_TOKEN: {
    wire: WireCode.InvalidParams,
    meaning: "`mcpd/httpTokenRevoke` of an id no token has; the message names the ids there are.",
  },
} as const satisfies Record<string, ErrorCodeInfo>;

/** A stable error code: one of {@link ERROR_CODES}' keys. */
export type McpdErrorCode = keyof typeof ERROR_CODES;

/** Whether `code` is one of mcpd's stable error codes. */
export function isMcpdErrorCode(code: unknown): code is McpdErrorCode {
  return typeof code === "string" && Object.hasOwn(ERROR_CODES, code);
}

/**
 * The wire code {@link ERROR_CODES} gives `code`; internal error for a code that carries the peer's own, and
 * for a code the table lacks (one a newer daemon sent, rebuilt by `fromWireError`).
 */
export function wireCodeOf(code: McpdErrorCode): number {
  const wire = isMcpdErrorCode(code) ? (ERROR_CODES[code] as ErrorCodeInfo).wire : "peer";
  return wire === "peer" ? WireCode.InternalError : wire;
}

/** A JSON-RPC error's `data` carrying a stable code: `{ ...extra, mcpdCode }` (the code always wins). */
export function errorData(code: McpdErrorCode, extra?: Record<string, unknown>): { mcpdCode: McpdErrorCode } & Record<string, unknown> {
  return { ...extra, mcpdCode: code };
}
