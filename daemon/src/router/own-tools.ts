/**
 * The aggregate view's tools as one connection sees them when it has sessions of its own: a per-client
 * server's private session, initialized with its client's capabilities, may offer it other tools than the
 * shared session the catalog lists (an MCP Apps server offers its UI tool only to a client that declared
 * the UI extension). Each of its ready sessions' tools replace its server's entries in the catalog's list,
 * under the same names and the server's own filters; a lookup by exposed name looks there too.
 */
import type { Tool } from "@mcpd/protocol";
import type { CatalogEntry } from "./catalog.js";
import { exposedName } from "./exposed-names.js";
import { ServerFilters } from "./server-filters.js";
import type { Upstream } from "./upstream-port.js";

/** One connection's overlay of the catalog's tools; the list is kept while neither it nor a source changed. */
export class OwnTools {
  private base: readonly CatalogEntry<Tool>[] | undefined;
  private sources: Array<readonly Tool[]> = [];
  private list: readonly CatalogEntry<Tool>[] = [];
  private byName = new Map<string, CatalogEntry<Tool>>();

  /** The catalog's list `all` with the servers of `own` (the connection's sessions) listing their own tools. */
  tools(all: readonly CatalogEntry<Tool>[], own: Iterable<Upstream> | undefined): readonly CatalogEntry<Tool>[] {
    const ready: Upstream[] = [];
    for (const h of own ?? []) if (h.state === "ready") ready.push(h);
    if (ready.length === 0) return all;
    if (this.base === all && this.sources.length === ready.length && ready.every((h, i) => this.sources[i] === h.tools)) return this.list;
    this.base = all;
    this.sources = ready.map((h) => h.tools);
    const mine = new Map(ready.map((h) => [h.name, h]));
    const out: CatalogEntry<Tool>[] = [];
    const done = new Set<string>();
    for (const e of all) {
      const h = mine.get(e.server);
      if (h === undefined) out.push(e);
      else if (!done.has(h.name)) {
        done.add(h.name);
        out.push(...entriesOf(h));
      }
    }
    for (const h of ready) if (!done.has(h.name)) out.push(...entriesOf(h));
    this.list = out;
    this.byName = new Map(out.map((e) => [e.exposed, e]));
    return out;
  }

  /** The entry of `exposed` in the list {@link tools} gave last for `all`; undefined when not there. */
  tool(all: readonly CatalogEntry<Tool>[], own: Iterable<Upstream> | undefined, exposed: string): CatalogEntry<Tool> | undefined {
    const list = this.tools(all, own);
    return list === all ? undefined : this.byName.get(exposed);
  }
}

/** One session's tools as catalog entries: the server's own filters applied. */
function entriesOf(h: Upstream): CatalogEntry<Tool>[] {
  const f = ServerFilters.of(h.config);
  return h.tools
    .filter((t) => f === undefined || f.allowsTool(t.name))
    .map((t) => ({ server: h.name, exposed: exposedName(h.name, t.name), item: t }));
}

/**
 * The sessions of its own (`privates`) that a request of a connection sees: all of them for a UI client's
 * request (`ui`); without the UI sessions of shared servers for another (a 2026-era connection's requests
 * each say whether they are a UI client's, and one that is not sees what the shared session offers).
 */
export function ownSessions(privates: ReadonlySet<Upstream> | undefined, ui: boolean): Iterable<Upstream> | undefined {
  if (ui || privates === undefined) return privates;
  return [...privates].filter((h) => h.config.sharing === "per-client");
}
