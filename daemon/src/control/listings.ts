/**
 * The listing control methods (`mcpd/tools`, `mcpd/prompts`, `mcpd/resources`): what the servers offer,
 * with the server of each item, as a connection sees it. The servers' own filters always apply; a
 * connection's selection (a profile, tool globs) too, or the one `mcpd/tools` is asked about.
 */
import { isToolSearchMode } from "../config/tool-search-setting.js";
import { searchMode } from "../router/tool-search/search-mode.js";
import {
  ProtocolError,
  type JsonObject,
  type PromptsResult,
  type ResourcesResult,
  type ServerFilter,
  type ToolsParams,
  type ToolsResult,
} from "@mcpd/protocol";
import { RUNTIME_DEFAULTS } from "../defaults.js";
import { exposedName } from "../router/exposed-names.js";
import { parseToolGlobs } from "../router/handshake.js";
import type { Router } from "../router/router.js";
import { ServerFilters, visibleTools } from "../router/server-filters.js";
import type { Session } from "../router/session.js";
import type { ViewFilter } from "../router/view-filter.js";
import type { MCPManager } from "../supervision/manager.js";
import type { ServerHandle } from "../supervision/server-handle.js";

/** A param that must be a string, if given. @throws ProtocolError naming it. */
function optionalString(params: JsonObject | undefined, key: string): string | undefined {
  const v = params?.[key];
  if (v === undefined) return undefined;
  if (typeof v !== "string") throw new ProtocolError(`"${key}" must be a string`, { data: { mcpdCode: "MCPD_PROTOCOL_VIOLATION" } });
  return v;
}

/** `{ server?, profile?, tools? }` of `mcpd/tools`. @throws ProtocolError naming a bad one. */
export function toolsParams(params: JsonObject | undefined): ToolsParams {
  const out: ToolsParams = {};
  const server = optionalString(params, "server");
  const profile = optionalString(params, "profile");
  const tools = parseToolGlobs(params?.tools);
  if (tools !== undefined && "error" in tools)
    throw new ProtocolError(tools.error.message, { data: { mcpdCode: "MCPD_PROTOCOL_VIOLATION" } });
  if (server !== undefined) out.server = server;
  if (profile !== undefined) out.profile = profile;
  if (tools !== undefined) out.tools = tools;
  const toolSearch = params?.toolSearch;
  if (toolSearch !== undefined) {
    if (!isToolSearchMode(toolSearch))
      throw new ProtocolError(`"toolSearch" must be "on", "off" or "auto"`, { data: { mcpdCode: "MCPD_PROTOCOL_VIOLATION" } });
    out.toolSearch = toolSearch;
  }
  return out;
}

/** What the daemon gives the listings. */
export interface ListingContext {
  manager: MCPManager;
  router: Router;
  session: Session;
}

/** The configured servers, or the one named. @throws NotFoundError (-32602) naming the configured ones. */
export const pick = (m: MCPManager, server?: string): ServerHandle[] => (server === undefined ? m.servers : [m.require(server)]);

/**
 * Waits (bounded) for servers still coming up, so a listing right after `mcpd start` shows them: those
 * starting or restarting, except, for tools, those whose tools the cache already knows. For tools, a
 * lazy server never started whose tools are not cached is started, as an agent's `tools/list` does.
 */
async function settled(hs: ServerHandle[], toolsOnly: boolean): Promise<ServerHandle[]> {
  const unlisted = (h: ServerHandle): boolean => toolsOnly && !h.cachedTools && h.state === "stopped" && h.config.startup === "lazy";
  const waits = hs
    .filter((h) => ((h.state === "starting" || h.state === "restarting") && !(toolsOnly && h.cachedTools)) || unlisted(h))
    .map((h) => h.whenReady(Math.min(h.config.timeout, RUNTIME_DEFAULTS.aggregateSettleMs)).catch(() => undefined));
  if (waits.length > 0) await Promise.all(waits);
  return hs;
}

/**
 * `mcpd/tools`. Without `server`: exactly the aggregate view's `tools/list` as the asking connection sees
 * it (so `@mcpd/client`'s `listTools()` lists what its profile offers), narrowed further by the `profile`
 * and/or `tools` globs given (what `mcpd tools --profile NAME` shows). With `server`: that server's tools
 * both let through. A connection's own selection is never widened by what it asks about.
 * @throws NotFoundError (MCPD_UNKNOWN_SERVER, MCPD_UNKNOWN_PROFILE).
 */
export async function listTools(
  { server, profile, tools, toolSearch }: ToolsParams,
  { manager, router, session }: ListingContext,
): Promise<ToolsResult> {
  const hs = pick(manager, server);
  const asked: ViewFilter | undefined = profile !== undefined || tools !== undefined ? router.profiles.select(profile, tools) : undefined;
  const own = session.filter;
  const keeps = (s: string, exposed: string): boolean =>
    (own === undefined || own.allowsTool(s, exposed)) && (asked === undefined || asked.allowsTool(s, exposed));
  await settled(hs, true);
  if (server === undefined) {
    // The catalog is rebuilt only when a server's state or lists changed; server filters are applied in it.
    const all = router.catalog.tools();
    const seen = own === undefined && asked === undefined ? all : all.filter((e) => keeps(e.server, e.exposed));
    // The mode of the selection asked about, else the asking connection's own.
    const mode =
      asked !== undefined || toolSearch !== undefined ? searchMode(toolSearch, asked, () => seen.length) : session.aggregate.mode();
    return { tools: seen.map((e) => ({ server: e.server, exposedName: e.exposed, ...e.item })), toolSearch: mode };
  }
  return {
    tools: hs.flatMap((h) =>
      visibleTools(h.config, h.tools)
        .map((t) => ({ server: h.name, exposedName: exposedName(h.name, t.name), ...t }))
        .filter((t) => keeps(h.name, t.exposedName)),
    ),
  };
}

/** `mcpd/prompts`: the prompts of every server (or one) the servers' filters and the connection's selection let through. */
export async function listPrompts({ server }: ServerFilter, { manager, session }: ListingContext): Promise<PromptsResult> {
  const hs = await settled(pick(manager, server), false);
  const f = session.filter;
  return {
    prompts: hs.flatMap((h) => {
      const sf = ServerFilters.of(h.config);
      const prompts = h.client?.prompts ?? [];
      return (sf ? sf.visiblePrompts(prompts) : prompts)
        .map((p) => ({ server: h.name, exposedName: exposedName(h.name, p.name), ...p }))
        .filter((p) => f === undefined || f.allowsPrompt(h.name, p.exposedName));
    }),
  };
}

/** `mcpd/resources`: resources and templates, as {@link listPrompts}. */
export async function listResources({ server }: ServerFilter, { manager, session }: ListingContext): Promise<ResourcesResult> {
  const hs = await settled(pick(manager, server), false);
  const f = session.filter;
  const seen = (h: ServerHandle, uri: string): boolean => f === undefined || f.allowsResource(h.name, uri);
  return {
    resources: hs.flatMap((h) => {
      const all = h.client?.resources ?? [];
      const sf = ServerFilters.of(h.config);
      return (sf ? sf.visibleResources(all) : all).filter((r) => seen(h, r.uri)).map((r) => ({ server: h.name, ...r }));
    }),
    templates: hs.flatMap((h) => {
      const all = h.client?.resourceTemplates ?? [];
      const sf = ServerFilters.of(h.config);
      return (sf ? sf.visibleTemplates(all) : all).filter((t) => seen(h, t.uriTemplate)).map((t) => ({ server: h.name, ...t }));
    }),
  };
}
