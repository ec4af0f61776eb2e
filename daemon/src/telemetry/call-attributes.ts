/**
 * What a relayed request's span says, after OpenTelemetry's semantic conventions for MCP (an MCP client
 * span: mcpd calls the server on the client's behalf): its name, attributes and outcome; and W3C trace
 * context's `traceparent`, read and written. Pure: no SDK here.
 */
import { McpdError, isObject, toWireError, type JsonObject, type RequestId } from "@mcpd/protocol";

/** A W3C `traceparent`: ids in lowercase hex, `flags` its trace-flags byte. */
export interface TraceParent {
  traceId: string;
  spanId: string;
  flags: number;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * `value` read as a W3C `traceparent` (version 00, or a later version's first four fields); undefined when
 * it is not one: malformed, version ff, or an all-zero id (W3C Trace Context, section 3.2).
 */
export function parseTraceparent(value: unknown): TraceParent | undefined {
  if (typeof value !== "string") return undefined;
  const m = TRACEPARENT.exec(value.trim());
  if (!m) return undefined;
  const [, version, traceId, spanId, flags, rest] = m as unknown as [string, string, string, string, string, string | undefined];
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { traceId, spanId, flags: Number.parseInt(flags, 16) };
}

/** The `traceparent` of a span (version 00). */
export function formatTraceparent(p: TraceParent): string {
  return `00-${p.traceId}-${p.spanId}-${p.flags.toString(16).padStart(2, "0")}`;
}

const text = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/** `{mcp.method.name} {target}`: the tool's or prompt's name as target, else the method alone (a resource URI is too varied). */
export function spanName(method: string, params: JsonObject | undefined): string {
  const target = method === "tools/call" || method === "prompts/get" ? text(params?.name) : undefined;
  return target === undefined ? method : `${method} ${target}`;
}

/** The span's attributes known when the request is relayed to `server`. */
export function callAttributes(server: string, method: string, params: JsonObject | undefined): Record<string, string> {
  const a: Record<string, string> = { "mcp.method.name": method, "mcpd.server": server };
  const name = text(params?.name);
  if (method === "tools/call" && name !== undefined) {
    a["gen_ai.tool.name"] = name;
    a["gen_ai.operation.name"] = "execute_tool";
  } else if (method === "prompts/get" && name !== undefined) a["gen_ai.prompt.name"] = name;
  const uri = text(params?.uri);
  if (uri !== undefined && method.startsWith("resources/")) a["mcp.resource.uri"] = uri;
  return a;
}

/** What the span says of the server a request went to. */
export interface SentTo {
  /** The server's session id (HTTP servers in the 2025 era), if any. */
  sessionId?: string | undefined;
  /** The MCP version of the session (its initialize result's, or the 2026 revision). */
  protocolVersion?: string | undefined;
  /** The server's transport: `stdio`, `http`, `sse` or `ws`. */
  transport?: string | undefined;
}

/**
 * The attributes known once the request is sent: `jsonrpc.request.id` (the id mcpd gave it upstream, as
 * a string), `mcp.session.id` (when the server has a session), `mcp.protocol.version`, and
 * `network.transport` (`pipe` for stdio, `tcp` for the HTTP and WebSocket transports).
 */
export function sentAttributes(requestId: RequestId, to: SentTo): Record<string, string> {
  const a: Record<string, string> = { "jsonrpc.request.id": String(requestId) };
  if (to.sessionId !== undefined && to.sessionId !== "") a["mcp.session.id"] = to.sessionId;
  if (to.protocolVersion !== undefined) a["mcp.protocol.version"] = to.protocolVersion;
  if (to.transport !== undefined) a["network.transport"] = to.transport === "stdio" ? "pipe" : "tcp";
  return a;
}

/** How a relayed request ended, as the span records it. */
export interface CallOutcome {
  /** `ok`; `tool_error` (a tools/call answered with `isError: true`); `error`; `cancelled`. */
  outcome: "ok" | "tool_error" | "error" | "cancelled";
  /** Attributes to add when it failed: `error.type`, `rpc.response.status_code` and mcpd's own `mcpd.error.code`. */
  attributes: Record<string, string>;
  /** The error's message, for the span's status. */
  message?: string;
}

/** The outcome of a request that failed with `error` (undefined: it was answered `result`). */
export function callOutcome(error: unknown, result: JsonObject | undefined): CallOutcome {
  if (error === undefined) {
    if (isObject(result) && result.isError === true) return { outcome: "tool_error", attributes: { "error.type": "tool_error" } };
    return { outcome: "ok", attributes: {} };
  }
  const wire = toWireError(error);
  // The JSON-RPC code the client gets, as the conventions ask; mcpd's own stable code beside it when it has one.
  const attributes: Record<string, string> = { "error.type": String(wire.code), "rpc.response.status_code": String(wire.code) };
  const code = error instanceof McpdError ? error.code : undefined;
  if (code !== undefined) attributes["mcpd.error.code"] = code;
  return { outcome: code === "MCPD_ABORTED" ? "cancelled" : "error", attributes, message: wire.message };
}
