import { McpdError } from "./mcpd-error.js";
import { WireCode } from "./wire-codes.js";

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
