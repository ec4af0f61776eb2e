import { type McpdErrorCode, wireCodeOf } from "./error-codes.js";
import type { JsonRpcErrorObject } from "./types.js";
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
