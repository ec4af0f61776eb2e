import { McpdError, WireCode, isObject, mcpMethod, targetOf, type ItemKind, type JsonObject, type Tool } from "@mcpd/protocol";
import { appListsTool, appMayCall, appOnlyRefusal } from "./app-access.js";
import { isAppOnly } from "./app-meta.js";
import { exposedName } from "./exposed-names.js";
import { ServerFilters } from "./server-filters.js";
import type { ResolvedServerConfig } from "../config/config-schema.js";
import { reachOf, type ViewFilter } from "./view-filter.js";

/** A connection's MCP Apps side of a request to one server: whether it declared the UI extension, and the server's tools. */
export interface AppContext {
  readonly ui: boolean;
  readonly tools: readonly Tool[];
}

/** What the filters say about one request served as a server's own view. */
export type Gate = { refuse: McpdError } | { adapt: (result: JsonObject) => JsonObject } | undefined;

/** What names an item of each list (MCP_METHODS says which methods list what), and the filter that judges it. */
const ITEM: Readonly<Record<ItemKind, { kind: "tool" | "prompt" | "resource"; field: "name" | "uri" | "uriTemplate" }>> = {
  tool: { kind: "tool", field: "name" },
  prompt: { kind: "prompt", field: "name" },
  resource: { kind: "resource", field: "uri" },
  resourceTemplate: { kind: "resource", field: "uriTemplate" },
};

/** Whether one item (by its server-side name or URI) passes both the server's filters and the view's. */
function allows(
  server: string,
  sf: ServerFilters | undefined,
  vf: ViewFilter | undefined,
  kind: "tool" | "prompt" | "resource",
  name: string,
): boolean {
  switch (kind) {
    case "tool":
      return (sf === undefined || sf.allowsTool(name)) && (vf === undefined || vf.allowsTool(server, exposedName(server, name)));
    case "prompt":
      return (sf === undefined || sf.allowsPrompt(name)) && (vf === undefined || vf.allowsPrompt(server, exposedName(server, name)));
    default:
      return (sf === undefined || sf.allowsResource(name)) && (vf === undefined || vf.allowsResource(server, name));
  }
}

/** The refusal of a hidden item: the server's filter's when it is the one hiding it, else the view's. */
function refusal(
  server: string,
  sf: ServerFilters | undefined,
  vf: ViewFilter | undefined,
  kind: "tool" | "prompt" | "resource",
  name: string,
): McpdError {
  const serverHides =
    sf !== undefined && (kind === "tool" ? !sf.allowsTool(name) : kind === "prompt" ? !sf.allowsPrompt(name) : !sf.allowsResource(name));
  if (serverHides || vf === undefined)
    return (sf as ServerFilters).hidden(kind === "tool" ? "tools" : kind === "prompt" ? "prompts" : "resources", name);
  return vf.hidden(kind, name, server, kind === "resource" ? name : exposedName(server, name));
}

/**
 * The filters' say on a request served as server `config.name`'s own view (its transparent view, a
 * per-request routed request, or an aggregate request routed by URI): a list answer loses the items they
 * hide (`adapt`); a request naming a hidden tool, prompt or resource is refused (`refuse`) before it
 * goes upstream. Names here are the server's own; a view's globs are matched against their aggregate
 * form. Called only when the server has filters or the connection a view filter.
 */
export function gateOnServer(
  config: ResolvedServerConfig,
  view: ViewFilter | undefined,
  method: string,
  params: JsonObject | undefined,
  app: AppContext = { ui: true, tools: [] },
): Gate {
  const server = config.name;
  const sf = ServerFilters.of(config);
  const toolAllowed = (name: string): boolean => allows(server, sf, view, "tool", name);
  if (sf === undefined && view === undefined && (app.ui || method !== "tools/list")) return appOnlyGate(server, method, params, app);
  const listed = mcpMethod(method)?.list;
  if (listed !== undefined) {
    const list = { key: listed.key, ...ITEM[listed.item] };
    return {
      adapt: (result) => {
        const items = result[list.key];
        // A copy even so: what mcpd judged is encoded afresh, never passed on as the server wrote it (a
        // duplicate member in that text could still hold what the filter would have removed).
        if (!Array.isArray(items)) return { ...result };
        const kept = items.filter((item) => {
          if (!isObject(item) || typeof item[list.field] !== "string") return true;
          if (list.kind !== "tool") return allows(server, sf, view, list.kind, item[list.field] as string);
          const tool = item as unknown as Tool;
          if (!app.ui) return !isAppOnly(tool) && toolAllowed(tool.name);
          return (
            toolAllowed(tool.name) ||
            (view !== undefined && sf?.allowsTool(tool.name) !== false && appListsTool(tool, items as Tool[], toolAllowed))
          );
        });
        return { ...result, [list.key]: kept };
      },
    };
  }
  const target = targetOf(method, params);
  // A request naming no item (a name that is not a string, a completion of another kind of ref, a method of
  // the server's own) goes only to a server the view shows; the server refuses what it does not know.
  if (target === undefined) {
    const hidden = view !== undefined ? outOfView(view, server, method) : undefined;
    return hidden !== undefined ? { refuse: hidden } : undefined;
  }
  const kind = ITEM[target.kind].kind;
  // What the filters hide is refused as hidden; what they show, to a client without the UI extension, may be app-only.
  if (allows(server, sf, view, kind, target.name)) return appOnlyGate(server, method, params, app);
  // An app's call to its server's tool, which the selection picking the app leaves out.
  const byApp = kind === "tool" && app.ui && sf?.allowsTool(target.name) !== false && appMayCall(target.name, app.tools, toolAllowed);
  return byApp ? undefined : { refuse: refusal(server, sf, view, kind, target.name) };
}

/** The gate of a request the aggregate view has judged already: only the app-only rule (app-access.ts `appOnlyRefusal`) is left. */
export function appOnlyGate(server: string, method: string, params: JsonObject | undefined, app: AppContext): Gate {
  const refuse = appOnlyRefusal(server, method, params, app);
  return refuse === undefined ? undefined : { refuse };
}

/**
 * The refusal of `method` on a server `view` leaves out (undefined: the view shows it): a scoped token's
 * session gets MCPD_HTTP_TOKEN_SCOPE, a profile's MCPD_HIDDEN. Said the same of a server that does not exist,
 * so the refusal tells nothing of what exists outside the view.
 */
export function outOfView(view: ViewFilter, server: string, method: string): McpdError | undefined {
  if (view.viewsServer(server)) return undefined;
  const only = view.confinement?.server;
  const why = only !== undefined ? reachOf(only) : `server "${server}" is not one of ${view.describe()}'s servers`;
  const message = `${method} on server "${server}" refused: ${why}`;
  if (view.confinement === undefined) return new McpdError("MCPD_HIDDEN", message, { wireCode: WireCode.Hidden, data: { server } });
  return new McpdError("MCPD_HTTP_TOKEN_SCOPE", message, { wireCode: WireCode.Forbidden, data: { server } });
}
