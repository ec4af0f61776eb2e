import type { IncomingHttpHeaders } from "node:http";
import {
  ModernErrorCode,
  WireCode,
  claimedVersion,
  classify,
  decodeHeaderValue,
  headerParams,
  eraOf,
  isObject,
  mcpMethod,
  readEnvelope,
  type JsonObject,
  type JsonRpcErrorObject,
  type RequestId,
} from "@mcpd/protocol";

/** A request refused before it reaches the router: the HTTP status and the JSON-RPC error (with the request's id). */
export interface Refusal {
  status: number;
  id: RequestId | null;
  error: JsonRpcErrorObject;
}

/** What a POST is to the 2026 era: a 2025-era message (sessions, initialize), a 2026-era one, or refused at once. */
export type PostEra = { era: "2025" } | { era: "2026"; message: JsonObject; id: RequestId | undefined } | { refuse: Refusal };

const idOf = (m: unknown): RequestId | null => (isObject(m) && (typeof m.id === "string" || typeof m.id === "number") ? m.id : null);
const refuse = (status: number, id: RequestId | null, code: number, message: string): PostEra => ({
  refuse: { status, id, error: { code, message } },
});
const mismatch = (id: RequestId | null, message: string): PostEra =>
  refuse(400, id, ModernErrorCode.HeaderMismatch, `Header mismatch: ${message}`);

/**
 * Which era a POST's body speaks (the body decides; headers only cross-check it): a message whose `_meta`
 * claims a protocol version is 2026-era; so is a notification sent with a 2026 `MCP-Protocol-Version`. A
 * request without a claim but with a 2026 header lacks its envelope (-32602), a batch holding a claim is
 * refused (-32600: the 2026 era has no batches), and anything else is 2025-era, served as before.
 */
export function postEra(headers: IncomingHttpHeaders, messages: readonly unknown[], batch: boolean): PostEra {
  const header = headers["mcp-protocol-version"];
  const modernHeader = typeof header === "string" && /^\d{4}-\d{2}-\d{2}$/.test(header) && eraOf(header) === "2026";
  if (batch) {
    if (messages.some((m) => isObject(m) && claimedVersion(m.params) !== undefined))
      return refuse(400, null, WireCode.InvalidRequest, "Invalid Request: a 2026-era request cannot be sent in a batch");
    return { era: "2025" };
  }
  const message = messages[0];
  const kind = classify(message);
  if (!isObject(message) || (kind !== "request" && kind !== "notification")) return { era: "2025" };
  const claimed = claimedVersion(message.params) !== undefined;
  if (!claimed && !modernHeader) return { era: "2025" };
  const id = idOf(message);
  if (!claimed && kind === "request") {
    if (message.method === "initialize")
      return mismatch(id, `MCP-Protocol-Version ${JSON.stringify(header)} is a 2026 revision, which has no initialize`);
    return refuse(
      400,
      id,
      WireCode.InvalidParams,
      "Invalid params: a 2026-era request must carry its _meta envelope (protocolVersion, clientCapabilities)",
    );
  }
  return { era: "2026", message, id: kind === "request" ? (id as RequestId) : undefined };
}

const single = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const v = headers[name];
  return typeof v === "string" ? v : undefined;
};

/**
 * Checks a 2026-era request's headers against its body, as the 2026 era requires of a server: the
 * `MCP-Protocol-Version` and `Mcp-Method` headers present and equal to the body's, `Mcp-Name` on the
 * methods that mirror their target, `Mcp-Param-*` for each argument whose property in the tool's
 * `inputSchema` declares `x-mcp-header` (`schemaOf` finds the tool in the endpoint's view) — 400 -32020 for
 * any mismatch; then the envelope (-32022 for a version mcpd does not serve, -32602 when malformed).
 */
export function headerRefusal(
  headers: IncomingHttpHeaders,
  message: JsonObject,
  id: RequestId | null,
  schemaOf: (tool: string) => JsonObject | undefined,
): Refusal | undefined {
  const method = String(message.method);
  const params = isObject(message.params) ? message.params : {};
  const version = single(headers, "mcp-protocol-version");
  const claimed = claimedVersion(params);
  const fail = (text: string): Refusal => ({
    status: 400,
    id,
    error: { code: ModernErrorCode.HeaderMismatch, message: `Header mismatch: ${text}` },
  });
  if (version === undefined) return fail("the MCP-Protocol-Version header is required");
  if (version !== claimed)
    return fail(`MCP-Protocol-Version header value '${version.slice(0, 40)}' does not match body value '${String(claimed).slice(0, 40)}'`);
  const methodHeader = single(headers, "mcp-method");
  if (methodHeader === undefined) return fail("the Mcp-Method header is required");
  if (methodHeader !== method)
    return fail(`Mcp-Method header value '${methodHeader.slice(0, 80)}' does not match body value '${method.slice(0, 80)}'`);
  const envelope = readEnvelope(params);
  if ("error" in envelope) return { status: 400, id, error: envelope.error };
  const info = mcpMethod(method);
  if (info?.nameHeader === true && info.target !== undefined) {
    const target = params[info.target.field];
    const raw = single(headers, "mcp-name");
    if (raw === undefined) return fail("the Mcp-Name header is required");
    const name = decodeHeaderValue(raw);
    if (name === undefined || name !== target)
      return fail(`Mcp-Name header value '${raw.slice(0, 80)}' does not match body value '${String(target).slice(0, 80)}'`);
  }
  if (method === "tools/call" && typeof params.name === "string") {
    const problem = paramHeaderProblem(headers, schemaOf(params.name), isObject(params.arguments) ? params.arguments : {});
    if (problem !== undefined) return fail(problem);
  }
  return undefined;
}

/**
 * What is wrong with the `Mcp-Param-*` headers of a tools/call, given the tool's `inputSchema` (its
 * `x-mcp-header` annotations, nested ones included; a schema whose annotations are invalid asks for none);
 * undefined: nothing.
 */
function paramHeaderProblem(headers: IncomingHttpHeaders, schema: JsonObject | undefined, args: JsonObject): string | undefined {
  const read = headerParams(schema);
  if (!("params" in read)) return undefined;
  for (const { name, path } of read.params) {
    let value: unknown = args;
    for (const key of path) value = isObject(value) && Object.hasOwn(value, key) ? value[key] : undefined;
    if (value === undefined || value === null) continue;
    const prop = path.join(".");
    const raw = single(headers, `mcp-param-${name.toLowerCase()}`);
    if (raw === undefined) return `the Mcp-Param-${name} header is required (argument "${prop}" is given)`;
    const decoded = decodeHeaderValue(raw);
    const same =
      decoded !== undefined && (typeof value === "number" ? decoded.trim() !== "" && Number(decoded) === value : String(value) === decoded);
    if (!same) return `Mcp-Param-${name} header value '${raw.slice(0, 80)}' does not match body value of "${prop}"`;
  }
  return undefined;
}
