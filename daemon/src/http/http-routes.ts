/** What a request path names on the HTTP front end. */
export type Route =
  | { kind: "streamable"; path: string; server: string | undefined }
  | { kind: "legacy-stream"; server: string | undefined; messagesPath: string }
  | { kind: "legacy-post"; server: string | undefined; path: string };

/**
 * Maps a request path to an endpoint: `/mcp` (the aggregate view) and `/servers/<name>/mcp` (one server's
 * transparent view) for Streamable HTTP; `/sse` + `/messages` and `/servers/<name>/sse` +
 * `/servers/<name>/messages` for the legacy HTTP+SSE transport. Undefined for anything else.
 */
export function routeOf(pathname: string): Route | undefined {
  const p = pathname.length > 1 && pathname.endsWith("/") ? pathname.slice(0, -1) : pathname;
  let prefix = "";
  let server: string | undefined;
  let last = p;
  const m = /^\/servers\/([^/]+)(\/[^/]+)$/.exec(p);
  if (m) {
    try {
      server = decodeURIComponent(m[1] as string);
    } catch {
      return undefined;
    }
    prefix = `/servers/${m[1]}`;
    last = m[2] as string;
  }
  switch (last) {
    case "/mcp":
      return { kind: "streamable", path: `${prefix}/mcp`, server };
    case "/sse":
      return { kind: "legacy-stream", server, messagesPath: `${prefix}/messages` };
    case "/messages":
      return { kind: "legacy-post", server, path: `${prefix}/messages` };
    default:
      return undefined;
  }
}
