import { FILTER_KINDS } from "../config/config-schema.js";
import { unmatchedGlobWarning } from "../config/filter-config.js";
import type { Upstream } from "./upstream-port.js";
import type { Catalog } from "./catalog.js";
import type { NameFilter } from "./name-filter.js";
import type { Profiles } from "./profiles.js";
import { namespacedUri } from "./resource-uris.js";
import { ServerFilters } from "./server-filters.js";
import type { CompiledProfile } from "./view-filter.js";

type Kind = (typeof FILTER_KINDS)[number];

/** Whether a server's lists are known now: it is ready (an unready server's names cannot be judged). */
const listed = (h: Upstream): boolean => h.state === "ready" && h.client !== undefined;

/** Each glob of `filter` that matches none of `names` (each name in its forms), as warnings. */
function unmatched(owner: string, kind: Kind, filter: NameFilter | undefined, names: readonly (readonly string[])[]): string[] {
  if (filter === undefined) return [];
  const out: string[] = [];
  for (const list of ["include", "exclude"] as const) {
    for (const glob of filter.unmatched(list, names)) out.push(unmatchedGlobWarning(owner, kind, list, glob, names.length));
  }
  return out;
}

/** A server's own names of one kind: tool and prompt names, resource URIs and URI templates. */
function ownNames(h: Upstream, kind: Kind): string[][] {
  const c = h.client;
  if (c === undefined) return [];
  if (kind === "tools") return c.tools.map((t) => [t.name]);
  if (kind === "prompts") return c.prompts.map((p) => [p.name]);
  return [...c.resources.map((r) => [r.uri]), ...c.resourceTemplates.map((t) => [t.uriTemplate])];
}

/** The aggregate names a profile's globs of one kind are matched against, over its servers. */
function aggregateNames(catalog: Catalog, p: CompiledProfile, kind: Kind): string[][] {
  const mine = (server: string): boolean => p.servers === undefined || p.servers.has(server);
  if (kind === "tools")
    return catalog
      .tools()
      .filter((e) => mine(e.server))
      .map((e) => [e.exposed]);
  if (kind === "prompts")
    return catalog
      .prompts()
      .filter((e) => mine(e.server))
      .map((e) => [e.exposed]);
  return [...catalog.resources(), ...catalog.resourceTemplates()]
    .filter((e) => mine(e.server))
    .map((e) => [e.own, namespacedUri(e.server, e.own)]);
}

/**
 * The globs of the servers' own filters and of the profiles that match nothing the servers offer now,
 * one warning each, naming the glob and where it is (`server "github": tools.exclude glob "delte_*" ...`).
 * Only judged where every list concerned is known: a server's filter once it is ready; a profile once
 * every enabled server it covers is ready (a glob over a server still starting is not yet wrong).
 */
export function filterWarnings(servers: readonly Upstream[], catalog: Catalog, profiles: Profiles): string[] {
  const out: string[] = [];
  for (const h of servers) {
    const f = ServerFilters.of(h.config);
    if (f === undefined || !listed(h)) continue;
    for (const kind of FILTER_KINDS) out.push(...unmatched(`server "${h.name}"`, kind, f[kind], ownNames(h, kind)));
  }
  for (const p of profiles.all()) {
    const covered = servers.filter((h) => h.config.enabled && (p.servers === undefined || p.servers.has(h.name)));
    if (!covered.every(listed)) continue;
    for (const kind of FILTER_KINDS) out.push(...unmatched(`profile "${p.name}"`, kind, p[kind], aggregateNames(catalog, p, kind)));
  }
  return out;
}
