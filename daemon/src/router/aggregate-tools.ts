/**
 * The aggregate view's tools for one connection with MCP Apps in mind: app-only tools
 * (`visibility: ["app"]`) listed only to clients that declared the UI extension, each tool's `ui://` view
 * in the view's form (`ui://<server>/<rest>`), and the names an app's own calls use: its server's tool
 * names without mcpd's prefix, and tools its connection's selection leaves out but its app may call
 * (app-access.ts).
 */
import { McpdError, WireCode, type Tool } from "@mcpd/protocol";
import { appListsTool, appMayCall } from "./app-access.js";
import { isAppOnly, withToolUris } from "./app-meta.js";
import type { CatalogEntry } from "./catalog.js";
import { quoted } from "./close-matches.js";
import { exposedName } from "./exposed-names.js";
import type { ViewFilter } from "./view-filter.js";

/** The view's say on a tool of `server`, by the server's own name. */
function allowsOwn(f: ViewFilter, server: string): (name: string) => boolean {
  return (name) => f.allowsTool(server, exposedName(server, name));
}

/** The catalog's tools of one server. */
function toolsOf(all: readonly CatalogEntry<Tool>[], server: string): Tool[] {
  return all.filter((e) => e.server === server).map((e) => e.item);
}

/**
 * The tools/list answer: `viewed` (what the connection's selection keeps of `all`), app-only ones only for a
 * UI client (`ui`), which also gets the app-only tools of the apps the selection shows; views in `form`.
 */
export function listedTools(
  all: readonly CatalogEntry<Tool>[],
  viewed: readonly CatalogEntry<Tool>[],
  f: ViewFilter | undefined,
  ui: boolean,
  form: (server: string, uri: string) => string,
): Tool[] {
  let entries = viewed;
  if (!ui) entries = viewed.filter((e) => !isAppOnly(e.item));
  else if (f !== undefined && viewed !== all) {
    const kept = new Set(viewed);
    entries = all.filter(
      (e) => kept.has(e) || (f.viewsServer(e.server) && appListsTool(e.item, toolsOf(all, e.server), allowsOwn(f, e.server))),
    );
  }
  return entries.map((e) => withToolUris({ ...e.item, name: e.exposed }, (uri) => form(e.server, uri)));
}

/**
 * Where an app's call goes when the view's tools (`all`) have no tool `name`, or the selection hides it (`entry`): an
 * app-callable tool of an app the view shows (UI clients); an unprefixed name to the one server of the
 * view that offers a tool of that name. Several servers: refused, naming them. Undefined: the usual path.
 */
export function appToolRoute(
  all: readonly CatalogEntry<Tool>[],
  f: ViewFilter | undefined,
  ui: boolean,
  name: string,
  entry: CatalogEntry<Tool> | undefined,
): { entry: CatalogEntry<Tool> } | { refuse: McpdError } | undefined {
  const reachable = (e: CatalogEntry<Tool>): boolean =>
    f === undefined ||
    f.allowsTool(e.server, e.exposed) ||
    (ui && f.viewsServer(e.server) && appMayCall(e.item.name, toolsOf(all, e.server), allowsOwn(f, e.server)));
  if (entry !== undefined) return f !== undefined && reachable(entry) ? { entry } : undefined;
  const owners = all.filter((e) => e.item.name === name && reachable(e));
  if (owners.length === 1) return { entry: owners[0] as CatalogEntry<Tool> };
  if (owners.length === 0) return undefined;
  const servers = owners.map((e) => e.server);
  return {
    refuse: new McpdError(
      "MCPD_AMBIGUOUS_TOOL",
      `Tool ${quoted(name)} is offered by ${servers.length} servers of this view (${servers.join(", ")}); call one by its ` +
        `prefixed name (${owners.map((e) => e.exposed).join(", ")}), or give each server its own transparent entry (mcpd connect <server>)`,
      { wireCode: WireCode.InvalidParams, data: { servers } },
    ),
  };
}
