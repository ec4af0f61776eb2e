import { ConfigError, checkTimeoutMs, type Logger } from "@mcpd/protocol";
import { TRANSPORT_DEFAULTS } from "../defaults.js";
import type { HttpServerConfig, TransportOptions } from "../transport.js";
import type { OAuthProvider } from "./auth/oauth-provider.js";
import { urlLabel } from "../url-label.js";

/** Options of {@link HttpTransport} besides its config. Every bound has a default in `TRANSPORT_DEFAULTS`. */
export interface HttpTransportOptions extends TransportOptions {
  /** Largest response body (JSON) or single SSE event accepted, in bytes. Default `maxMessageBytes` (4 MiB). */
  maxBodyBytes?: number;
  /** Attempts to resume a dropped SSE reply stream without progress before `NoResponseError`. Default `sseResumeAttempts` (3). */
  sseResumeAttempts?: number;
  /** Delay before resuming when the server sent no `retry:`, in ms. Default `sseResumeDelayMs` (500). */
  sseResumeDelayMs?: number;
  /**
   * Background listener backoff: first and largest delay, in ms. Defaults `listenerInitialDelayMs` /
   * `listenerMaxDelayMs`. The largest also caps a server's `retry:` before resuming an SSE reply.
   */
  listenerInitialDelayMs?: number;
  listenerMaxDelayMs?: number;
  /** Deadline of the DELETE sent by close(), in ms. Default `deleteTimeoutMs` (2000). */
  deleteTimeoutMs?: number;
  /** Keep-alive connections per origin. Default `httpConnections` (16). */
  connections?: number;
  /**
   * OAuth (the MCP authorization spec): the provider of the client settings, token and registration
   * storage and the user interaction. Absent: no OAuth (a 401 is an HttpError). Cannot be combined with a
   * configured `Authorization` header.
   */
  auth?: OAuthProvider;
}

/** A config and options checked and filled in by {@link resolveHttpConfig}. */
export interface ResolvedHttpConfig {
  type: "http" | "sse";
  url: URL;
  /** The URL for messages and logs: no userinfo, no query (either may carry a token). */
  safeUrl: string;
  headers: Record<string, string>;
  /** `config.timeout` in ms, when set (0 or Infinity: no deadline). */
  timeoutMs: number | undefined;
  maxBodyBytes: number;
  sseResumeAttempts: number;
  sseResumeDelayMs: number;
  listenerInitialDelayMs: number;
  listenerMaxDelayMs: number;
  deleteTimeoutMs: number;
  connections: number;
  logger: Logger | undefined;
  auth: OAuthProvider | undefined;
}

/** Headers the transport owns; a configured value for them would break the protocol. */
const RESERVED_HEADERS = new Set(["content-type", "accept", "mcp-session-id", "mcp-protocol-version", "last-event-id", "content-length"]);

/**
 * Validates an HTTP server config: `type` "http" or "sse", `url` an http(s) URL, `headers` an object of
 * strings (not the protocol headers the transport sets itself), `timeout` ms >= 0; options are positive
 * integers (`sseResumeAttempts` and the delays may be 0).
 * @throws ConfigError (`MCPD_CONFIG_INVALID`) naming the bad field.
 */
export function resolveHttpConfig(config: HttpServerConfig, options: HttpTransportOptions = {}): ResolvedHttpConfig {
  if (typeof config !== "object" || config === null) throw new ConfigError("HTTP transport: config must be an object");
  if (config.type !== "http" && config.type !== "sse") {
    throw new ConfigError(`HTTP transport: "type" must be "http" or "sse", got ${JSON.stringify(config.type) ?? String(config.type)}`);
  }
  const url = parseHttpUrl(config.url);
  if (config.timeout !== undefined) checkHttpTimeoutMs(config.timeout, '"timeout"');
  const headers = checkHeaders(config.headers);
  if (options.auth !== undefined && Object.keys(headers).some((h) => h.toLowerCase() === "authorization")) {
    throw new ConfigError(`HTTP transport: an "Authorization" header and OAuth ("auth") cannot both be used; keep one`);
  }
  return {
    type: config.type,
    url,
    safeUrl: urlLabel(url),
    headers,
    timeoutMs: config.timeout,
    maxBodyBytes: checkCount(options.maxBodyBytes, TRANSPORT_DEFAULTS.maxMessageBytes, "maxBodyBytes", 1),
    sseResumeAttempts: checkCount(options.sseResumeAttempts, TRANSPORT_DEFAULTS.sseResumeAttempts, "sseResumeAttempts", 0),
    sseResumeDelayMs: checkCount(options.sseResumeDelayMs, TRANSPORT_DEFAULTS.sseResumeDelayMs, "sseResumeDelayMs", 0),
    listenerInitialDelayMs: checkCount(
      options.listenerInitialDelayMs,
      TRANSPORT_DEFAULTS.listenerInitialDelayMs,
      "listenerInitialDelayMs",
      0,
    ),
    listenerMaxDelayMs: checkCount(options.listenerMaxDelayMs, TRANSPORT_DEFAULTS.listenerMaxDelayMs, "listenerMaxDelayMs", 0),
    deleteTimeoutMs: checkCount(options.deleteTimeoutMs, TRANSPORT_DEFAULTS.deleteTimeoutMs, "deleteTimeoutMs", 1),
    connections: checkCount(options.connections, TRANSPORT_DEFAULTS.httpConnections, "connections", 1),
    logger: options.logger,
    auth: options.auth,
  };
}

/** @throws ConfigError unless `value` is a number of ms >= 0 (0 or Infinity: none); `what` names it. */
export function checkHttpTimeoutMs(value: unknown, what: string): void {
  checkTimeoutMs(value, `HTTP transport: ${what}`, "non-negative", ConfigError);
}

function parseHttpUrl(raw: unknown): URL {
  if (typeof raw !== "string" || raw.length === 0) {
    throw new ConfigError(`HTTP transport: "url" must be an http:// or https:// URL string, got ${JSON.stringify(raw) ?? String(raw)}`);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch (err) {
    throw new ConfigError(`HTTP transport: "url" is not a valid URL: ${JSON.stringify(raw)}`, { cause: err });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigError(`HTTP transport: "url" must use http: or https:, got ${url.protocol} in ${urlLabel(url)}`);
  }
  return url;
}

function checkHeaders(headers: unknown): Record<string, string> {
  if (headers === undefined) return {};
  if (typeof headers !== "object" || headers === null || Array.isArray(headers)) {
    throw new ConfigError(`HTTP transport: "headers" must be an object of strings`);
  }
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== "string") throw new ConfigError(`HTTP transport: header "${name}" must be a string, got ${typeof value}`);
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      throw new ConfigError(`HTTP transport: header "${name}" is set by the transport and cannot be configured`);
    }
    out[name] = value;
  }
  return out;
}

function checkCount(value: unknown, fallback: number, name: string, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min) {
    throw new ConfigError(`HTTP transport: option "${name}" must be an integer >= ${min}, got ${String(value)}`);
  }
  return value;
}
