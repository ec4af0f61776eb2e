import type { Prompt, Resource, ResourceTemplate, Tool } from "@mcpd/protocol";
import type { ServerHandle } from "../server-handle.js";
import { exposedName } from "./exposed-names.js";

export interface CatalogEntry<T> {
  server: string;
  exposed: string;
  item: T;
}

/** Matches a URI against an RFC 6570 level-1 template (`{var}` segments), enough to route reads. */
function templateRegex(template: string): RegExp {
  const escaped = template.replace(/[.*+?^$()|[\]\\]/g, "\\$&");
  return new RegExp(`^${escaped.replace(/\\?\{[^}]*\\?\}/g, "(.+?)").replace(/\{[^}]*\}/g, "(.+?)")}$`);
}

/**
 * The aggregate view's lookup tables: exposed tool and prompt names -> (server, original name), and
 * resource URIs / templates -> server. Rebuilt lazily from the servers' current lists whenever a list or
 * a server's state changes (the router marks it dirty).
 */
export class Catalog {
  private dirty = true;
  private toolsByName = new Map<string, CatalogEntry<Tool>>();
  private promptsByName = new Map<string, CatalogEntry<Prompt>>();
  private resourceOwner = new Map<string, string>();
  private templates: Array<{ server: string; regex: RegExp; item: ResourceTemplate }> = [];
  private toolList: CatalogEntry<Tool>[] = [];
  private promptList: CatalogEntry<Prompt>[] = [];
  private resourceList: Array<{ server: string; item: Resource }> = [];

  constructor(private readonly servers: () => ServerHandle[]) {}

  invalidate(): void {
    this.dirty = true;
  }

  private build(): void {
    if (!this.dirty) return;
    this.dirty = false;
    this.toolsByName.clear();
    this.promptsByName.clear();
    this.resourceOwner.clear();
    this.templates = [];
    this.toolList = [];
    this.promptList = [];
    this.resourceList = [];
    for (const h of this.servers()) {
      if (h.state === "disabled" || h.state === "failed") continue;
      for (const tool of h.tools) {
        const e = { server: h.name, exposed: exposedName(h.name, tool.name), item: tool };
        this.toolsByName.set(e.exposed, e);
        this.toolList.push(e);
      }
      const client = h.state === "ready" ? h.client : undefined;
      if (!client) continue;
      for (const prompt of client.prompts) {
        const e = { server: h.name, exposed: exposedName(h.name, prompt.name), item: prompt };
        this.promptsByName.set(e.exposed, e);
        this.promptList.push(e);
      }
      for (const r of client.resources) {
        if (!this.resourceOwner.has(r.uri)) this.resourceOwner.set(r.uri, h.name);
        this.resourceList.push({ server: h.name, item: r });
      }
      for (const t of client.resourceTemplates) {
        try {
          this.templates.push({ server: h.name, regex: templateRegex(t.uriTemplate), item: t });
        } catch {
          /* a template we cannot parse is listed but never routes */
        }
      }
    }
  }

  tools(): CatalogEntry<Tool>[] {
    this.build();
    return this.toolList;
  }
  prompts(): CatalogEntry<Prompt>[] {
    this.build();
    return this.promptList;
  }
  resources(): Array<{ server: string; item: Resource }> {
    this.build();
    return this.resourceList;
  }
  resourceTemplates(): Array<{ server: string; item: ResourceTemplate }> {
    this.build();
    return this.templates.map((t) => ({ server: t.server, item: t.item }));
  }
  tool(exposed: string): CatalogEntry<Tool> | undefined {
    this.build();
    return this.toolsByName.get(exposed);
  }
  prompt(exposed: string): CatalogEntry<Prompt> | undefined {
    this.build();
    return this.promptsByName.get(exposed);
  }
  /** The server that owns a URI: listed resources first, then templates in server order. */
  resourceServer(uri: string): string | undefined {
    this.build();
    const owner = this.resourceOwner.get(uri);
    if (owner) return owner;
    for (const t of this.templates) if (t.regex.test(uri)) return t.server;
    return undefined;
  }
}
