import { MCPD_SERVER_META, type JsonObject } from "@mcpd/protocol/core";

/**
 * Params routed to `server` (per-request routing, `_meta["mcpd/server"]`): unchanged when `server` is
 * undefined or the connection's own view server.
 * @throws TypeError when `server` is not a non-empty string.
 */
export function routeToServer(
  server: string | undefined,
  viewServer: string | undefined,
  params: JsonObject | undefined,
): JsonObject | undefined {
  if (server === undefined || server === viewServer) return params;
  if (typeof server !== "string" || server === "") throw new TypeError(`server must be a non-empty string, got ${JSON.stringify(server)}`);
  return { ...params, _meta: { ...(params?._meta as JsonObject | undefined), [MCPD_SERVER_META]: server } };
}

/** The server a message from the daemon is about: its `_meta["mcpd/server"]`, else the view's server. */
export function serverOf(params: JsonObject | undefined, viewServer: string | undefined): string | undefined {
  const meta = params?._meta as JsonObject | undefined;
  const server = meta?.[MCPD_SERVER_META];
  return typeof server === "string" ? server : viewServer;
}
