import { McpdError } from "./mcpd-error.js";
import type { RequestId } from "./types.js";
import { WireCode } from "./wire-codes.js";

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
