import type { ClientCapabilities, JsonObject, RequestCaller, RequestId, ServerCapabilities } from "@mcpd/protocol";
import { declaresUi } from "./app-meta.js";
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
 * servers' UI sessions) and starts them, without waiting for them to be ready: the aggregate tools/list waits
 * for them (bounded), as for any server coming up. Only for the servers its view shows (`host.filter`): it
 * uses no other. `capabilities`: what the client declared (a 2026-era request's envelope; default: its
 * initialize). Resolves once each session is made (its own, or the shared one when it needs none).
 */
export function openOwnSessions(
  host: { readonly filter: ViewFilter | undefined; resolveHandle(server: string, capabilities?: ClientCapabilities): Promise<Upstream> },
  servers: readonly Upstream[],
  capabilities?: ClientCapabilities,
): Promise<void> {
  const made: Promise<unknown>[] = [];
  for (const h of servers) {
    if (h.state === "disabled" || (h.config.startup === "lazy" && h.config.sharing !== "per-client")) continue;
    if (host.filter !== undefined && !host.filter.viewsServer(h.name)) continue;
    const own = host.resolveHandle(h.name, capabilities);
    own.then(
      (o) => o.whenReady(o.config.timeout).catch(() => {}),
      () => {},
    );
    made.push(own.catch(() => {}));
  }
  return Promise.all(made).then(() => {});
}

/**
 * A client without the UI extension initialized in the aggregate view: the parked shared sessions of the
 * servers its view shows start again (supervision/ui-sessions.ts), so that it is offered what such a client
 * is, prompts and resources included. A 2026-era connection (no initialize) starts them by its requests.
 */
export function unparkViewed(
  host: { readonly filter: ViewFilter | undefined },
  directory: { readonly servers: readonly Upstream[]; unpark?(name: string): void },
): void {
  for (const h of directory.servers) if (host.filter === undefined || host.filter.viewsServer(h.name)) directory.unpark?.(h.name);
}

/**
 * Opens the UI sessions of a 2026-era request that declares the UI extension in its own envelope, as
 * {@link openOwnSessions} does (the aggregate tools/list then waits for them, bounded): a connection that
 * declared it in initialize has them already, and any other request needs none.
 */
export function openEnvelopeSessions(
  host: Parameters<typeof openOwnSessions>[0] & {
    readonly clientCapabilities: ClientCapabilities;
    readonly modern: { callerOf(id: RequestId): RequestCaller | undefined } | undefined;
  },
  id: RequestId,
  servers: readonly Upstream[],
): Promise<void> {
  const caps = host.modern?.callerOf(id)?.clientCapabilities;
  if (caps === undefined || !declaresUi(caps) || declaresUi(host.clientCapabilities)) return Promise.resolve();
  return openOwnSessions(host, servers, caps as ClientCapabilities);
}
