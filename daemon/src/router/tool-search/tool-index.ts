import MiniSearch from "minisearch";
import type { Tool } from "@mcpd/protocol";
import type { CatalogEntry } from "../catalog.js";
import { SEARCH_FIELDS, type SearchField, type ToolDocument, toolDocument } from "./tool-words.js";

/**
 * The weight of a match in each field (set before measuring; only ever checked on the tuning set,
 * tests/fixtures/tool-search-tasks/tuning.json): a
 * tool's name says what it does in a few words, its server names the system it acts on, its
 * description says more with more noise, and its parameters least.
 */
export const FIELD_WEIGHTS: Readonly<Record<SearchField, number>> = { name: 3, server: 2, title: 2, description: 1, params: 0.4 };

/** Words too common in tasks and descriptions to tell tools apart. */
const STOP_WORDS = new Set(
  (
    "a an the to of in on at by for from with into onto and or but as is are be been it its this that these those " +
    "i me my we our you your can could would should will do does please using use via so all any some what which who " +
    "how when where there here them they their then than just also one"
  ).split(" "),
);

/** A term as indexed and searched: lower-cased, stop words dropped, a plural made singular (files -> file, queries -> query). */
export function searchTerm(term: string): string | null {
  const t = term.toLowerCase();
  if (t.length < 2 || STOP_WORDS.has(t)) return null;
  if (t.length > 4 && t.endsWith("ies")) return `${t.slice(0, -3)}y`;
  if (t.length > 3 && t.endsWith("s") && !t.endsWith("ss") && !t.endsWith("us")) return t.slice(0, -1);
  return t;
}

/** One match: the tool's exposed name, its server, and its score (higher is better). */
export interface SearchHit {
  exposed: string;
  server: string;
  score: number;
}

/** What a search is limited to: at most `limit` hits, of `server` only, of tools `allows` lets through (a view). */
export interface SearchOptions {
  limit: number;
  server?: string;
  allows?: (server: string, exposed: string) => boolean;
}

function newMiniSearch(): MiniSearch<ToolDocument> {
  return new MiniSearch<ToolDocument>({
    fields: [...SEARCH_FIELDS],
    processTerm: searchTerm,
    searchOptions: {
      boost: { ...FIELD_WEIGHTS },
      combineWith: "OR",
      prefix: (term) => term.length >= 3,
      fuzzy: (term) => (term.length >= 5 ? 0.2 : false),
      // One edit at most: a typo or a plural; two make each long term match hundreds of others (time, noise).
      maxFuzzy: 1,
    },
  });
}

/**
 * A full-text index (MiniSearch) over the tools of the aggregate catalog, shared by every connection in
 * search mode. It follows the catalog: a search first brings it up to date with the catalog's current
 * list, adding and removing only the tools that changed (a list the catalog has not rebuilt since is
 * the same array: nothing to do). A view's search passes its filter (`allows`): a hit is always a tool
 * that view lists.
 */
export class ToolIndex {
  private mini = newMiniSearch();
  /** Exposed name -> the catalog entry indexed for it (its tool object, to see it change). */
  private readonly indexed = new Map<string, CatalogEntry<Tool>>();
  private synced: readonly CatalogEntry<Tool>[] | undefined;

  constructor(private readonly list: () => readonly CatalogEntry<Tool>[]) {}

  /** Tools indexed now. */
  get size(): number {
    return this.indexed.size;
  }

  /** Brings the index up to date with the catalog; returns how many tools were (re)indexed. */
  sync(): number {
    const list = this.list();
    if (list === this.synced) return 0;
    this.synced = list;
    const seen = new Set<string>();
    let changed = 0;
    for (const e of list) {
      seen.add(e.exposed);
      const old = this.indexed.get(e.exposed);
      if (old !== undefined && old.item === e.item && old.server === e.server) continue;
      if (old !== undefined) this.mini.discard(e.exposed);
      this.mini.add(toolDocument(e.exposed, e.server, e.item));
      this.indexed.set(e.exposed, e);
      changed++;
    }
    for (const name of this.indexed.keys()) {
      if (seen.has(name)) continue;
      this.mini.discard(name);
      this.indexed.delete(name);
      changed++;
    }
    return changed;
  }

  /** The catalog entry of an indexed tool. */
  entry(exposed: string): CatalogEntry<Tool> | undefined {
    return this.indexed.get(exposed);
  }

  /** The best matches for `query`, best first, within `opts`. */
  search(query: string, opts: SearchOptions): SearchHit[] {
    this.sync();
    const { server, allows } = opts;
    const results = this.mini.search(query, {
      filter: (r) => {
        const e = this.indexed.get(r.id as string);
        return e !== undefined && (server === undefined || e.server === server) && (allows === undefined || allows(e.server, e.exposed));
      },
    });
    const hits: SearchHit[] = [];
    for (const r of results.slice(0, opts.limit)) {
      const e = this.indexed.get(r.id as string) as CatalogEntry<Tool>;
      hits.push({ exposed: e.exposed, server: e.server, score: r.score });
    }
    return hits;
  }
}
