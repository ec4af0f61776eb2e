import type { Dispatcher } from "undici";
import { isObject, PROTOCOL_DEFAULTS, quote, type JsonObject } from "@mcpd/protocol";
import { TRANSPORT_DEFAULTS } from "../../defaults.js";
import { errorText, headerValue, readBodyText } from "../http-wire.js";
import { urlLabel } from "../../url-label.js";
import { loadUndici, request } from "../undici.js";

/** How the OAuth client reaches authorization servers and metadata: a dispatcher, a deadline, a signal. */
export interface OAuthHttp {
  /** The undici dispatcher (the transport's keep-alive agent); undefined: undici's global one. */
  dispatcher?: Dispatcher;
  /** Deadline of one request (headers and body), in ms. */
  timeoutMs: number;
  /** Largest body read, in bytes. */
  maxBodyBytes: number;
}

/** The answer to one OAuth request: status, a header getter and the body parsed as JSON when it is. */
export interface OAuthResponse {
  status: number;
  header(name: string): string | undefined;
  /** The body as a JSON object, or undefined when it is not one. */
  json: JsonObject | undefined;
  /** The start of the body text, for messages. */
  text: string;
}

/** The defaults of {@link OAuthHttp}. */
export function defaultOAuthHttp(dispatcher?: Dispatcher): OAuthHttp {
  return {
    ...(dispatcher ? { dispatcher } : {}),
    timeoutMs: TRANSPORT_DEFAULTS.oauthRequestTimeoutMs,
    maxBodyBytes: TRANSPORT_DEFAULTS.oauthMaxBodyBytes,
  };
}

/**
 * One bounded HTTP exchange with an authorization server or a metadata endpoint: no redirects followed,
 * `timeoutMs` for the whole exchange, at most `maxBodyBytes` read.
 * @throws the network error, a RequestTimeoutError-like abort reason, MessageTooLargeError, or `signal.reason`.
 */
export async function oauthRequest(
  http: OAuthHttp,
  url: URL,
  init: { method: "GET" | "POST" | "DELETE"; headers?: Record<string, string>; body?: string },
  signal?: AbortSignal,
): Promise<OAuthResponse> {
  // `mcpd auth` may run before the server's transport ever connected (and loaded undici).
  await loadUndici();
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new Error(`no answer from ${urlLabel(url)} within ${http.timeoutMs} ms`)),
    http.timeoutMs,
  );
  const onAbort = (): void => controller.abort(signal?.reason);
  if (signal?.aborted) onAbort();
  else signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const res = await request(url, {
      method: init.method,
      headers: { accept: "application/json", ...init.headers },
      ...(init.body === undefined ? {} : { body: init.body }),
      signal: controller.signal,
      ...(http.dispatcher ? { dispatcher: http.dispatcher } : {}),
    });
    const text = await readBodyText(res.body, res.headers, http.maxBodyBytes, `answer of ${urlLabel(url)}`);
    let json: JsonObject | undefined;
    try {
      const value: unknown = JSON.parse(text);
      if (isObject(value)) json = value;
    } catch {
      // Not JSON: callers say what they expected.
    }
    return {
      status: res.statusCode,
      header: (name) => headerValue(res.headers, name),
      json,
      text: quote(text, PROTOCOL_DEFAULTS.quotedDescriptionChars),
    };
  } catch (err) {
    throw controller.signal.aborted && !(signal?.aborted ?? false) ? (controller.signal.reason as Error) : err;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}

/**
 * GETs each of `urls` in order and returns what `read` makes of the first JSON document it accepts:
 * `read` returns the value, or a string saying what is wrong with the document. Every failed attempt
 * (the request failing, a status other than 200, a body that is not JSON, `read`'s reason) is added to
 * `problems`, naming its URL (redacted), for the error that may follow. Undefined when none is accepted.
 * @throws the signal's reason when `signal` aborts.
 */
export async function firstDocument<T>(
  http: OAuthHttp,
  urls: Iterable<URL>,
  read: (doc: JsonObject, url: URL) => T | string,
  problems: string[],
  signal?: AbortSignal,
): Promise<T | undefined> {
  for (const url of urls) {
    let res: OAuthResponse;
    try {
      res = await oauthRequest(http, url, { method: "GET" }, signal);
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      problems.push(`${urlLabel(url)}: ${errorText(err)}`);
      continue;
    }
    if (res.status !== 200 || !res.json) {
      problems.push(`${urlLabel(url)}: ${res.status !== 200 ? `HTTP ${res.status}` : "not JSON"}`);
      continue;
    }
    const value = read(res.json, url);
    if (typeof value !== "string") return value;
    problems.push(`${urlLabel(url)}: ${value}`);
  }
  return undefined;
}

/** A form body (application/x-www-form-urlencoded) from the defined entries of `fields`. */
export function formBody(fields: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) params.set(name, value);
  return params.toString();
}

/** Whether `url` is on this machine (loopback): plain http is accepted there only. */
export function isLoopback(url: URL): boolean {
  const host = url.hostname.toLowerCase();
  return host === "localhost" || host === "[::1]" || host === "::1" || /^127(?:\.\d{1,3}){3}$/.test(host);
}

/** Whether an authorization server URL may carry credentials: https, or http on loopback. */
export function isSecureEndpoint(url: URL): boolean {
  return url.protocol === "https:" || (url.protocol === "http:" && isLoopback(url));
}
