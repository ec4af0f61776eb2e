import { HiddenError, type Prompt, type Resource, type ResourceTemplate, type Tool, PROTOCOL_DEFAULTS, quote } from "@mcpd/protocol";
import type { ItemFilters, ResolvedServerConfig } from "../config/config-schema.js";
import { NameFilter } from "./name-filter.js";

/** The configured filters already compiled, by the (frozen) filters object of a config. */
const compiled = new WeakMap<ItemFilters, ServerFilters>();

const NOUN = { tools: "Tool", prompts: "Prompt", resources: "Resource" } as const;
const KIND = { tools: "tool", prompts: "prompt", resources: "resource" } as const;

/**
 * A server's own filters (its config entry's `tools`, `prompts`, `resources`), compiled once per config:
 * over the server's own tool and prompt names and resource URIs (and URI templates). What they hide, no
 * client sees, in any view; asking for it by name is refused with {@link HiddenError} (`by: "server"`).
 */
export class ServerFilters {
  readonly tools: NameFilter | undefined;
  readonly prompts: NameFilter | undefined;
  readonly resources: NameFilter | undefined;

  private constructor(
    readonly server: string,
    readonly spec: ItemFilters,
  ) {
    this.tools = NameFilter.compile(spec.tools);
    this.prompts = NameFilter.compile(spec.prompts);
    this.resources = NameFilter.compile(spec.resources);
  }

  /** The compiled filters of a server's config; undefined when it has none (the common case: no cost). */
  static of(config: ResolvedServerConfig): ServerFilters | undefined {
    const spec = config.filters;
    if (spec === undefined) return undefined;
    let f = compiled.get(spec);
    if (f === undefined) {
      f = new ServerFilters(config.name, spec);
      compiled.set(spec, f);
    }
    return f;
  }

  allowsTool(name: string): boolean {
    return this.tools === undefined || this.tools.allows(name);
  }
  allowsPrompt(name: string): boolean {
    return this.prompts === undefined || this.prompts.allows(name);
  }
  allowsResource(uri: string): boolean {
    return this.resources === undefined || this.resources.allows(uri);
  }

  /** The server's tools its filter lets through. */
  visibleTools(tools: readonly Tool[]): readonly Tool[] {
    const f = this.tools;
    return f === undefined ? tools : tools.filter((t) => f.allows(t.name));
  }
  visiblePrompts(prompts: readonly Prompt[]): readonly Prompt[] {
    const f = this.prompts;
    return f === undefined ? prompts : prompts.filter((p) => f.allows(p.name));
  }
  visibleResources(resources: readonly Resource[]): readonly Resource[] {
    const f = this.resources;
    return f === undefined ? resources : resources.filter((r) => f.allows(r.uri));
  }
  visibleTemplates(templates: readonly ResourceTemplate[]): readonly ResourceTemplate[] {
    const f = this.resources;
    return f === undefined ? templates : templates.filter((t) => f.allows(t.uriTemplate));
  }

  /** The refusal of `name` (as the client wrote it) that this server's `kind` filter hides. */
  hidden(kind: keyof typeof NOUN, name: string): HiddenError {
    return new HiddenError(
      KIND[kind],
      name,
      "server",
      `${NOUN[kind]} ${JSON.stringify(quote(name, PROTOCOL_DEFAULTS.quotedTextChars))} is hidden by the "${kind}" filter of server "${this.server}" in mcpd's config`,
      { server: this.server },
    );
  }
}

/** A server's visible tools: all of them when its config has no tools filter. */
export function visibleTools(config: ResolvedServerConfig, tools: readonly Tool[]): readonly Tool[] {
  const f = ServerFilters.of(config);
  return f === undefined ? tools : f.visibleTools(tools);
}
