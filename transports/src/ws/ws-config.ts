import { ConfigError, checkTimeoutMs } from "@mcpd/protocol";
import { TRANSPORT_DEFAULTS } from "../defaults.js";
import type { WsServerConfig } from "../transport.js";
import { urlLabel } from "../url-label.js";

/** A {@link WsServerConfig} checked and filled in by {@link resolveWsConfig}. */
export interface ResolvedWsConfig {
  url: URL;
  /** The URL for messages and logs: no userinfo, no query (either may carry a token). */
  safeUrl: string;
  headers: Record<string, string>;
  /** `config.timeout` in ms, when set (0 or Infinity: no deadline). */
  timeoutMs: number | undefined;
  /** ws `maxPayload`, in bytes. */
  maxPayloadBytes: number;
}

/**
 * Validates a WebSocket server config. `url` must be ws:, wss:, http: or https: (ws upgrades http(s)
 * URLs the same way); `headers` an object of strings; `timeout` a number of ms >= 0; `maxPayloadBytes`
 * (default `TRANSPORT_DEFAULTS.maxMessageBytes`) a positive integer.
 * @throws ConfigError (`MCPD_CONFIG_INVALID`) naming the bad field.
 */
export function resolveWsConfig(config: WsServerConfig, maxPayloadBytes: number | undefined): ResolvedWsConfig {
  if (typeof config !== "object" || config === null) throw new ConfigError("WebSocket transport: config must be an object");
  const url = parseWsUrl(config.url);
  if (config.timeout !== undefined) checkWsTimeoutMs(config.timeout, '"timeout"');
  const max = maxPayloadBytes ?? TRANSPORT_DEFAULTS.maxMessageBytes;
  if (!Number.isSafeInteger(max) || max <= 0) {
    throw new ConfigError(`WebSocket transport: "maxPayloadBytes" must be a positive integer, got ${String(max)}`);
  }
  return { url, safeUrl: urlLabel(url), headers: checkHeaders(config.headers), timeoutMs: config.timeout, maxPayloadBytes: max };
}

/** @throws ConfigError unless `value` is a number of ms >= 0 (0 or Infinity: none); `what` names it. */
export function checkWsTimeoutMs(value: unknown, what: string): void {
  checkTimeoutMs(value, `WebSocket transport: ${what}`, "non-negative", ConfigError);
}

function parseWsUrl(raw: unknown): URL {
  if (typeof raw !== "string" || raw.length === 0) {
    throw new ConfigError(`WebSocket transport: "url" must be a ws:// or wss:// URL string, got ${JSON.stringify(raw) ?? String(raw)}`);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch (err) {
    throw new ConfigError(`WebSocket transport: "url" is not a valid URL: ${JSON.stringify(raw)}`, { cause: err });
  }
  if (!["ws:", "wss:", "http:", "https:"].includes(url.protocol)) {
    throw new ConfigError(`WebSocket transport: "url" must use ws:, wss:, http: or https:, got ${url.protocol} in ${urlLabel(url)}`);
  }
  return url;
}

function checkHeaders(headers: unknown): Record<string, string> {
  if (headers === undefined) return {};
  if (typeof headers !== "object" || headers === null || Array.isArray(headers)) {
    throw new ConfigError(`WebSocket transport: "headers" must be an object of strings`);
  }
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== "string") throw new ConfigError(`WebSocket transport: header "${name}" must be a string, got ${typeof value}`);
  }
  return { ...(headers as Record<string, string>) };
}
