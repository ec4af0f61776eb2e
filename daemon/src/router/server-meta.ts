/**
 * `_meta["mcpd/server"]`: in the aggregate view, the server a listed item or a server's message belongs
 * to; in a request, the server it is routed to (bypassing the view's name lookup).
 */
import { MCPD_SERVER_META, isObject, type JsonObject } from "@mcpd/protocol";

/** A server's `params` with `_meta["mcpd/server"]` set to `server`; their other `_meta` keys kept. */
export function withServerMeta(params: JsonObject | undefined, server: string): JsonObject {
  const meta = isObject(params?._meta) ? (params?._meta as JsonObject) : {};
  return { ...params, _meta: { ...meta, [MCPD_SERVER_META]: server } };
}

/** The server a request's params route it to (`_meta["mcpd/server"]`), if they name one. */
export function routedServer(params: JsonObject | undefined): string | undefined {
  const meta = params?._meta;
  return isObject(meta) && typeof meta[MCPD_SERVER_META] === "string" ? (meta[MCPD_SERVER_META] as string) : undefined;
}

/** Routed params as the server gets them: without `_meta["mcpd/server"]` (and without `_meta` if nothing else was in it). */
export function withoutRoute(params: JsonObject): JsonObject {
  const { [MCPD_SERVER_META]: _drop, ...rest } = params._meta as JsonObject;
  const clean: JsonObject = { ...params };
  if (Object.keys(rest).length > 0) clean._meta = rest;
  else delete clean._meta;
  return clean;
}
