/**
 * The aggregate view's namespaced resource URIs: `mcpd://<server>/<the server's own URI>`, the URI (or
 * URI template) left exactly as the server gave it after the first `/` that follows the server name.
 * Server names are `[A-Za-z0-9_-]{1,48}`, so the server part never holds a `/`. The form is a valid URI
 * (authority = the server, path = `/` + the server's URI), and a template keeps working as a template:
 * `mcpd://a/file:///{path}` expands to `mcpd://a/file:///x`, whose server part is `file:///x`.
 */

import { isObject, type JsonObject } from "@mcpd/protocol";

const SCHEME = "mcpd://";

/** The namespaced form of a server's URI or URI template. */
export function namespacedUri(server: string, uri: string): string {
  return `${SCHEME}${server}/${uri}`;
}

/**
 * Splits a namespaced URI into its server and the server's own URI, when `isServer` knows the server
 * (a server of its own that uses `mcpd://` URIs is then still reachable by its plain URIs).
 */
export function parseNamespacedUri(uri: string, isServer: (name: string) => boolean): { server: string; uri: string } | undefined {
  if (!uri.startsWith(SCHEME)) return undefined;
  const slash = uri.indexOf("/", SCHEME.length);
  if (slash <= SCHEME.length) return undefined;
  const server = uri.slice(SCHEME.length, slash);
  return isServer(server) ? { server, uri: uri.slice(slash + 1) } : undefined;
}

/**
 * A resources/read answer for a client that asked by a namespaced URI: every content's `uri` (the server's
 * own) gets the same `mcpd://<server>/` prefix back. Anything not shaped as expected is left as it is.
 */
export function renamespaced(result: JsonObject, prefix: string): JsonObject {
  const contents = result.contents;
  // A copy even so: a rewritten answer is encoded afresh, never passed on as the server wrote it.
  if (!Array.isArray(contents)) return { ...result };
  return { ...result, contents: contents.map((c) => (isObject(c) && typeof c.uri === "string" ? { ...c, uri: `${prefix}${c.uri}` } : c)) };
}
