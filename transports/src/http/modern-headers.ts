/**
 * What a 2026-era request adds on Streamable HTTP (MCP 2026-07-28, "Streamable HTTP"): the headers that
 * mirror its body (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`), and its errors in-band. A request is
 * 2026-era when its `params._meta` claims a 2026 protocol version: the layer above writes that envelope,
 * the transport only mirrors it (and sends no session id with it: the 2026 era has none).
 */
import { type HttpError, McpRemoteError, envelopeVersion, isObject, type JsonRpcRequest, type RequestId } from "@mcpd/protocol";

/** Characters a header value may carry as is: visible ASCII and inner spaces. */
const PLAIN_HEADER_VALUE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/**
 * A value for `Mcp-Name`: as is when it is plain header-safe ASCII, else (non-ASCII, control characters,
 * leading or trailing blanks, or a value that looks like the encoded form) `=?base64?<UTF-8 in base64>?=`.
 */
export function headerSafe(value: string): string {
  if (PLAIN_HEADER_VALUE.test(value) && !(value.startsWith("=?") && value.endsWith("?="))) return value;
  return `=?base64?${Buffer.from(value, "utf8").toString("base64")}?=`;
}

/**
 * The value of an `Mcp-Param-*` header mirroring an argument: a string as {@link headerSafe} writes it, an
 * integer in decimal, a boolean as `true`/`false`. Undefined (no header) for null, an absent argument, or a
 * value of another type.
 */
export function paramHeaderValue(value: unknown): string | undefined {
  if (typeof value === "string") return headerSafe(value);
  if (typeof value === "boolean") return String(value);
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return undefined;
}

/** The 2026 headers of `message`, or undefined when it is no 2026-era request. */
export function modernHeaders(message: JsonRpcRequest): Record<string, string> | undefined {
  const version = envelopeVersion(message.params);
  if (version === undefined) return undefined;
  const headers: Record<string, string> = { "mcp-protocol-version": version, "mcp-method": message.method };
  const p = message.params;
  const name =
    message.method === "tools/call" || message.method === "prompts/get"
      ? p?.name
      : message.method === "resources/read"
        ? p?.uri
        : undefined;
  if (typeof name === "string") headers["mcp-name"] = headerSafe(name);
  return headers;
}

/**
 * A 2026 server answers a request it refuses (an unsupported version, a missing capability, a method it
 * does not know) with HTTP 400 or 404 and a JSON-RPC error for the request (or for no id): that error, as
 * the server's own, in-band like an answer on 200. Undefined when the body holds no such error.
 */
export function inBandError(error: HttpError, id: RequestId): McpRemoteError | undefined {
  if (error.status !== 400 && error.status !== 404) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(error.body);
  } catch {
    return undefined;
  }
  if (!isObject(body) || !isObject(body.error) || (body.id !== id && body.id !== null && body.id !== undefined)) return undefined;
  const { code, message, data } = body.error;
  if (typeof code !== "number" || !Number.isInteger(code)) return undefined;
  return new McpRemoteError({ code, message: typeof message === "string" ? message : "", ...(data === undefined ? {} : { data }) });
}
