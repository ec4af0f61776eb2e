/**
 * The two eras of MCP that mcpd speaks and translates between (see docs/protocol.md):
 * - `"2025"`: revisions up to 2025-11-25, with an `initialize` handshake, sessions, `logging/setLevel`
 *   and server-to-client requests;
 * - `"2026"`: revisions from 2026-07-28 on, with no handshake and no session: every request carries the
 *   protocol version, the client's capabilities and info in its `_meta`; `server/discover` and
 *   `subscriptions/listen` are new, and a server asks the client for input by answering
 *   `resultType: "input_required"` instead of sending it requests.
 */
import { isObject } from "./guards.js";
import type { Era } from "./mcp-methods.js";
import type { JsonObject } from "./types.js";

/** The revisions of the 2026 era mcpd speaks, newest first. */
export const MODERN_PROTOCOL_VERSIONS = ["2026-07-28"] as const;
export type ModernProtocolVersion = (typeof MODERN_PROTOCOL_VERSIONS)[number];
/** The newest revision mcpd speaks. */
export const LATEST_MODERN_VERSION: ModernProtocolVersion = "2026-07-28";

/** The era of a protocol version string: 2026 for a date on or after 2026-07-28, else 2025. */
export function eraOf(version: string): Era {
  return version >= "2026-07-28" ? "2026" : "2025";
}

/** Whether mcpd speaks `version` as a 2026-era revision. */
export function isModernVersion(version: unknown): version is ModernProtocolVersion {
  return typeof version === "string" && (MODERN_PROTOCOL_VERSIONS as readonly string[]).includes(version);
}

/** The `_meta` keys of the 2026 era (reserved prefix `io.modelcontextprotocol/`). */
export const META = {
  /** Request: the revision the request is written in (on HTTP it must equal `MCP-Protocol-Version`). */
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  /** Request: the client's capabilities for this request (`{}`: none); never inferred from earlier ones. */
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  /** Request: the client's name and version (for display and logs only). */
  clientInfo: "io.modelcontextprotocol/clientInfo",
  /** Request: the least level of `notifications/message` wanted for this request (none: no log messages). */
  logLevel: "io.modelcontextprotocol/logLevel",
  /** Result: the server's name and version. */
  serverInfo: "io.modelcontextprotocol/serverInfo",
  /** Notification and `subscriptions/listen` result: which listen stream it belongs to. */
  subscriptionId: "io.modelcontextprotocol/subscriptionId",
} as const;

/** The error codes the 2026 era defines (-32020..-32099 is reserved for the spec). */
export const ModernErrorCode = {
  /** An HTTP header (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`) disagrees with the body; HTTP 400. */
  HeaderMismatch: -32020,
  /** The request needs a client capability its `_meta` did not declare; `data.requiredCapabilities`; HTTP 400. */
  MissingRequiredClientCapability: -32021,
  /** A protocol version the server does not speak; `data.supported`, `data.requested`; HTTP 400. */
  UnsupportedProtocolVersion: -32022,
} as const;

/** Whether `code` is in the range the 2026 era reserves for the spec, which no implementation may use for codes of its own. */
export function isReservedModernCode(code: number): boolean {
  return code <= -32020 && code >= -32099;
}

/** A server's `protocolEra` setting: the era mcpd speaks to it, or `auto` to find it out (see {@link classifyProbeError}). */
export type ProtocolEraSetting = Era | "auto";
/** The values `protocolEra` takes. */
export const PROTOCOL_ERA_SETTINGS = ["auto", "2025", "2026"] as const satisfies readonly ProtocolEraSetting[];

/**
 * Who a 2026-era request is sent for: the client's capabilities, info and log level as that client
 * declared them (its `initialize`, its `logging/setLevel`). Each is optional: what is missing is mcpd's own.
 */
export interface RequestCaller {
  readonly clientCapabilities?: JsonObject | undefined;
  readonly clientInfo?: JsonObject | undefined;
  readonly logLevel?: string | undefined;
}

/**
 * `params` with the 2026 envelope in its `_meta` (`protocolVersion`, `clientCapabilities`, `clientInfo`,
 * and `logLevel` when one is set): the caller's values where given, else `fallback`'s. The `_meta` keys
 * the request already had (a progress token) are kept; `params` itself is not changed.
 */
export function withEnvelope(
  params: JsonObject | undefined,
  version: string,
  caller: RequestCaller | undefined,
  fallback: RequestCaller,
): JsonObject {
  const meta: JsonObject = isObject(params?._meta) ? { ...(params._meta as JsonObject) } : {};
  meta[META.protocolVersion] = version;
  meta[META.clientCapabilities] = caller?.clientCapabilities ?? fallback.clientCapabilities ?? {};
  const info = caller?.clientInfo ?? fallback.clientInfo;
  if (info !== undefined) meta[META.clientInfo] = info;
  const level = caller?.logLevel ?? fallback.logLevel;
  if (level !== undefined) meta[META.logLevel] = level;
  return { ...params, _meta: meta };
}

/** The 2026 protocol version `params._meta` claims, if it claims one mcpd speaks. */
export function envelopeVersion(params: unknown): ModernProtocolVersion | undefined {
  const meta = isObject(params) ? params._meta : undefined;
  const version = isObject(meta) ? meta[META.protocolVersion] : undefined;
  return isModernVersion(version) ? version : undefined;
}

/**
 * The era a JSON-RPC error answered to a `server/discover` probe proves (the 2026 spec's era probing): a
 * recognised 2026 error (-32022 naming the versions it supports, -32020, -32021) means a 2026 server; any
 * other error means a 2025 one (which commonly answers -32601 or -32602 to a request before `initialize`).
 * The versions of a -32022 are returned, to tell a server that speaks no version mcpd does.
 */
export function classifyProbeError(error: { code: unknown; data?: unknown }): { era: Era; supported?: string[] } {
  const { code, data } = error;
  if (code === ModernErrorCode.HeaderMismatch || code === ModernErrorCode.MissingRequiredClientCapability) return { era: "2026" };
  if (code !== ModernErrorCode.UnsupportedProtocolVersion) return { era: "2025" };
  const supported = isObject(data) && Array.isArray(data.supported) ? data.supported.filter((v): v is string => typeof v === "string") : [];
  // A -32022 without the versions it supports is no modern answer (some 2025 servers use codes of their own).
  if (supported.length === 0) return { era: "2025" };
  return supported.some((v) => eraOf(v) === "2026") ? { era: "2026", supported } : { era: "2025", supported };
}
