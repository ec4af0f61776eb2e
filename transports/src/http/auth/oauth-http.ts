import type { Dispatcher } from "undici";
import type * as OAuth from "oauth4webapi";
import { OAuthError, quote } from "@mcpd/protocol";
import { TRANSPORT_DEFAULTS } from "../../defaults.js";
import { urlLabel } from "../../url-label.js";
import { discardBody, headerValue, readBodyText } from "../http-wire.js";
import { loadUndici, request } from "../undici.js";

/** How the OAuth client reaches authorization servers and metadata: a dispatcher, a deadline, a body bound. */
export interface OAuthHttp {
  /** The undici dispatcher (the transport's keep-alive agent); undefined: undici's global one. */
  dispatcher?: Dispatcher;
  /** Deadline of one request (headers and body), in ms. */
  timeoutMs: number;
  /** Largest body read, in bytes. */
  maxBodyBytes: number;
}

/** The defaults of {@link OAuthHttp}. */
export function defaultOAuthHttp(dispatcher?: Dispatcher): OAuthHttp {
  return {
    ...(dispatcher ? { dispatcher } : {}),
    timeoutMs: TRANSPORT_DEFAULTS.oauthRequestTimeoutMs,
    maxBodyBytes: TRANSPORT_DEFAULTS.oauthMaxBodyBytes,
  };
}

let library: typeof OAuth | undefined;

/**
 * oauth4webapi, loaded on first use (it is ESM-only, and a daemon without OAuth servers never needs it).
 * Rejects only if the package is not installed.
 */
export async function oauthLibrary(): Promise<typeof OAuth> {
  library ??= await import("oauth4webapi");
  return library;
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

/**
 * One bounded HTTP exchange, as oauth4webapi's `customFetch` (and mcpd's own metadata and probe requests)
 * make it: https or loopback only, no redirects followed (a 3xx with a `Location` is an error naming where
 * it pointed: credentials and metadata are only taken from the URL asked), `timeoutMs` for the whole
 * exchange, at most `maxBodyBytes` read. The answer is a WHATWG `Response` over the bytes read.
 * @throws OAuthError `MCPD_OAUTH_UNSUPPORTED` for a URL that is neither https nor loopback; the network
 *   error; a timeout error; MessageTooLargeError; `signal.reason`.
 */
export async function oauthFetch(
  http: OAuthHttp,
  url: string | URL,
  init: { method?: string; headers?: Record<string, string> | Headers; body?: unknown; signal?: AbortSignal | null },
): Promise<Response> {
  const target = new URL(url);
  if (!isSecureEndpoint(target)) {
    throw new OAuthError(
      "MCPD_OAUTH_UNSUPPORTED",
      `${urlLabel(target)} is neither https nor on this machine: no credentials are sent there`,
    );
  }
  // `mcpd auth` may run before the server's transport ever connected (and loaded undici).
  await loadUndici();
  const signal = init.signal ?? undefined;
  const timeout = AbortSignal.timeout(http.timeoutMs);
  const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
  const headers = init.headers instanceof Headers ? Object.fromEntries(init.headers) : (init.headers ?? {});
  try {
    const res = await request(target, {
      method: (init.method ?? "GET") as Dispatcher.HttpMethod,
      headers,
      ...(init.body === undefined || init.body === null ? {} : { body: String(init.body) }),
      signal: both,
      ...(http.dispatcher ? { dispatcher: http.dispatcher } : {}),
    });
    const location = res.statusCode >= 300 && res.statusCode < 400 ? headerValue(res.headers, "location") : undefined;
    if (location !== undefined) {
      discardBody(res.body);
      const to = URL.canParse(location, target.href) ? urlLabel(new URL(location, target)) : JSON.stringify(quote(location, 200));
      throw new Error(`HTTP ${res.statusCode} redirecting to ${to} (not followed: OAuth endpoints must answer at the URL they are given)`);
    }
    const text = await readBodyText(res.body, res.headers, http.maxBodyBytes, `answer of ${urlLabel(target)}`);
    const out = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) out.append(name, v);
    }
    const empty = res.statusCode === 204 || res.statusCode === 205 || res.statusCode === 304;
    return new Response(empty ? null : text, { status: res.statusCode, headers: out });
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    if (timeout.aborted) throw new Error(`no answer from ${urlLabel(target)} within ${http.timeoutMs} ms`);
    throw err;
  }
}

/** The options every oauth4webapi request of this client takes: mcpd's bounded fetch, and the signal. */
export function libraryOptions(lib: typeof OAuth, http: OAuthHttp, signal: AbortSignal | undefined) {
  return {
    [lib.customFetch]: (url: string, init: Parameters<typeof oauthFetch>[2]) => oauthFetch(http, url, init),
    // Plain http is allowed by oauthFetch on loopback only (RFC 8252); every other URL must be https.
    [lib.allowInsecureRequests]: true,
    ...(signal ? { signal } : {}),
  };
}
