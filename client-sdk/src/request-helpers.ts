import { AbortedError, WireCode, type JsonObject } from "@mcpd/protocol/core";

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
