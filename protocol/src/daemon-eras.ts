/**
 * What a client of the daemon's socket (`mcpd connect`, `McpdTransport`) does when the daemon it reaches is
 * of another release. The daemon's `mcpd/select` answer names the MCP revisions it serves on the socket
 * (`protocolVersions`); a daemon of a release before MCP 2026-07-28 leaves it out and answers a 2026-era
 * request "Not initialized". A client that meets such a daemon answers 2026-era requests itself with the
 * revision's -32022, naming the 2025 revisions the daemon serves and saying to restart the daemon: a client
 * that negotiates (the official v2 SDK's `auto`) falls back to 2025-11-25, and one pinned to 2026-07-28 is
 * told plainly why it cannot connect. Everything else passes through unchanged.
 */
import { LATEST_MODERN_VERSION, MODERN_PROTOCOL_VERSIONS, ModernErrorCode } from "./era.js";
import { isObject } from "./guards.js";
import { claimedVersion } from "./modern-wire.js";
import { SUPPORTED_PROTOCOL_VERSIONS, type JsonRpcErrorResponse, type RequestId } from "./types.js";

/** The revisions this release's daemon serves on its socket (its `mcpd/select` answer's `protocolVersions`). */
export const SOCKET_PROTOCOL_VERSIONS: readonly string[] = [...MODERN_PROTOCOL_VERSIONS, ...SUPPORTED_PROTOCOL_VERSIONS];

/** What to do: restart the daemon so that the release installed runs. */
export const RESTART_DAEMON_HINT = "restart it (`mcpd stop`, then `mcpd start`, or restart its service) to run the installed release";

/** Whether a daemon's `mcpd/select` answer says it serves 2026-era requests (a daemon before that release names no versions). */
export function servesModern(selectResult: unknown): boolean {
  const versions = isObject(selectResult) ? selectResult.protocolVersions : undefined;
  return Array.isArray(versions) && versions.some((v) => (MODERN_PROTOCOL_VERSIONS as readonly unknown[]).includes(v));
}

/** The line a bridge writes to stderr once when the daemon predates the 2026 era. */
export const OLDER_DAEMON_NOTICE = `the running mcpd daemon is an older release that serves MCP 2025 revisions only; ${RESTART_DAEMON_HINT} and serve MCP ${LATEST_MODERN_VERSION} (2025-era clients work meanwhile)`;

/**
 * The answer for a daemon that does not serve the 2026 era ({@link servesModern} false) to one message of
 * its client: -32022 for a request that claims a protocol version in its `_meta`, undefined for anything
 * else (which goes to the daemon as it is).
 */
export function olderDaemonAnswer(message: unknown): JsonRpcErrorResponse | undefined {
  if (!isObject(message) || typeof message.method !== "string" || !("id" in message)) return undefined;
  const requested = claimedVersion(message.params);
  if (requested === undefined) return undefined;
  const named = typeof requested === "string" ? requested.slice(0, 64) : String(requested).slice(0, 64);
  return {
    jsonrpc: "2.0",
    id: message.id as RequestId,
    error: {
      code: ModernErrorCode.UnsupportedProtocolVersion,
      message: `Unsupported protocol version ${named}: ${OLDER_DAEMON_NOTICE}`,
      data: { supported: [...SUPPORTED_PROTOCOL_VERSIONS], requested: named },
    },
  };
}
