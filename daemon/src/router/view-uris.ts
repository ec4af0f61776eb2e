/**
 * The aggregate view's form of a server's resource URI wherever it appears, so that what the view does to
 * a URI in resources/list it does alike in a tool's `_meta.ui.resourceUri` (and `_meta["ui/resourceUri"]`),
 * in the resource links and embedded resources of answers, and in reads and subscriptions (which map it
 * back): `ui://` URIs always as `ui://<server>/<rest>`, a URI several servers of the view list as
 * `mcpd://<server>/<uri>`, any other as it is. A server's view (transparent) changes no URI.
 */
import type { JsonObject, Resource } from "@mcpd/protocol";
import { withResultUris } from "./app-meta.js";
import type { Catalog, ExposedResource } from "./catalog.js";
import { isUiUri, uiNamespacedUri } from "./resource-uris.js";
import type { ViewFilter } from "./view-filter.js";
import { viewResources } from "./view-resources.js";

/** Per listing of a view: `<server>\0<own URI>` -> its listed form, for the URIs the view lists otherwise than as they are. */
const indexes = new WeakMap<readonly ExposedResource<Resource>[], Map<string, string>>();

/** How a server's URI reads in the aggregate view as `f` (undefined: nothing narrows it) shows it. */
export function viewUriForm(catalog: Catalog, f: ViewFilter | undefined): (server: string, uri: string) => string {
  const listed = viewResources(catalog, f);
  let index = indexes.get(listed);
  if (index === undefined) {
    index = new Map();
    for (const e of listed) if (e.item.uri !== e.own) index.set(`${e.server}\0${e.own}`, e.item.uri);
    indexes.set(listed, index);
  }
  const known = index;
  return (server, uri) => (isUiUri(uri) ? uiNamespacedUri(server, uri) : (known.get(`${server}\0${uri}`) ?? uri));
}

/**
 * How an answer of `server` to `method` reaches an aggregate-view client: a tools/call or prompts/get answer
 * with its URIs in the view's form (after `inner`, the filters' own rewrite, if any); others by `inner`.
 */
export function aggregateAnswer(
  catalog: Catalog,
  f: ViewFilter | undefined,
  server: string,
  method: string,
  inner: ((result: JsonObject) => JsonObject) | undefined,
): ((result: JsonObject) => JsonObject) | undefined {
  if (method !== "tools/call" && method !== "prompts/get") return inner;
  return (result) => {
    const form = viewUriForm(catalog, f);
    return withResultUris(inner ? inner(result) : result, (uri) => form(server, uri));
  };
}
