import {
  McpRemoteError,
  McpdError,
  ModernErrorCode,
  PROTOCOL_DEFAULTS,
  TransportClosedError,
  classifyProbeError,
  quote,
  type ServerState,
} from "@mcpd/protocol";

/**
 * Makes a failed request's error clear to the caller. A session mcpd ended on purpose (health restart,
 * restart, disable, reload) closes without a reason of its own: the server's state says why. A network
 * error a transport let through raw (undici's `UND_ERR_SOCKET`, `ECONNRESET`, ...) would reach the client
 * as a bare -32603 "other side closed": it becomes TransportClosedError (-32062) naming the server and code.
 * Anything else is returned as it is.
 */
export function clarifyRequestError(err: unknown, server: { name: string; state: ServerState; stateReason: string }): unknown {
  if (err instanceof TransportClosedError && err.reason === undefined)
    return new TransportClosedError(`${server.state}: ${server.stateReason}`);
  const code = (err as { code?: unknown } | undefined)?.code;
  if (err instanceof Error && !(err instanceof McpdError) && err.name !== "AbortError" && typeof code === "string") {
    return new TransportClosedError(`network error talking to "${server.name}": ${err.message} (${code})`, { cause: err });
  }
  return err;
}

/**
 * Whether a request of a 2026-era session at `version` was refused with -32022 (UnsupportedProtocolVersion,
 * naming the versions the server supports): the server no longer accepts the version the session was
 * opened at (another build of it answers now), and did not run the request. Returns what happened, in
 * words (`it no longer accepts MCP 2026-07-28 (it answered -32022, supporting 2025-11-25)`); undefined for
 * any other error.
 */
export function versionRefused(err: unknown, version: string | undefined): string | undefined {
  if (version === undefined || !(err instanceof McpRemoteError) || err.rpcCode !== ModernErrorCode.UnsupportedProtocolVersion)
    return undefined;
  // The same reading of -32022's `data.supported` as the era probe's.
  const supported = classifyProbeError({ code: err.rpcCode, data: err.data }).supported ?? [];
  if (supported.length === 0) return undefined;
  return `it no longer accepts MCP ${version} (it answered -32022, supporting ${quote(supported.join(", "), PROTOCOL_DEFAULTS.quotedNameChars)})`;
}
