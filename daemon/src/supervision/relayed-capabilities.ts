/**
 * The capabilities a `sharing: "per-client"` server's private session declares upstream: its client's own,
 * as far as mcpd can relay them. The route is exact (one client per session), so what the client declared
 * decides what the server offers it: `sampling` and `elicitation` as the client declared them (sub-keys
 * included), `extensions` untouched (the MCP Apps UI extension among them, and any mcpd does not know),
 * `roots` the client's when it declared them, else mcpd's own (it answers `roots/list` with the server's
 * configured roots). Nothing is claimed on the client's behalf beyond that.
 */
import { isObject, type ClientCapabilities, type JsonObject } from "@mcpd/protocol";

/** `base`: what mcpd declares for shared sessions; `client`: what the private session's client declared. */
export function relayedCapabilities(base: ClientCapabilities, client: ClientCapabilities): ClientCapabilities {
  const out: ClientCapabilities = {};
  if (isObject(client.roots)) out.roots = client.roots as ClientCapabilities["roots"];
  else if (base.roots !== undefined) out.roots = base.roots;
  for (const key of ["sampling", "elicitation", "extensions"] as const) {
    if (isObject(client[key])) out[key] = client[key] as JsonObject;
  }
  return out;
}
