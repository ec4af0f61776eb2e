import { type McpdErrorCode, wireCodeOf } from "./error-codes.js";
import type { JsonRpcErrorObject, RequestId } from "./types.js";
import { WireCode } from "./wire-codes.js";

/**
 * mcpd's error model. Every error mcpd raises is an {@link McpdError} with a stable string `code`
 * (match on `code`, never on message text) and a numeric `wireCode` used when it crosses a JSON-RPC
 * boundary. Messages keep the wording clients already match on (`Transport closed`,
 * `Request timeout after <ms>ms`, `HTTP <status>: <body>`, `MCP error <code>: <message>`).
 */
export class McpdError extends Error {
  override name = "McpdError";
  /** One of {@link ERROR_CODES}' codes (a newer daemon's unknown code survives {@link fromWireError} as it came). */
  readonly code: McpdErrorCode;
  readonly wireCode: number;
  readonly data?: unknown;

  /** `wireCode` defaults to the one {@link ERROR_CODES} gives `code`. */
  constructor(code: McpdErrorCode, message: string, options: { cause?: unknown; data?: unknown; wireCode?: number } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.wireCode = options.wireCode ?? wireCodeOf(code);
    if (options.data !== undefined) this.data = options.data;
  }
}

/** The transport closed (or was never open) while a request needed it. */
export class TransportClosedError extends McpdError {
  override name = "TransportClosedError";
  /** Why it closed, when known: exit code/signal, last stderr lines, network error. */
  readonly reason?: string;
  constructor(reason?: string, options: { cause?: unknown } = {}) {
    super("MCPD_TRANSPORT_CLOSED", reason ? `Transport closed: ${reason}` : "Transport closed", {
      ...options,
      wireCode: WireCode.UpstreamClosed,
    });
    if (reason !== undefined) this.reason = reason;
  }
}

export type TimeoutKind = "request" | "sse" | "notify";

/** A deadline passed: `Request timeout after <ms>ms`, `SSE response timeout after <ms>ms` or `Notify timeout after <ms>ms`. */
export class RequestTimeoutError extends McpdError {
  override name = "RequestTimeoutError";
  readonly timeoutMs: number;
  readonly kind: TimeoutKind;
  constructor(timeoutMs: number, kind: TimeoutKind = "request") {
    const label = kind === "sse" ? "SSE response timeout" : kind === "notify" ? "Notify timeout" : "Request timeout";
    super("MCPD_REQUEST_TIMEOUT", `${label} after ${timeoutMs}ms`, { wireCode: WireCode.RequestTimeout });
    this.timeoutMs = timeoutMs;
    this.kind = kind;
  }
}

/** The caller cancelled. Used when an abort reason is not itself an Error. */
export class AbortedError extends McpdError {
  override name = "AbortError";
  constructor(message = "The operation was aborted", options: { cause?: unknown } = {}) {
    super("MCPD_ABORTED", message, { ...options, wireCode: WireCode.Cancelled });
  }
}

/** A non-2xx HTTP status. `HTTP <status>: <body>` plus auth headers when present. */
export class HttpError extends McpdError {
  override name = "HttpError";
  readonly status: number;
  readonly body: string;
  readonly wwwAuthenticate?: string;
  readonly mcpAuthServer?: string;
  constructor(status: number, body: string, headers: { wwwAuthenticate?: string; mcpAuthServer?: string } = {}) {
    let message = `HTTP ${status}: ${body}`;
    if (headers.wwwAuthenticate) message += ` [WWW-Authenticate: ${headers.wwwAuthenticate}]`;
    if (headers.mcpAuthServer) message += ` [Mcp-Auth-Server: ${headers.mcpAuthServer}]`;
    super("MCPD_HTTP_ERROR", message, { wireCode: WireCode.UpstreamHttpError, data: { status } });
    this.status = status;
    this.body = body;
    if (headers.wwwAuthenticate) this.wwwAuthenticate = headers.wwwAuthenticate;
    if (headers.mcpAuthServer) this.mcpAuthServer = headers.mcpAuthServer;
  }
}

/** A JSON-RPC error object answered by a peer: `MCP error <code>: <message>`. Forwarded unchanged. */
export class McpRemoteError extends McpdError {
  override name = "McpRemoteError";
  readonly rpcCode: number;
  readonly rpcMessage: string;
  constructor(error: JsonRpcErrorObject) {
    super("MCPD_MCP_ERROR", `MCP error ${error.code}: ${error.message}`, { wireCode: error.code, data: error.data });
    this.rpcCode = error.code;
    this.rpcMessage = error.message;
  }
  /** The peer's error object, exactly as it was received. */
  toJSON(): JsonRpcErrorObject {
    const obj: JsonRpcErrorObject = { code: this.rpcCode, message: this.rpcMessage };
    if (this.data !== undefined) obj.data = this.data;
    return obj;
  }
}

/** A stream ended without the response to a request. */
export class NoResponseError extends McpdError {
  override name = "NoResponseError";
  readonly requestId: RequestId;
  constructor(requestId: RequestId) {
    super("MCPD_NO_RESPONSE", `No response received for request ID ${requestId}`, { wireCode: WireCode.UpstreamClosed });
    this.requestId = requestId;
  }
}

/** Bytes that are not JSON where JSON was required. */
export class ParseError extends McpdError {
  override name = "ParseError";
  constructor(message: string, options: { cause?: unknown } = {}) {
    super("MCPD_PARSE_ERROR", message, { ...options, wireCode: WireCode.ParseError });
  }
}

/** A peer broke the protocol: not JSON-RPC, an unsupported version, a missing field. */
export class ProtocolError extends McpdError {
  override name = "ProtocolError";
  constructor(message: string, options: { cause?: unknown; data?: unknown } = {}) {
    super("MCPD_PROTOCOL_VIOLATION", message, { ...options, wireCode: WireCode.InvalidRequest });
  }
}

/** A message exceeded a configured size bound. */
export class MessageTooLargeError extends McpdError {
  override name = "MessageTooLargeError";
  readonly limitBytes: number;
  constructor(sizeBytes: number, limitBytes: number, what = "Message") {
    super("MCPD_MESSAGE_TOO_LARGE", `${what} of ${sizeBytes} bytes exceeds the limit of ${limitBytes} bytes`, {
      wireCode: WireCode.MessageTooLarge,
    });
    this.limitBytes = limitBytes;
  }
}

/** A bounded queue or buffer is full; the work was refused rather than buffered without limit. */
export class QueueFullError extends McpdError {
  override name = "QueueFullError";
  constructor(message: string) {
    super("MCPD_QUEUE_FULL", message, { wireCode: WireCode.QueueFull });
  }
}

/** A configuration file or value is invalid. The message names the file, the server and the key. */
export class ConfigError extends McpdError {
  override name = "ConfigError";
  constructor(message: string, options: { cause?: unknown } = {}) {
    super("MCPD_CONFIG_INVALID", message, { ...options, wireCode: WireCode.InvalidParams });
  }
}

/**
 * A child process could not be started. `errno` is the operating system's code for why, when there is
 * one: `ENOENT` / `EACCES` / `ENOTDIR` (the command or working directory is missing or not usable: no
 * retry can help until the config changes), `EMFILE` / `ENFILE` / `EAGAIN` (out of descriptors or
 * processes for now: a later attempt may work).
 */
export class SpawnError extends McpdError {
  override name = "SpawnError";
  readonly command: string;
  readonly errno: string | undefined;
  constructor(command: string, detail: string, options: { cause?: unknown; errno?: string } = {}) {
    super("MCPD_SPAWN_FAILED", `Failed to start "${command}": ${detail}`, { cause: options.cause, wireCode: WireCode.ServerUnavailable });
    this.command = command;
    this.errno = options.errno;
  }
}

/** A server exists but cannot serve: `failed`, `disabled`, or stopped. */
export class ServerUnavailableError extends McpdError {
  override name = "ServerUnavailableError";
  readonly server: string;
  readonly state: string;
  constructor(server: string, state: string, detail?: string) {
    super("MCPD_SERVER_UNAVAILABLE", `Server "${server}" is ${state}${detail ? `: ${detail}` : ""}`, {
      wireCode: WireCode.ServerUnavailable,
      data: { server, state },
    });
    this.server = server;
    this.state = state;
  }
}

/** A name (server, tool, prompt, resource) that does not exist. The message lists what does. */
export class NotFoundError extends McpdError {
  override name = "NotFoundError";
  constructor(
    code: "MCPD_UNKNOWN_SERVER" | "MCPD_UNKNOWN_TOOL" | "MCPD_UNKNOWN_PROMPT" | "MCPD_UNKNOWN_RESOURCE" | "MCPD_UNKNOWN_PROFILE",
    message: string,
  ) {
    super(code, message, { wireCode: WireCode.InvalidParams });
  }
}

/** What kind of item a {@link HiddenError} is about. */
export type HiddenKind = "tool" | "prompt" | "resource";

/**
 * What hid an item: the connection's profile (`profile`), its one-off tools selection (`selection`), or
 * the server's own filter in the config (`server`).
 */
export type HiddenBy = "profile" | "selection" | "server";

/**
 * A tool, prompt or resource that exists but that the connection's view hides: its profile
 * (`mcpd.profiles.<name>`), its one-off tools selection, or the server's filter in the config. Hidden
 * items are absent from the listings and refused when asked for by name. The message names the item
 * and what hides it; `data` carries `kind`, `name`, `by`, and `profile` and `server` when they apply.
 */
export class HiddenError extends McpdError {
  override name = "HiddenError";
  readonly kind: HiddenKind;
  readonly by: HiddenBy;
  constructor(kind: HiddenKind, name: string, by: HiddenBy, message: string, extra: { profile?: string; server?: string } = {}) {
    super("MCPD_HIDDEN", message, { wireCode: WireCode.Hidden, data: { kind, name, by, ...extra } });
    this.kind = kind;
    this.by = by;
  }
}

/** The peer did not declare the capability a method needs; refused before going upstream. */
export class CapabilityError extends McpdError {
  override name = "CapabilityError";
  constructor(message: string) {
    super("MCPD_CAPABILITY_NOT_SUPPORTED", message, { wireCode: WireCode.CapabilityNotSupported });
  }
}

/**
 * A privileged control method (stop, disable, enable, restart, reload, stderr logs, the full status) sent on
 * a connection that is not a control connection: an agent's MCP session may not use them. The message
 * names the method and how a connection becomes a control connection.
 */
export class ForbiddenError extends McpdError {
  override name = "ForbiddenError";
  readonly method: string;
  constructor(method: string, message: string) {
    super("MCPD_FORBIDDEN", message, { wireCode: WireCode.Forbidden, data: { method } });
    this.method = method;
  }
}

/** The daemon cannot be reached (not running, socket missing, refused). */
export class DaemonUnavailableError extends McpdError {
  override name = "DaemonUnavailableError";
  constructor(message: string, options: { cause?: unknown } = {}) {
    super("MCPD_DAEMON_UNAVAILABLE", message, { ...options, wireCode: WireCode.InternalError });
  }
}

/**
 * A client refused to connect to the daemon's socket because another user could have made or replaced
 * it: its directory is not the current user's or is writable by group or others, or the socket (or a
 * symbolic link on the way) is not the current user's. Nothing was sent. The message names the path,
 * the owner found and what to do; `data` carries `path` and `ownerUid` (the owner found).
 */
export class UntrustedSocketError extends McpdError {
  override name = "UntrustedSocketError";
  /** The directory, link or socket that failed the check. */
  readonly path: string;
  /** Its owner's numeric uid. */
  readonly ownerUid: number;
  constructor(message: string, found: { path: string; ownerUid: number }) {
    super("MCPD_UNTRUSTED_SOCKET", message, { wireCode: WireCode.InternalError, data: { path: found.path, ownerUid: found.ownerUid } });
    this.path = found.path;
    this.ownerUid = found.ownerUid;
  }
}

/**
 * Why an OAuth step failed, as {@link OAuthError}'s `code`: discovery found no usable metadata
 * (`MCPD_OAUTH_DISCOVERY_FAILED`); the protected resource metadata names another resource than the
 * server's URL (`MCPD_OAUTH_RESOURCE_MISMATCH`); no client identity could be had (no client id
 * configured, no metadata document, no registration endpoint) or registration was refused
 * (`MCPD_OAUTH_REGISTRATION_FAILED`); the authorization server refused a token request
 * (`MCPD_OAUTH_TOKEN_REFUSED`, with `oauthError` such as `invalid_grant`); the user's authorization did not
 * come back (denied, state mismatch, timeout: `MCPD_OAUTH_AUTHORIZATION_FAILED`); the server's requirements
 * cannot be met (no PKCE S256, a grant the server does not offer, too many step-ups:
 * `MCPD_OAUTH_UNSUPPORTED`).
 */
export type OAuthErrorCode =
  | "MCPD_OAUTH_DISCOVERY_FAILED"
  | "MCPD_OAUTH_RESOURCE_MISMATCH"
  | "MCPD_OAUTH_REGISTRATION_FAILED"
  | "MCPD_OAUTH_TOKEN_REFUSED"
  | "MCPD_OAUTH_AUTHORIZATION_FAILED"
  | "MCPD_OAUTH_UNSUPPORTED";

/**
 * An OAuth step towards a remote server's authorization failed (see {@link OAuthErrorCode}). The message
 * names the step, the URL (never a token or secret) and the authorization server's `error` code.
 */
export class OAuthError extends McpdError {
  override name = "OAuthError";
  /** The authorization server's `error` value (`invalid_grant`, `invalid_client`, ...), when it gave one. */
  readonly oauthError: string | undefined;
  constructor(code: OAuthErrorCode, message: string, options: { cause?: unknown; oauthError?: string } = {}) {
    super(code, message, {
      cause: options.cause,
      wireCode: WireCode.UpstreamHttpError,
      ...(options.oauthError ? { data: { oauthError: options.oauthError } } : {}),
    });
    this.oauthError = options.oauthError;
  }
}

/**
 * A remote server needs the user to authorize mcpd in a browser (no token, a refresh token that was
 * refused, more scopes needed), and nobody is there to ask. Code `MCPD_AUTH_REQUIRED`, wire -32076; the
 * message names the server and the exact command to run (`mcpd auth SERVER`); `data` carries `server`
 * and `command`.
 */
export class AuthRequiredError extends McpdError {
  override name = "AuthRequiredError";
  readonly server: string;
  readonly command: string;
  /** Why, in words: `no access token yet`, `the refresh token was refused (invalid_grant)`, ... */
  readonly reason: string;
  /**
   * True when only the request that asked needs more scopes (403 `insufficient_scope`): the server's
   * token still works for everything else.
   */
  readonly stepUp: boolean;
  constructor(server: string, why: string, options: { cause?: unknown; stepUp?: boolean } = {}) {
    const command = `mcpd auth ${server}`;
    super("MCPD_AUTH_REQUIRED", `Server "${server}" needs authorization (${why}): run \`${command}\``, {
      cause: options.cause,
      wireCode: WireCode.AuthRequired,
      data: { server, command },
    });
    this.server = server;
    this.command = command;
    this.reason = why;
    this.stepUp = options.stepUp ?? false;
  }
}

/** A connection to the daemon dropped while a request was in flight. Never replayed. */
export class ConnectionLostError extends McpdError {
  override name = "ConnectionLostError";
  constructor(message = "Connection to mcpd lost", options: { cause?: unknown } = {}) {
    super("MCPD_CONNECTION_LOST", message, { ...options, wireCode: WireCode.UpstreamClosed });
  }
}

/** Why the daemon closed a client connection to protect itself (see {@link ConnectionLimitError}). */
export type ConnectionLimitCode = "MCPD_TOO_MANY_CONNECTIONS" | "MCPD_BUFFER_BUDGET_EXCEEDED" | "MCPD_LINE_TIMEOUT";

const CONNECTION_LIMIT_WIRE: Readonly<Record<ConnectionLimitCode, number>> = {
  MCPD_TOO_MANY_CONNECTIONS: WireCode.TooManyConnections,
  MCPD_BUFFER_BUDGET_EXCEEDED: WireCode.BufferBudgetExceeded,
  MCPD_LINE_TIMEOUT: WireCode.LineTimeout,
};

/**
 * The daemon closes a client connection to stay within its bounds: over the connection cap
 * (`MCPD_TOO_MANY_CONNECTIONS`), holding the most when the daemon-wide buffer budget ran out
 * (`MCPD_BUFFER_BUDGET_EXCEEDED`), or a line not finished in time (`MCPD_LINE_TIMEOUT`). Sent as the
 * connection's last line, with id null.
 */
export class ConnectionLimitError extends McpdError {
  override name = "ConnectionLimitError";
  constructor(code: ConnectionLimitCode, message: string) {
    super(code, message, { wireCode: CONNECTION_LIMIT_WIRE[code] });
  }
}

/**
 * Turns any thrown value into a JSON-RPC error object. Peer errors pass through unchanged; mcpd's own
 * errors carry their wire code and `data.mcpdCode`; anything else is an internal error.
 */
export function toWireError(err: unknown): JsonRpcErrorObject {
  if (err instanceof McpRemoteError) return err.toJSON();
  if (err instanceof McpdError) {
    const data: Record<string, unknown> = {};
    if (typeof err.data === "object" && err.data !== null && !Array.isArray(err.data)) Object.assign(data, err.data);
    // Last, so an error's own data can never mask the stable code clients match on.
    data.mcpdCode = err.code;
    return { code: err.wireCode, message: err.message, data };
  }
  if (err instanceof Error && err.name === "AbortError") {
    return { code: WireCode.Cancelled, message: err.message || "Request cancelled", data: { mcpdCode: "MCPD_ABORTED" } };
  }
  const message = err instanceof Error ? err.message : typeof err === "string" ? err : "Internal error";
  return { code: WireCode.InternalError, message };
}

/**
 * Rebuilds a local error from a wire error object: an object carrying `data.mcpdCode` becomes an
 * {@link McpdError} with that code; anything else becomes a {@link McpRemoteError}.
 */
export function fromWireError(error: JsonRpcErrorObject): McpdError {
  const data = error.data as { mcpdCode?: unknown } | undefined;
  if (data && typeof data === "object" && typeof data.mcpdCode === "string") {
    // A code this build does not know (a newer daemon's) is kept as it came: clients match on it.
    return new McpdError(data.mcpdCode as McpdErrorCode, error.message, {
      wireCode: error.code,
      data: error.data,
      cause: new McpRemoteError(error),
    });
  }
  return new McpRemoteError(error);
}
