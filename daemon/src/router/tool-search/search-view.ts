import {
  MCPD_CALLED_TOOL_META,
  isObject,
  toWireError,
  type ClientCapabilities,
  type JsonObject,
  type RequestId,
  type Tool,
} from "@mcpd/protocol";
import type { ToolSearchMode } from "../../config/config-schema.js";
import { RUNTIME_DEFAULTS } from "../../defaults.js";
import { type AggregateHost, type AggregateShared, AggregateView } from "../aggregate-view.js";
import { appOnlyRefusal } from "../app-access.js";
import { callerCapabilities, callerDeclaresUi, isAppOnly } from "../app-meta.js";
import type { Catalog, CatalogEntry } from "../catalog.js";
import type { ServerDirectory, Upstream } from "../upstream-port.js";
import { KeptTools } from "./kept-tools.js";
import { type SearchModeState, searchMode } from "./search-mode.js";
import { CALL_TOOL, SEARCH_TOOLS, searchModeTools } from "./search-tools.js";
import { ToolIndex } from "./tool-index.js";
import { oneLine } from "./tool-words.js";

/** What the search view calls on its connection, beyond the aggregate view's host. */
export interface SearchHost extends AggregateHost {
  /** The search mode its selection asked for; undefined: its profile's. */
  readonly toolSearch: ToolSearchMode | undefined;
  readonly inFlight: AggregateHost["inFlight"] & {
    forward(id: RequestId, h: Upstream, method: string, p: JsonObject | undefined, adapt?: (r: JsonObject) => JsonObject): void;
  };
  /** The server's process for this connection: the shared one, or its own for a per-client server (started on first use). */
  resolveHandle(server: string, capabilities?: ClientCapabilities): Promise<Upstream>;
}

/** The servers (to reach the one a `call_tool` names) and the catalog. */
export interface SearchShared extends AggregateShared {
  readonly servers: Pick<ServerDirectory, "servers" | "get">;
}

/** One index per catalog (one per router): every connection in search mode shares it. */
const INDEXES = new WeakMap<Catalog, ToolIndex>();
function indexOf(catalog: Catalog): ToolIndex {
  let index = INDEXES.get(catalog);
  if (index === undefined) INDEXES.set(catalog, (index = new ToolIndex(() => catalog.tools())));
  return index;
}

/** A tool's answer as text, with `isError` when it is one. */
function textResult(text: string, isError = false, structuredContent?: JsonObject): JsonObject {
  const result: JsonObject = { content: [{ type: "text", text }] };
  if (structuredContent !== undefined) result.structuredContent = structuredContent;
  if (isError) result.isError = true;
  return result;
}

/** `call_tool`'s answer: the tool's own, which says first which tool was called (also in its `_meta`, MCPD_CALLED_TOOL_META). */
function labelled(name: string): (result: JsonObject) => JsonObject {
  return (result) => {
    const content = Array.isArray(result.content) ? result.content : [];
    const meta = isObject(result._meta) ? result._meta : {};
    return {
      ...result,
      content: [{ type: "text", text: `[called ${name}]` }, ...content],
      _meta: { ...meta, [MCPD_CALLED_TOOL_META]: name },
    };
  };
}

/**
 * The aggregate view in search mode (docs/tool-search.md): `tools/list` holds `search_tools` (and
 * `call_tool` when its setting says so) and the tools this connection found or used ({@link KeptTools}),
 * instead of the catalog. Out of search mode (and for every other method) it is the aggregate view.
 * Whatever it finds, lists or calls is a tool of the connection's view: its filter is checked each time.
 */
export class SearchView extends AggregateView {
  private kept: KeptTools | undefined;

  constructor(
    private readonly searchHost: SearchHost,
    private readonly searchShared: SearchShared,
  ) {
    super(searchHost, searchShared);
  }

  /** This connection's search mode now, and why. */
  mode(): SearchModeState {
    return searchMode(this.searchHost.toolSearch, this.searchHost.filter, () => this.viewTools().length);
  }

  /** The tools of the view (what tools/list holds out of search mode). */
  private viewTools(): readonly CatalogEntry<Tool>[] {
    const all = this.searchShared.catalog.tools();
    const f = this.searchHost.filter;
    return f === undefined ? all : f.narrow(all, (e) => f.allowsTool(e.server, e.exposed));
  }

  /** The catalog's entry of a tool of this view, or undefined (unknown, or hidden from it). */
  private inView(name: string): CatalogEntry<Tool> | undefined {
    const e = this.searchShared.catalog.tool(name);
    const f = this.searchHost.filter;
    return e !== undefined && (f === undefined || f.allowsTool(e.server, e.exposed)) ? e : undefined;
  }

  /** {@link inView}, for what request `id` lists: app-only tools only when its client declared the UI extension. */
  private listable(id: RequestId): (name: string) => CatalogEntry<Tool>[] {
    const ui = callerDeclaresUi(this.searchHost, id);
    return (name) => {
      const e = this.inView(name);
      return e === undefined || (!ui && isAppOnly(e.item)) ? [] : [e];
    };
  }

  override serve(id: RequestId, method: string, params: JsonObject | undefined, retried = false): void {
    if (method === "tools/list" || method === "tools/call") {
      const mode = this.mode();
      if (mode.on) return method === "tools/list" ? this.list(id, mode) : this.call(id, params, mode, retried);
    }
    super.serve(id, method, params, retried);
  }

  private list(id: RequestId, mode: SearchModeState): void {
    const servers = this.viewServers();
    const tools: Tool[] = searchModeTools(servers, mode.callTool);
    for (const e of [...(this.kept?.names() ?? [])].flatMap(this.listable(id))) tools.push({ ...e.item, name: e.exposed });
    this.searchHost.send({ jsonrpc: "2.0", id, result: { tools } });
  }

  /** The names of the servers whose tools this view may list. */
  private viewServers(): string[] {
    const f = this.searchHost.filter;
    return this.searchShared.servers.servers.map((h) => h.name).filter((s) => f === undefined || f.viewsServer(s));
  }

  private call(id: RequestId, params: JsonObject | undefined, mode: SearchModeState, retried: boolean): void {
    const name = params?.name;
    if (name === SEARCH_TOOLS) return this.search(id, isObject(params?.arguments) ? params.arguments : {}, mode);
    if (name === CALL_TOOL && mode.callTool) return this.callThrough(id, params as JsonObject);
    if (typeof name === "string" && this.inView(name) !== undefined) this.keep().used(name);
    super.serve(id, "tools/call", params, retried);
  }

  private keep(): KeptTools {
    return (this.kept ??= new KeptTools());
  }

  /** Answers `search_tools`; the tools found join this connection's list (a list_changed follows when it changed). */
  private search(id: RequestId, args: JsonObject, mode: SearchModeState): void {
    const { query, server, limit } = args;
    const reply = (result: JsonObject) => this.searchHost.send({ jsonrpc: "2.0", id, result });
    if (typeof query !== "string" || query.trim() === "")
      return reply(textResult('search_tools: "query" must be a non-empty string', true));
    const servers = this.viewServers();
    if (server !== undefined && (typeof server !== "string" || !servers.includes(server)))
      return reply(textResult(`search_tools: "server" must be one of this view's servers: ${servers.join(", ")}`, true));
    const max = RUNTIME_DEFAULTS.toolSearchMaxLimit;
    const n = limit === undefined ? RUNTIME_DEFAULTS.toolSearchLimit : limit;
    if (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > max)
      return reply(textResult(`search_tools: "limit" must be a whole number from 1 to ${max}`, true));
    const f = this.searchHost.filter;
    const hits = indexOf(this.searchShared.catalog).search(query.slice(0, RUNTIME_DEFAULTS.toolSearchMaxQueryChars), {
      limit: n,
      server: server as string | undefined,
      allows: f === undefined ? undefined : (s, e) => f.allowsTool(s, e),
    });
    const found = hits.map((h) => h.exposed).flatMap(this.listable(id));
    const tools = found.map((e) => {
      const t: JsonObject = { name: e.exposed, server: e.server, description: oneLine(e.item.description, 160) };
      if (typeof e.item.title === "string") t.title = e.item.title;
      if (mode.callTool) t.inputSchema = e.item.inputSchema;
      return t;
    });
    const lines = found.map((e) => `${e.exposed} (${e.server}): ${oneLine(e.item.description, 160)}`);
    const text = lines.length > 0 ? lines.join("\n") : `No tool matches ${JSON.stringify(query.slice(0, 100))}.`;
    const changed = this.keep().found(found.map((e) => e.exposed));
    reply(textResult(text, false, { tools }));
    if (changed) this.searchHost.send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
  }

  /** Answers `call_tool`: calls the named tool of this view, never one outside it, and says which it called. */
  private callThrough(id: RequestId, params: JsonObject): void {
    const args = isObject(params.arguments) ? params.arguments : {};
    const name = args.name;
    const e = typeof name === "string" ? this.inView(name) : undefined;
    if (e === undefined) {
      const text = `call_tool: ${typeof name === "string" ? `no tool ${JSON.stringify(name.slice(0, 200))} in this view` : '"name" must be a string'}; find tools with search_tools`;
      return this.searchHost.send({ jsonrpc: "2.0", id, result: textResult(text, true) });
    }
    const upstream: JsonObject = { name: e.item.name, arguments: isObject(args.arguments) ? args.arguments : {} };
    const handle = this.searchShared.servers.get(e.server);
    const app = { ui: callerDeclaresUi(this.searchHost, id), tools: handle?.tools ?? [e.item] };
    const onlyApp = appOnlyRefusal(e.server, "tools/call", upstream, app);
    if (onlyApp !== undefined) return this.searchHost.replyError(id, toWireError(onlyApp));
    if (isObject(params._meta)) upstream._meta = params._meta;
    if (this.keep().used(e.exposed)) this.searchHost.send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    if (handle === undefined) return this.searchHost.serveOnServer(id, e.server, "tools/call", upstream, undefined, true);
    if (handle.config.sharing !== "per-client" && !app.ui)
      return this.searchHost.inFlight.forward(id, handle, "tools/call", upstream, labelled(e.exposed));
    // A per-client server: this connection's own process, started on first use; a UI client's: its UI session.
    this.searchHost.inFlight.after(
      id,
      this.searchHost.resolveHandle(e.server, callerCapabilities(this.searchHost, id)),
      (own) => this.searchHost.inFlight.forward(id, own, "tools/call", upstream, labelled(e.exposed)),
      (err) => this.searchHost.replyError(id, toWireError(err)),
    );
  }
}
