/**
 * What a 2026-era request adds on Streamable HTTP (MCP 2026-07-28, "Streamable HTTP"): the headers that
 * mirror its body (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`), and its errors in-band. A request is
 * 2026-era when its `params._meta` claims a 2026 protocol version: the layer above writes that envelope,
 * the transport only mirrors it (and sends no session id with it: the 2026 era has none).
 */
import {
  type HttpError,
  McpRemoteError,
  encodeHeaderValue,
  envelopeVersion,
  isObject,
  mcpMethod,
  type JsonObject,
  type JsonRpcRequest,
  type RequestId,
} from "@mcpd/protocol";

/** The `Mcp-Param-*` headers of a 2026-era request, as the layer that knows the tools' `inputSchema`s gives them. */
export type ParamHeaders = (method: string, params: JsonObject | undefined) => Record<string, string> | undefined;

/**
 * The 2026 headers of `message` (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` on the methods that
 * mirror their target, and `params`' `Mcp-Param-*` ones), or undefined when it is no 2026-era request.
 */
export function modernHeaders(message: JsonRpcRequest, params?: ParamHeaders): Record<string, string> | undefined {
  const version = envelopeVersion(message.params);
  if (version === undefined) return undefined;
  const headers: Record<string, string> = { "mcp-protocol-version": version, "mcp-method": message.method };
  const info = mcpMethod(message.method);
  const name = info?.nameHeader === true && info.target !== undefined ? message.params?.[info.target.field] : undefined;
  if (typeof name === "string") headers["mcp-name"] = encodeHeaderValue(name);
  return { ...params?.(message.method, message.params), ...headers };
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
