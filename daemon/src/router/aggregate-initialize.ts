import type { JsonObject, ServerCapabilities } from "@mcpd/protocol";
import { VERSION } from "../version.js";
import type { Upstream } from "./upstream-port.js";
import type { ViewFilter } from "./view-filter.js";

/**
 * mcpd's own initialize answer. Capabilities are the full set mcpd can route (tools, prompts,
 * resources with subscribe, logging, completions, all with list_changed), not only those of the servers
 * ready at this instant: servers still starting, added by reload or restarted later join the same
 * session, and an empty list is harmless where a missing capability would hide them for good.
 */
export function aggregateInitializeResult(servers: readonly Upstream[], protocolVersion: string): JsonObject {
  const caps: ServerCapabilities = {
    tools: { listChanged: true },
    prompts: { listChanged: true },
    resources: { subscribe: true, listChanged: true },
    logging: {},
    completions: {},
  };
  const instructions: string[] = [];
  for (const h of servers) {
    const c = h.state === "ready" ? h.client : undefined;
    if (c?.instructions) instructions.push(`## ${h.name}\n${c.instructions}`);
  }
  const result: JsonObject = { protocolVersion, capabilities: caps as JsonObject, serverInfo: { name: "mcpd", version: VERSION } };
  if (instructions.length > 0) result.instructions = instructions.join("\n\n");
  return result;
}

/**
 * Opens the sessions a UI client uses (`host.resolveHandle`: its own of the per-client servers, the shared
 * servers' UI sessions) and starts them, without waiting: the aggregate tools/list waits for them
 * (bounded), as for any server coming up. Only for the servers its view shows (`host.filter`): it uses no other.
 */
export function openOwnSessions(
  host: { readonly filter: ViewFilter | undefined; resolveHandle(server: string): Promise<Upstream> },
  servers: readonly Upstream[],
): void {
  for (const h of servers) {
    if (h.state === "disabled" || (h.config.startup === "lazy" && h.config.sharing !== "per-client")) continue;
    if (host.filter !== undefined && !host.filter.viewsServer(h.name)) continue;
    host.resolveHandle(h.name).then(
      (own) => own.whenReady(own.config.timeout).catch(() => {}),
      () => {},
    );
  }
}
