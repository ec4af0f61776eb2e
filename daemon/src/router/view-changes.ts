import type { ItemFilters } from "../config/config-schema.js";
import { canonicalJson } from "../config/config-hash.js";
import { FILTER_KINDS } from "../config/config-schema.js";
import type { ListKind, Upstream } from "./upstream-port.js";
import type { Profiles } from "./profiles.js";
import type { Session } from "./session.js";

/** Each server's own filters, by name: what a reload compares against. */
export type FiltersSnapshot = ReadonlyMap<string, ItemFilters | undefined>;

/** The filters of every configured server now. */
export function filtersSnapshot(servers: readonly Upstream[]): FiltersSnapshot {
  return new Map(servers.map((h) => [h.name, h.config.filters]));
}

/** For each server present before and after whose own filter of a kind changed: those kinds. */
function serverFilterChanges(before: FiltersSnapshot, servers: readonly Upstream[]): Map<string, Set<ListKind>> {
  const out = new Map<string, Set<ListKind>>();
  for (const h of servers) {
    if (!before.has(h.name)) continue;
    const old = before.get(h.name);
    const kinds = new Set(FILTER_KINDS.filter((k) => canonicalJson(old?.[k] ?? null) !== canonicalJson(h.config.filters?.[k] ?? null)));
    if (kinds.size > 0) out.set(h.name, kinds);
  }
  return out;
}

/**
 * After a load or reload: swaps every connection's filter for one over its profile's new definition, and
 * tells each connection whose view of a kind changed, and only those, `notifications/<kind>/list_changed`:
 * a connection using a profile that changed (for the kinds that changed in it), and a connection viewing a
 * server whose own filter changed (aggregate view, that server's view, or a profile that includes it).
 * Returns how many notifications were sent.
 */
export function applyViewChanges(
  sessions: Iterable<Session>,
  servers: readonly Upstream[],
  before: FiltersSnapshot,
  profiles: Profiles,
  profileChanges: ReadonlyMap<string, ReadonlySet<ListKind>>,
): number {
  const serverChanges = serverFilterChanges(before, servers);
  let sent = 0;
  for (const s of sessions) {
    const kinds = new Set<ListKind>();
    const profile = s.filter?.profileName;
    if (profile !== undefined) {
      for (const k of profileChanges.get(profile) ?? []) kinds.add(k);
      if (s.filter !== undefined) s.filter = profiles.refresh(s.filter);
    }
    for (const [server, changed] of serverChanges) {
      const views = s.view.kind === "server" ? s.view.server === server : s.filter === undefined || s.filter.viewsServer(server);
      if (views) for (const k of changed) kinds.add(k);
    }
    // A quiet session (an HTTP session nobody listens to) learns of changes by listing again.
    if (!s.initialized || s.quiet) continue;
    for (const k of FILTER_KINDS) {
      if (!kinds.has(k)) continue;
      s.send({ jsonrpc: "2.0", method: `notifications/${k}/list_changed`, params: {} });
      sent++;
    }
  }
  return sent;
}
