/** What a request path names on the HTTP front end. */
export type Route =
  | { kind: "streamable"; path: string; view: ViewChoice }
  | { kind: "legacy-stream"; view: ViewChoice; messagesPath: string }
  | { kind: "legacy-post"; view: ViewChoice; path: string }
  | { kind: "metrics"; view: ViewChoice };

/** The view an endpoint serves: one server's (`/servers/<name>/...`), a profile's (`/profiles/<name>/...`), or the aggregate view. */
export interface ViewChoice {
  server?: string;
  profile?: string;
  /** `on` for a `/search/` endpoint (`/search/mcp`, `/profiles/<name>/search/mcp`): tool search (docs/tool-search.md). */
  toolSearch?: "on";
}

/**
 * Maps a request path to an endpoint: `/mcp` (the aggregate view), `/servers/<name>/mcp` (one server's
 * transparent view) and `/profiles/<name>/mcp` (the aggregate view through a profile of the config) for
 * Streamable HTTP; `sse` + `messages` in place of `mcp` for the legacy HTTP+SSE transport. `/search/` before
 * the last segment of an aggregate view's endpoint (`/search/mcp`, `/profiles/<name>/search/mcp`) serves it
 * in tool search's mode. `/metrics`: the daemon's metrics in the Prometheus text format (main token only).
 * Undefined for anything else.
 */
export function routeOf(pathname: string): Route | undefined {
  const p = pathname.length > 1 && pathname.endsWith("/") ? pathname.slice(0, -1) : pathname;
  if (p === "/metrics") return { kind: "metrics", view: {} };
  let prefix = "";
  const view: ViewChoice = {};
  let last = p;
  const m = /^\/(servers|profiles)\/([^/]+)((?:\/search)?\/[^/]+)$/.exec(p);
  if (m) {
    let name: string;
    try {
      name = decodeURIComponent(m[2] as string);
    } catch {
      return undefined;
    }
    if (m[1] === "servers") view.server = name;
    else view.profile = name;
    prefix = `/${m[1]}/${m[2]}`;
    last = m[3] as string;
  }
  if (last.startsWith("/search/")) {
    if (view.server !== undefined) return undefined;
    view.toolSearch = "on";
    prefix = `${prefix}/search`;
    last = last.slice("/search".length);
  }
  switch (last) {
    case "/mcp":
      return { kind: "streamable", path: `${prefix}/mcp`, view };
    case "/sse":
      return { kind: "legacy-stream", view, messagesPath: `${prefix}/messages` };
    case "/messages":
      return { kind: "legacy-post", view, path: `${prefix}/messages` };
    default:
      return undefined;
  }
}
