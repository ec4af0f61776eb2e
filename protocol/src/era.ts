/**
 * The two eras of MCP that mcpd speaks and translates between (see docs/protocol.md):
 * - `"2025"`: revisions up to 2025-11-25, with an `initialize` handshake, sessions, `logging/setLevel`
 *   and server-to-client requests;
 * - `"2026"`: revisions from 2026-07-28 on, with no handshake and no session: every request carries the
 *   protocol version, the client's capabilities and info in its `_meta`; `server/discover` and
 *   `subscriptions/listen` are new, and a server asks the client for input by answering
 *   `resultType: "input_required"` instead of sending it requests.
 */
import type { Era } from "./mcp-methods.js";

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
