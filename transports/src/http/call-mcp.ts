import {
  PROTOCOL_DEFAULTS,
  ProtocolError,
  RequestTimeoutError,
  checkTimeoutMs,
  hasDeadline,
  isObject,
  quote,
  isResponse,
  parseSSE,
  parseSseText,
  type JsonObject,
} from "@mcpd/protocol";
import { TRANSPORT_DEFAULTS } from "../defaults.js";
import { ACCEPT_POST, errorText, httpErrorFrom, mediaType, readBodyText } from "./http-wire.js";
import { loadUndici, request } from "./undici.js";

/** Options of {@link callMCP}. */
export interface CallMcpOptions {
  /** Deadline for the whole call (headers and body), in ms. Default `TRANSPORT_DEFAULTS.requestTimeoutMs` (30000); 0, Infinity or 2^31 ms and more: none. */
  timeout?: number;
  /** Extra request headers (e.g. `Authorization`, `Mcp-Session-Id`). */
  headers?: Record<string, string>;
  /** Largest body read, in bytes. Default `TRANSPORT_DEFAULTS.maxMessageBytes` (4 MiB). */
  maxBodyBytes?: number;
}

/**
 * The one-shot helper: POSTs one JSON-RPC request (`id` 1) to an MCP endpoint outside any
 * transport or session, reads the whole body and returns the raw JSON-RPC envelope (result or error
 * object, untouched). The body may be JSON or SSE: from an event stream it returns the response with
 * id 1 (progress notifications may come first), else, like {@link parseSSE}, the first `data:` event,
 * falling back to plain JSON. No session, no retries; a deadline and a body-size bound.
 *
 * @throws RequestTimeoutError (`MCPD_REQUEST_TIMEOUT`; kind `request` before headers, `sse` while reading an
 *   event stream), HttpError (`MCPD_HTTP_ERROR`) for non-2xx, ParseError (`MCPD_PARSE_ERROR`) for a body
 *   that is neither, ProtocolError (`MCPD_PROTOCOL_VIOLATION`) when it parses to something other than an
 *   object, MessageTooLargeError (`MCPD_MESSAGE_TOO_LARGE`), and undici's network errors.
 */
export async function callMCP(url: string, method: string, params?: JsonObject, options: CallMcpOptions = {}): Promise<JsonObject> {
  const timeoutMs = checkTimeoutMs(options.timeout ?? TRANSPORT_DEFAULTS.requestTimeoutMs, "callMCP: timeout");
  const controller = new AbortController();
  let phase: "request" | "sse" = "request";
  const timer = hasDeadline(timeoutMs)
    ? setTimeout(() => controller.abort(new RequestTimeoutError(timeoutMs, phase)), timeoutMs)
    : undefined;
  try {
    await loadUndici();
    const res = await request(url, {
      method: "POST",
      headers: { ...options.headers, "content-type": "application/json", accept: ACCEPT_POST },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, ...(params === undefined ? {} : { params }) }),
      signal: controller.signal,
    });
    if (res.statusCode < 200 || res.statusCode > 299) throw await httpErrorFrom(res.statusCode, res.headers, res.body);
    if (mediaType(res.headers) === "text/event-stream") phase = "sse";
    const text = await readBodyText(
      res.body,
      res.headers,
      options.maxBodyBytes ?? TRANSPORT_DEFAULTS.maxMessageBytes,
      "HTTP response body",
    );
    const envelope = phase === "sse" ? (responseEvent(text) ?? parseSSE(text)) : parseSSE(text);
    if (!isObject(envelope))
      throw new ProtocolError(
        `callMCP: ${method} answered ${quote(errorText(JSON.stringify(envelope)), PROTOCOL_DEFAULTS.quotedTextChars)}, not a JSON-RPC object`,
      );
    return envelope;
  } catch (err) {
    throw controller.signal.aborted ? controller.signal.reason : err;
  } finally {
    if (timer) clearTimeout(timer);
  }
}

/** The first event of an SSE body holding the response to id 1, if any. */
function responseEvent(text: string): JsonObject | undefined {
  for (const event of parseSseText(text)) {
    let value: unknown;
    try {
      value = JSON.parse(event.data);
    } catch {
      continue;
    }
    if (isResponse(value) && value.id === 1) return value as unknown as JsonObject;
  }
  return undefined;
}
