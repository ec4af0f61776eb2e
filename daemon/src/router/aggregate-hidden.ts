import type { McpdError } from "@mcpd/protocol";
import type { Catalog, CatalogEntry } from "./catalog.js";
import { ServerFilters } from "./server-filters.js";
import type { Upstream } from "./upstream-port.js";
import type { ViewFilter } from "./view-filter.js";

/**
 * The refusal of a tool or prompt name the catalog does not have because its server's own filter hides
 * it, or of one it has that the connection's filter hides; undefined when neither hides it.
 */
export function hiddenInView(
  catalog: Catalog,
  servers: readonly Upstream[],
  kind: "tool" | "prompt",
  name: string,
  entry: CatalogEntry<unknown> | undefined,
  f: ViewFilter | undefined,
): McpdError | undefined {
  if (entry !== undefined)
    return f !== undefined && !(kind === "tool" ? f.allowsTool(entry.server, name) : f.allowsPrompt(entry.server, name))
      ? f.hidden(kind, name, entry.server)
      : undefined;
  const server = catalog.hiddenBy(kind === "tool" ? "tools" : "prompts", name);
  if (server === undefined) return undefined;
  // A client that does not see the server at all is not told what its filter hides.
  if (f !== undefined && !f.viewsServer(server)) return f.hidden(kind, name, server);
  const h = servers.find((x) => x.name === server);
  const filters = h ? ServerFilters.of(h.config) : undefined;
  return filters?.hidden(kind === "tool" ? "tools" : "prompts", name);
}
