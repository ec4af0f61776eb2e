/**
 * The aggregate view's namespaced resource URIs: `mcpd://<server>/<the server's own URI>`, the URI (or
 * URI template) left exactly as the server gave it after the first `/` that follows the server name.
 * Server names are `[A-Za-z0-9_-]{1,48}`, so the server part never holds a `/`. The form is a valid URI
 * (authority = the server, path = `/` + the server's URI), and a template keeps working as a template:
 * `mcpd://a/file:///{path}` expands to `mcpd://a/file:///x`, whose server part is `file:///x`.
 *
 * MCP Apps' `ui://` URIs are namespaced inside their scheme instead (`ui://<server>/<rest>`), since hosts
 * refuse any other scheme for an app's view.
 */

import { isObject, type JsonObject } from "@mcpd/protocol";

const SCHEME = "mcpd://";
/** MCP Apps' scheme: hosts render only `ui://` resources, so the aggregate view namespaces them inside it. */
const UI = "ui://";

/** Whether `uri` is an MCP Apps resource (`ui://`). */
export function isUiUri(uri: string): boolean {
  return uri.startsWith(UI);
}

/** A server's `ui://` URI as the aggregate view shows it: `ui://<server>/<the rest of the server's URI>`. */
export function uiNamespacedUri(server: string, uri: string): string {
  return `${UI}${server}/${uri.slice(UI.length)}`;
}

/**
 * The form a server's URI (or template) takes in the aggregate view: `ui://` ones always namespaced
 * inside the scheme (so a URI never changes when another server is added); others namespaced as
 * `mcpd://<server>/<uri>` only when several servers of the view list it (`shared`).
 */
export function viewedUri(server: string, uri: string, shared: boolean): string {
  if (isUiUri(uri)) return uiNamespacedUri(server, uri);
  return shared ? namespacedUri(server, uri) : uri;
}

/** The namespaced form of a server's URI or URI template. */
export function namespacedUri(server: string, uri: string): string {
  return `${SCHEME}${server}/${uri}`;
}

/**
 * Splits a namespaced URI into its server and the server's own URI, when `isServer` knows the server
 * (a server of its own that uses `mcpd://` URIs is then still reachable by its plain URIs).
 */
export function parseNamespacedUri(uri: string, isServer: (name: string) => boolean): { server: string; uri: string } | undefined {
  const ui = isUiUri(uri);
  if (!ui && !uri.startsWith(SCHEME)) return undefined;
  const start = ui ? UI.length : SCHEME.length;
  const slash = uri.indexOf("/", start);
  if (slash <= start) return undefined;
  const server = uri.slice(start, slash);
  if (!isServer(server)) return undefined;
  return { server, uri: ui ? `${UI}${uri.slice(slash + 1)}` : uri.slice(slash + 1) };
}

/**
 * A resources/read answer for a client that asked by a namespaced URI (`clientUri`, the server's own being
 * `ownUri`): every content's `uri` (the server's own) gets the same namespace back (`mcpd://<server>/`, or
 * `ui://<server>/` inside the scheme). Anything not shaped as expected is left as it is.
 */
export function renamespaced(result: JsonObject, clientUri: string, ownUri: string): JsonObject {
  const contents = result.contents;
  // A copy even so: a rewritten answer is encoded afresh, never passed on as the server wrote it.
  if (!Array.isArray(contents)) return { ...result };
  const ui = isUiUri(clientUri) && isUiUri(ownUri);
  const prefix = ui
    ? clientUri.slice(0, clientUri.length - ownUri.length + UI.length)
    : clientUri.slice(0, clientUri.length - ownUri.length);
  const form = (uri: string): string => (!ui ? `${prefix}${uri}` : isUiUri(uri) ? `${prefix}${uri.slice(UI.length)}` : uri);
  return { ...result, contents: contents.map((c) => (isObject(c) && typeof c.uri === "string" ? { ...c, uri: form(c.uri) } : c)) };
}
