import { MCPD_SERVER_META, isObject, type JsonObject, type Prompt, type Resource, type ResourceTemplate, type Tool } from "@mcpd/protocol";
import type { Upstream } from "./upstream-port.js";
import { exposedName } from "./exposed-names.js";
import { parseNamespacedUri, viewedUri } from "./resource-uris.js";
import { toolUiUris } from "./app-meta.js";
import { ServerFilters } from "./server-filters.js";

export interface CatalogEntry<T> {
  server: string;
  exposed: string;
  item: T;
}

/** A resource (or template) as the aggregate view lists it, with its server and the server's own URI (or template). */
export interface ExposedResource<T> {
  server: string;
  /** The server's own URI or URI template (the listed one may be namespaced). */
  own: string;
  item: T;
}

/** Matches a URI against an RFC 6570 level-1 template (`{var}` segments), enough to route reads. */
function templateRegex(template: string): RegExp {
  const escaped = template.replace(/[.*+?^$()|[\]\\]/g, "\\$&");
  return new RegExp(`^${escaped.replace(/\\?\{[^}]*\\?\}/g, "(.+?)").replace(/\{[^}]*\}/g, "(.+?)")}$`);
}

/**
 * Where a resource URI of the aggregate view goes: one server and that server's own URI (`namespaced`
 * when the client used the `mcpd://<server>/` form), or several servers that all claim it (`ambiguous`;
 * view-resources.ts narrows them to what a connection's view shows).
 */
export type ResourceRoute = { kind: "server"; server: string; uri: string; namespaced: boolean } | { kind: "ambiguous"; servers: string[] };

const META = MCPD_SERVER_META;

/** An item as the aggregate view lists it: `_meta["mcpd/server"]` names its server. */
function tagged<T extends { [key: string]: unknown }>(item: T, server: string): T {
  const meta = typeof item._meta === "object" && item._meta !== null ? (item._meta as JsonObject) : {};
  return { ...item, _meta: { ...meta, [META]: server } };
}

/**
 * The aggregate view's lookup tables: exposed tool and prompt names -> (server, original name), and
 * resource URIs / templates -> server. Rebuilt lazily from the servers' current lists whenever a list or
 * a server's state changes (the router marks it dirty).
 *
 * Resources: a URI (or URI template) only one server lists is exposed as it is; one that several servers
 * list is exposed once per server as `mcpd://<server>/<uri>` (resource-uris.ts), so each copy can be
 * told apart and read; a `ui://` one is always exposed as `ui://<server>/<rest>`. Every exposed resource and template carries `_meta["mcpd/server"]`.
 *
 * What a server's own filters (its config's `tools`, `prompts`, `resources`) hide is left out, and
 * remembered by name, so that asking for it is refused as hidden rather than unknown.
 */
export class Catalog {
  private dirty = true;
  private toolsByName = new Map<string, CatalogEntry<Tool>>();
  private promptsByName = new Map<string, CatalogEntry<Prompt>>();
  /** URI -> the servers that list it, in server order. */
  private resourceOwners = new Map<string, string[]>();
  private templates: Array<{ server: string; regex: RegExp; item: ResourceTemplate }> = [];
  private toolList: CatalogEntry<Tool>[] = [];
  private promptList: CatalogEntry<Prompt>[] = [];
  private resourceList: Array<{ server: string; item: Resource }> = [];
  private exposedResources: ExposedResource<Resource>[] = [];
  private exposedTemplates: ExposedResource<ResourceTemplate>[] = [];
  /** Exposed tool/prompt names and plain resource URIs a server's filter hides -> that server. */
  private readonly hiddenByServer = {
    tools: new Map<string, string>(),
    prompts: new Map<string, string>(),
    resources: new Map<string, string>(),
  };

  /**
   * `servers`: every configured server's shared session; `standIn`: the session whose prompts and resources
   * stand for a server's while its shared session is parked (supervision/ui-sessions.ts).
   */
  constructor(
    private readonly servers: () => readonly Upstream[],
    private readonly standIn: (name: string) => Upstream | undefined = () => undefined,
  ) {}

  invalidate(): void {
    this.dirty = true;
  }

  private build(): void {
    if (!this.dirty) return;
    this.dirty = false;
    this.toolsByName.clear();
    this.promptsByName.clear();
    this.resourceOwners.clear();
    this.templates = [];
    this.toolList = [];
    this.promptList = [];
    this.resourceList = [];
    this.exposedResources = [];
    this.exposedTemplates = [];
    for (const m of Object.values(this.hiddenByServer)) m.clear();
    for (const h of this.servers()) {
      if (h.state === "disabled" || h.state === "failed" || h.state === "needs-auth") continue;
      const f = ServerFilters.of(h.config);
      for (const tool of h.tools) {
        const e = { server: h.name, exposed: exposedName(h.name, tool.name), item: tool };
        if (f !== undefined && !f.allowsTool(tool.name)) {
          this.hiddenByServer.tools.set(e.exposed, h.name);
          continue;
        }
        this.toolsByName.set(e.exposed, e);
        this.toolList.push(e);
      }
      const live = h.state === "ready" ? h : this.standIn(h.name);
      const client = live?.state === "ready" ? live.client : undefined;
      if (!client) continue;
      for (const prompt of client.prompts) {
        const e = { server: h.name, exposed: exposedName(h.name, prompt.name), item: prompt };
        if (f !== undefined && !f.allowsPrompt(prompt.name)) {
          this.hiddenByServer.prompts.set(e.exposed, h.name);
          continue;
        }
        this.promptsByName.set(e.exposed, e);
        this.promptList.push(e);
      }
      // A `ui://` view a tool names is offered by its server even when its resources/list leaves it out.
      for (const uri of toolUiUris(h.tools)) this.addOwner(uri, h.name);
      for (const r of client.resources) {
        if (f !== undefined && !f.allowsResource(r.uri)) {
          this.hiddenByServer.resources.set(r.uri, h.name);
          continue;
        }
        this.addOwner(r.uri, h.name);
        this.resourceList.push({ server: h.name, item: r });
      }
      for (const t of client.resourceTemplates) {
        if (f !== undefined && !f.allowsResource(t.uriTemplate)) continue;
        try {
          this.templates.push({ server: h.name, regex: templateRegex(t.uriTemplate), item: t });
        } catch {
          /* a template we cannot parse is listed but never routes */
        }
      }
    }
    for (const { server, item } of this.resourceList) {
      const shared = (this.resourceOwners.get(item.uri)?.length ?? 0) > 1;
      const uri = viewedUri(server, item.uri, shared);
      const listed = tagged(uri === item.uri ? item : { ...item, uri }, server);
      this.exposedResources.push({ server, own: item.uri, item: listed });
    }
    const templateServers = new Map<string, Set<string>>();
    for (const t of this.templates) {
      const set = templateServers.get(t.item.uriTemplate) ?? new Set<string>();
      set.add(t.server);
      templateServers.set(t.item.uriTemplate, set);
    }
    for (const t of this.templates) {
      const shared = (templateServers.get(t.item.uriTemplate)?.size ?? 0) > 1;
      const uriTemplate = viewedUri(t.server, t.item.uriTemplate, shared);
      const item = uriTemplate === t.item.uriTemplate ? t.item : { ...t.item, uriTemplate };
      this.exposedTemplates.push({ server: t.server, own: t.item.uriTemplate, item: tagged(item, t.server) });
    }
  }

  private addOwner(uri: string, server: string): void {
    const owners = this.resourceOwners.get(uri);
    if (!owners) this.resourceOwners.set(uri, [server]);
    else if (!owners.includes(server)) owners.push(server);
  }

  tools(): CatalogEntry<Tool>[] {
    this.build();
    return this.toolList;
  }
  prompts(): CatalogEntry<Prompt>[] {
    this.build();
    return this.promptList;
  }
  /** Resources as the aggregate view lists them (shared URIs namespaced, `_meta["mcpd/server"]` set). */
  resources(): ExposedResource<Resource>[] {
    this.build();
    return this.exposedResources;
  }
  /** Templates as the aggregate view lists them (shared ones namespaced, `_meta["mcpd/server"]` set). */
  resourceTemplates(): ExposedResource<ResourceTemplate>[] {
    this.build();
    return this.exposedTemplates;
  }
  tool(exposed: string): CatalogEntry<Tool> | undefined {
    this.build();
    return this.toolsByName.get(exposed);
  }
  prompt(exposed: string): CatalogEntry<Prompt> | undefined {
    this.build();
    return this.promptsByName.get(exposed);
  }
  /** The server whose own filter hides this exposed tool or prompt name, or plain resource URI; undefined when none does. */
  hiddenBy(kind: "tools" | "prompts" | "resources", key: string): string | undefined {
    this.build();
    return this.hiddenByServer[kind].get(key);
  }
  /**
   * Whether the name or URI a request (`method`, `params`) names is in the catalog now, on a server
   * `inView` (the connection's view shows): a retry would find it.
   */
  resolves(method: string, params: JsonObject | undefined, inView: (server: string) => boolean = () => true): boolean {
    const name = params?.name;
    const uri = params?.uri;
    const ref = params?.ref;
    const named = (entry: { server: string } | undefined): boolean => entry !== undefined && inView(entry.server);
    const routed = (u: string): boolean => {
      const route = this.resolveResource(u);
      return route !== undefined && (route.kind === "server" ? inView(route.server) : route.servers.some(inView));
    };
    switch (method) {
      case "tools/call":
        return typeof name === "string" && named(this.tool(name));
      case "prompts/get":
        return typeof name === "string" && named(this.prompt(name));
      case "resources/read":
      case "resources/subscribe":
      case "resources/unsubscribe":
        return typeof uri === "string" && routed(uri);
      case "completion/complete":
        if (isObject(ref) && typeof ref.name === "string") return named(this.prompt(ref.name));
        return isObject(ref) && typeof ref.uri === "string" && routed(ref.uri);
      default:
        return false;
    }
  }
  /**
   * Where a URI goes: a namespaced `mcpd://<server>/<uri>` or `ui://<server>/<rest>` (any configured server, ready or not) to that
   * server; else the servers that list it; else the servers whose templates match it. One server routes;
   * several are ambiguous (never guessed); none is undefined. Also takes a namespaced URI template (for
   * completion/complete).
   */
  resolveResource(uri: string): ResourceRoute | undefined {
    this.build();
    const ns = parseNamespacedUri(uri, (name) => this.servers().some((h) => h.name === name));
    if (ns) return { kind: "server", server: ns.server, uri: ns.uri, namespaced: true };
    let servers = this.resourceOwners.get(uri);
    if (!servers) {
      servers = [];
      for (const t of this.templates)
        if (!servers.includes(t.server) && (t.item.uriTemplate === uri || t.regex.test(uri))) servers.push(t.server);
    }
    if (servers.length === 1) return { kind: "server", server: servers[0] as string, uri, namespaced: false };
    if (servers.length > 1) return { kind: "ambiguous", servers: [...servers] };
    return undefined;
  }
}
