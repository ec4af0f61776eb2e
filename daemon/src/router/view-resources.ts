/**
 * The aggregate view's resources as one connection sees them. A connection whose selection (a profile's
 * `servers`, its `resources` globs) hides some servers' copies knows only the copies it sees: a URI that
 * only one of them lists is listed and read in the server's own form, even when a hidden server lists it
 * too, and what an error counts, suggests or names is only what the view shows (trust findings: hidden
 * servers leaked through resource errors).
 */
import { McpdError, WireCode, type NotFoundError, type Resource, type ResourceTemplate } from "@mcpd/protocol";
import type { Upstream } from "./upstream-port.js";
import type { Catalog, ExposedResource } from "./catalog.js";
import { notFound, quoted } from "./close-matches.js";
import { viewedUri } from "./resource-uris.js";
import { ServerFilters } from "./server-filters.js";
import type { ViewFilter } from "./view-filter.js";

/** Where a resource URI (or, for completion/complete, a URI template) of one view goes, or why it goes nowhere. */
export type ResourceTarget =
  | { kind: "server"; server: string; uri: string; namespaced: boolean }
  /** Ambiguous among the view's servers, or hidden: answer the error. */
  | { kind: "refused"; error: McpdError }
  /** No server of the view offers it: answer the error once the servers still coming up are there. */
  | { kind: "unknown"; error: NotFoundError };

/** Most servers an ambiguous-resource error names. */
const MAX_NAMED_SERVERS = 10;

const RESOURCES = { noun: "resource", method: "resources/list" };
const TEMPLATES = { noun: "resource template", method: "resources/templates/list" };

/** A plain URI several servers of the view claim: refused, naming the forms that address each one. */
function ambiguous(uri: string, servers: readonly string[]): McpdError {
  const more = servers.length > MAX_NAMED_SERVERS ? `, ... (${servers.length} in all)` : "";
  const named = servers.slice(0, MAX_NAMED_SERVERS);
  return new McpdError(
    "MCPD_AMBIGUOUS_RESOURCE",
    `Resource ${quoted(uri)} is offered by ${servers.length} servers (${named.join(", ")}${more}); address one of them: ` +
      `${named.map((s) => viewedUri(s, uri, true)).join(", ")}${more ? ", ..." : ""} (or route the request with _meta["mcpd/server"])`,
    { wireCode: WireCode.InvalidParams, data: { servers: [...servers] } },
  );
}

/**
 * The entries a view keeps of a catalog list, each in the form the view lists it: namespaced
 * (`mcpd://<server>/<uri>`) only when more than one server of the view lists the same URI or template,
 * `ui://` ones always (`ui://<server>/<rest>`).
 */
function asViewed<T extends Resource | ResourceTemplate>(
  all: readonly ExposedResource<T>[],
  f: ViewFilter,
  field: "uri" | "uriTemplate",
): readonly ExposedResource<T>[] {
  const kept = all.filter((e) => f.allowsResource(e.server, e.own));
  const owners = new Map<string, Set<string>>();
  for (const e of kept) {
    const set = owners.get(e.own) ?? new Set<string>();
    set.add(e.server);
    owners.set(e.own, set);
  }
  return kept.map((e) => {
    const viewed = viewedUri(e.server, e.own, (owners.get(e.own)?.size ?? 0) > 1);
    if ((e.item as Record<string, unknown>)[field] === viewed) return e;
    return { ...e, item: { ...e.item, [field]: viewed } };
  });
}

/** The resources a connection's view lists (all of the catalog's when nothing narrows it). */
export function viewResources(catalog: Catalog, f: ViewFilter | undefined): readonly ExposedResource<Resource>[] {
  const all = catalog.resources();
  return f === undefined ? all : f.derive(all, (a) => asViewed(a, f, "uri"));
}

/** The resource templates a connection's view lists (all of the catalog's when nothing narrows it). */
export function viewTemplates(catalog: Catalog, f: ViewFilter | undefined): readonly ExposedResource<ResourceTemplate>[] {
  const all = catalog.resourceTemplates();
  return f === undefined ? all : f.derive(all, (a) => asViewed(a, f, "uriTemplate"));
}

/**
 * Where `uri` goes in a connection's view (`f`; undefined: the whole aggregate view): a namespaced URI to
 * its server (the server's view gate judges it); a plain one to the one server of the view that offers
 * it. Several are ambiguous; none of the view's, while some of its servers offer it, is hidden by the
 * view's `resources` globs; none at all is unknown, counted and suggested among what the view lists
 * (`template`: a completion ref, among its templates). A server outside the view is never named.
 */
export function resolveInView(
  catalog: Catalog,
  servers: readonly Upstream[],
  f: ViewFilter | undefined,
  uri: string,
  template: boolean,
): ResourceTarget {
  const route = catalog.resolveResource(uri);
  if (route?.kind === "server" && route.namespaced) return route;
  let owners = route === undefined ? [] : route.kind === "server" ? [route.server] : route.servers;
  if (f !== undefined && owners.length > 0) {
    const seen = owners.filter((s) => f.viewsServer(s));
    const allowed = seen.filter((s) => f.allowsResource(s, uri));
    if (allowed.length === 0 && seen.length > 0) return { kind: "refused", error: f.hidden("resource", uri, seen[0] as string) };
    owners = allowed;
  }
  if (owners.length === 1) return { kind: "server", server: owners[0] as string, uri, namespaced: false };
  if (owners.length > 1) return { kind: "refused", error: ambiguous(uri, owners) };
  // A server's own filter hides it: refused as hidden, unless the view does not show that server at all.
  const hider = template ? undefined : catalog.hiddenBy("resources", uri);
  const hiderConfig = hider === undefined || f?.viewsServer(hider) === false ? undefined : servers.find((h) => h.name === hider)?.config;
  const serverRefusal = hiderConfig === undefined ? undefined : ServerFilters.of(hiderConfig)?.hidden("resources", uri);
  if (serverRefusal !== undefined) return { kind: "refused", error: serverRefusal };
  const listed = template ? viewTemplates(catalog, f).map((e) => e.item.uriTemplate) : viewResources(catalog, f).map((e) => e.item.uri);
  return {
    kind: "unknown",
    error: notFound("MCPD_UNKNOWN_RESOURCE", `No server offers resource ${quoted(uri)}`, uri, listed, template ? TEMPLATES : RESOURCES),
  };
}
