import {
  AbortedError,
  ConnectionLostError,
  WireCode,
  fromWireError,
  isObject,
  PROTOCOL_DEFAULTS,
  quote,
  type JsonObject,
  type JsonRpcErrorObject,
} from "@mcpd/protocol/core";

/** Codes of the error line the daemon sends before it closes a connection for its own bounds. */
export const CLOSING_CODES: ReadonlySet<number> = new Set([
  WireCode.TooManyConnections,
  WireCode.BufferBudgetExceeded,
  WireCode.LineTimeout,
]);

/** One progress notification for a request, as the server sent it. */
export interface ProgressInfo {
  progress: number;
  total?: number;
  message?: string;
}

/** A progress notification's params as {@link ProgressInfo}. */
export function progressInfo(params: JsonObject): ProgressInfo {
  const info: ProgressInfo = { progress: typeof params.progress === "number" ? params.progress : 0 };
  if (typeof params.total === "number") info.total = params.total;
  if (typeof params.message === "string") info.message = params.message;
  return info;
}

/** The `MCPD_ABORTED` error of a request whose signal aborted, naming the reason, which is its `cause`. */
export function abortedError(signal: AbortSignal): AbortedError {
  const reason: unknown = signal.reason;
  const detail = reason instanceof Error ? reason.message : typeof reason === "string" ? reason : "";
  return new AbortedError(detail ? `Request aborted: ${detail}` : "Request aborted", { cause: reason });
}

/**
 * A response's `error` member when it is a JSON-RPC error object, else a stand-in naming (the start of)
 * what came; undefined when there is none.
 */
export function wireError(error: unknown): JsonRpcErrorObject | undefined {
  if (error === undefined) return undefined;
  if (isObject(error) && typeof error.code === "number" && typeof error.message === "string") return error as unknown as JsonRpcErrorObject;
  return { code: -32603, message: `Malformed error from mcpd: ${quote(String(JSON.stringify(error)), PROTOCOL_DEFAULTS.quotedTextChars)}` };
}

/**
 * The `MCPD_CONNECTION_LOST` error of a connection the daemon closed: with its reason (an error line it
 * sent first, over one of its bounds) as the `cause` when it gave one, else the socket's error if any.
 * `when` is said after "lost" (" before it answered").
 */
export function connectionLostError(
  closeReason: JsonRpcErrorObject | undefined,
  socketError: Error | undefined,
  when = "",
): ConnectionLostError {
  if (closeReason)
    return new ConnectionLostError(`Connection to mcpd lost${when}: ${closeReason.message}`, { cause: fromWireError(closeReason) });
  const why = socketError ? `: ${socketError.message}` : "";
  return new ConnectionLostError(`Connection to mcpd lost${when}${why}`, socketError ? { cause: socketError } : {});
}
