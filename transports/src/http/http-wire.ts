import type { Agent, Dispatcher } from "undici";
import { HttpError, MessageTooLargeError, PROTOCOL_DEFAULTS, ProtocolError, hasDeadline, quote } from "@mcpd/protocol";
import { TRANSPORT_DEFAULTS } from "../defaults.js";
import { newAgent } from "./undici.js";

/**
 * HTTP plumbing shared by the HTTP transport's parts: the keep-alive agent, header access and bounded
 * body reading. Internal to the transports package.
 */

/** Headers as undici returns them. */
export type ResponseHeaders = Dispatcher.ResponseData["headers"];
/** A response body as undici returns it. */
export type ResponseBody = Dispatcher.ResponseData["body"];

/** What every MCP POST accepts (the server picks JSON or an SSE stream). */
export const ACCEPT_POST = "application/json, text/event-stream";
export const ACCEPT_SSE = "text/event-stream";

/**
 * A keep-alive undici Agent for one transport (after `loadUndici()`): at most `connections` sockets per origin, idle sockets
 * closed after `TRANSPORT_DEFAULTS.httpKeepAliveMs`. Timeouts are the transport's own (one deadline per
 * request), so undici's idle-body timeout is off: an SSE stream may be quiet for minutes.
 */
export function createHttpAgent(connections: number): Agent {
  return newAgent({
    connections,
    keepAliveTimeout: TRANSPORT_DEFAULTS.httpKeepAliveMs,
    bodyTimeout: 0,
    headersTimeout: 0,
  });
}

/** One header's value; repeated headers are joined with ", ". */
export function headerValue(headers: ResponseHeaders, name: string): string | undefined {
  const value = headers[name];
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(", ") : value;
}

/** The media type of a response, lower-cased, without parameters ("" when absent). */
export function mediaType(headers: ResponseHeaders): string {
  return (headerValue(headers, "content-type") ?? "").split(";")[0]!.trim().toLowerCase();
}

/**
 * Reads a whole body as UTF-8 text, refusing it once it passes `limitBytes`: a `Content-Length` over the
 * limit is refused before reading; a chunked body is refused as soon as the limit is crossed (the rest is
 * never buffered, and the connection is dropped).
 * @throws MessageTooLargeError (`MCPD_MESSAGE_TOO_LARGE`).
 */
export async function readBodyText(body: ResponseBody, headers: ResponseHeaders, limitBytes: number, what: string): Promise<string> {
  const declared = Number(headerValue(headers, "content-length"));
  if (Number.isFinite(declared) && declared > limitBytes) {
    body.destroy();
    throw new MessageTooLargeError(declared, limitBytes, what);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limitBytes) {
      body.destroy();
      throw new MessageTooLargeError(size, limitBytes, what);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Builds the `HttpError` for a non-2xx response: `HTTP <status>: <body text>` with the
 * `WWW-Authenticate` and `Mcp-Auth-Server` values appended when present. Keeps at most
 * `TRANSPORT_DEFAULTS.httpErrorBodyMaxBytes` of the body; a longer body is cut (and its connection dropped).
 */
export async function httpErrorFrom(statusCode: number, headers: ResponseHeaders, body: ResponseBody): Promise<HttpError> {
  const limit = TRANSPORT_DEFAULTS.httpErrorBodyMaxBytes;
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= limit) {
        body.destroy();
        break;
      }
    }
  } catch {
    // A body that breaks mid-way still leaves a useful status line.
  }
  let text = Buffer.concat(chunks).subarray(0, limit).toString("utf8").trim();
  if (size > limit) text += "...";
  const auth: { wwwAuthenticate?: string; mcpAuthServer?: string } = {};
  const www = headerValue(headers, "www-authenticate");
  const authServer = headerValue(headers, "mcp-auth-server");
  if (www) auth.wwwAuthenticate = www;
  if (authServer) auth.mcpAuthServer = authServer;
  return new HttpError(statusCode, text, auth);
}

/** Discards a body we do not need, without letting a huge or endless one hold the connection. */
export function discardBody(body: ResponseBody): void {
  // dump() reads up to 128 KiB then destroys the socket; a 202 has no body at all.
  body.dump({ limit: 64 * 1024 }).catch(() => {});
}

/** A promise that resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** The message of any thrown value. */
export function errorText(value: unknown): string {
  if (value instanceof Error) return value.message;
  return typeof value === "string" ? value : value === undefined ? "" : String(value);
}

/** Resolves with `promise`, or rejects with the signal's reason when it aborts first; leaves no listener behind. */
export function waitOrAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}

/** The start of a text for error messages and logs (`PROTOCOL_DEFAULTS.previewBytes` characters, then `...`). */
export function preview(text: string): string {
  return quote(text, PROTOCOL_DEFAULTS.previewBytes, "...");
}

/** A message as a request body. @throws ProtocolError when it cannot be serialized. */
export function encodeJson(message: object): string {
  try {
    return JSON.stringify(message);
  } catch (err) {
    throw new ProtocolError(`message cannot be serialized as JSON: ${errorText(err)}`, { cause: err });
  }
}

/** The own deadline of one-way exchanges and the legacy connect (the configured `timeout`), in ms; undefined for none. */
export function ownDeadlineMs(timeoutMs: number | undefined): number | undefined {
  const ms = timeoutMs ?? TRANSPORT_DEFAULTS.requestTimeoutMs;
  return hasDeadline(ms) ? ms : undefined;
}
