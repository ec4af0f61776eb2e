import { MAX_TIMER_MS } from "@mcpd/protocol";
import { CONFIG_DEFAULTS } from "../defaults.js";
import type { HttpSettings } from "./config-schema.js";
import { describeValue, isPlainObject, type ConfigIssues } from "./config-issues.js";
import { hintFor } from "./did-you-mean.js";

/** Keys of `mcpd.http`. */
export const HTTP_KEYS = [
  "enabled",
  "port",
  "host",
  "allowRemote",
  "allowedHosts",
  "maxSessions",
  "sessionIdleMs",
  "streamAfterMs",
  "requestTimeoutMs",
] as const;

/** The HTTP front end's settings with every default filled in. */
export function defaultHttpSettings(): HttpSettings {
  return { ...CONFIG_DEFAULTS.http, allowedHosts: [] };
}

const HOST_NAME = /^[A-Za-z0-9.:[\]-]{1,253}$/;

/**
 * Reads `mcpd.http` (`{"enabled": true, "port": 7767, "host": "127.0.0.1"}`); every key optional. A
 * wrong value is an error naming the key and what it must be.
 */
export function readHttpSettings(value: unknown, issues: ConfigIssues): HttpSettings {
  const out = { ...defaultHttpSettings() } as { -readonly [K in keyof HttpSettings]: HttpSettings[K] };
  if (value === undefined) return out;
  if (!isPlainObject(value)) {
    issues.error(
      "",
      `"mcpd.http" must be an object such as {"enabled": true, "port": ${CONFIG_DEFAULTS.http.port}}, got ${describeValue(value)}`,
    );
    return out;
  }
  for (const key of Object.keys(value)) {
    if (!(HTTP_KEYS as readonly string[]).includes(key))
      issues.warn("", `unknown key "mcpd.http.${key}" ignored${hintFor(key, HTTP_KEYS)}`);
  }
  const { enabled, port, host, allowRemote, allowedHosts, maxSessions, sessionIdleMs, streamAfterMs, requestTimeoutMs } = value;
  if (requestTimeoutMs !== undefined) {
    if (
      typeof requestTimeoutMs === "number" &&
      Number.isInteger(requestTimeoutMs) &&
      requestTimeoutMs >= 100 &&
      requestTimeoutMs <= 600_000
    )
      out.requestTimeoutMs = requestTimeoutMs;
    else
      issues.error(
        "",
        `"mcpd.http.requestTimeoutMs" must be an integer from 100 to 600000 (milliseconds), got ${describeValue(requestTimeoutMs)}`,
      );
  }
  if (streamAfterMs !== undefined) {
    if (typeof streamAfterMs === "number" && Number.isInteger(streamAfterMs) && streamAfterMs >= 0 && streamAfterMs <= 60_000)
      out.streamAfterMs = streamAfterMs;
    else
      issues.error(
        "",
        `"mcpd.http.streamAfterMs" must be an integer from 0 to 60000 (milliseconds; 0: always stream), got ${describeValue(streamAfterMs)}`,
      );
  }
  if (maxSessions !== undefined) {
    if (typeof maxSessions === "number" && Number.isInteger(maxSessions) && maxSessions >= 1 && maxSessions <= 100_000)
      out.maxSessions = maxSessions;
    else issues.error("", `"mcpd.http.maxSessions" must be an integer from 1 to 100000, got ${describeValue(maxSessions)}`);
  }
  if (sessionIdleMs !== undefined) {
    if (typeof sessionIdleMs === "number" && Number.isInteger(sessionIdleMs) && sessionIdleMs >= 1_000 && sessionIdleMs <= MAX_TIMER_MS)
      out.sessionIdleMs = sessionIdleMs;
    else
      issues.error(
        "",
        `"mcpd.http.sessionIdleMs" must be an integer from 1000 to ${MAX_TIMER_MS} (milliseconds), got ${describeValue(sessionIdleMs)}`,
      );
  }
  if (enabled !== undefined) {
    if (typeof enabled === "boolean") out.enabled = enabled;
    else issues.error("", `"mcpd.http.enabled" must be true or false, got ${describeValue(enabled)}`);
  }
  if (port !== undefined) {
    if (typeof port === "number" && Number.isInteger(port) && port >= 0 && port <= 65_535) out.port = port;
    else issues.error("", `"mcpd.http.port" must be an integer from 0 to 65535 (0: any free port), got ${describeValue(port)}`);
  }
  if (host !== undefined) {
    if (typeof host === "string" && HOST_NAME.test(host)) out.host = host.replace(/^\[(.*)\]$/, "$1");
    else issues.error("", `"mcpd.http.host" must be an address to listen on such as "127.0.0.1", got ${describeValue(host)}`);
  }
  if (allowRemote !== undefined) {
    if (typeof allowRemote === "boolean") out.allowRemote = allowRemote;
    else issues.error("", `"mcpd.http.allowRemote" must be true or false, got ${describeValue(allowRemote)}`);
  }
  if (allowedHosts !== undefined) {
    if (Array.isArray(allowedHosts) && allowedHosts.every((h) => typeof h === "string" && HOST_NAME.test(h)))
      out.allowedHosts = allowedHosts as string[];
    else
      issues.error("", `"mcpd.http.allowedHosts" must be a list of host names such as ["mybox.local"], got ${describeValue(allowedHosts)}`);
  }
  return out;
}

/** `MCPD_HTTP_PORT`, when set, overrides `mcpd.http.port` (0: any free port). Undefined when unset or invalid. */
export function httpPortFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env.MCPD_HTTP_PORT;
  if (raw === undefined || !/^\d{1,5}$/.test(raw)) return undefined;
  const n = Number(raw);
  return n <= 65_535 ? n : undefined;
}
