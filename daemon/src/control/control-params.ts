import { ProtocolError, type JsonObject, type LogsParams, type NoParams, type ServerFilter, type ServerParams } from "@mcpd/protocol";

/** The params of the control methods, checked: each reader throws ProtocolError naming a field of the wrong type. */
function str(params: JsonObject | undefined, key: string, required: boolean): string | undefined {
  const v = params?.[key];
  if (v === undefined && !required) return undefined;
  if (typeof v !== "string") throw new ProtocolError(`"${key}" must be a string`, { data: { mcpdCode: "MCPD_PROTOCOL_VIOLATION" } });
  return v;
}

/** Params of a method that takes none: whatever was sent is ignored. */
export const noParams = (): NoParams => ({});

/** `{ server? }`. @throws ProtocolError when `server` is there but not a string. */
export function serverFilter(params: JsonObject | undefined): ServerFilter {
  const server = str(params, "server", false);
  return server === undefined ? {} : { server };
}

/** `{ server }`. @throws ProtocolError when `server` is missing or not a string. */
export function serverParams(params: JsonObject | undefined): ServerParams {
  return { server: str(params, "server", true) as string };
}

/** `{ server?, lines? }`: `lines` not a positive number means the default (100), more than 10000 means 10000. */
export function logsParams(params: JsonObject | undefined): LogsParams {
  const lines = typeof params?.lines === "number" && params.lines > 0 ? Math.min(10_000, Math.floor(params.lines)) : 100;
  const server = str(params, "server", false);
  return server === undefined ? { lines } : { server, lines };
}
