import type { HttpTokenScope } from "@mcpd/protocol";
import type { Route } from "./http-routes.js";

/**
 * Whether a scoped token may use `route`: only the endpoints of its own profile (`/profiles/<name>/mcp`,
 * `/sse`, `/messages`) or its own server (`/servers/<name>/...`). Deny by default: anything else (the
 * aggregate view, another profile or server, a path that is no endpoint, any path added later) is not
 * its to open unless a rule here says so.
 */
export function scopeAllows(scope: HttpTokenScope, route: Route | undefined): boolean {
  // The daemon's metrics describe every server and client: the main token's alone.
  if (route === undefined || route.kind === "metrics") return false;
  const { server, profile } = route.view;
  if (scope.kind === "profile") return server === undefined && profile === scope.name;
  return profile === undefined && server === scope.name;
}

/** The endpoints a scope opens, for messages: `/profiles/<name>/mcp` (and `/sse`). */
export function scopeEndpoint(scope: HttpTokenScope, last: "mcp" | "sse" = "mcp"): string {
  return `/${scope.kind === "profile" ? "profiles" : "servers"}/${encodeURIComponent(scope.name)}/${last}`;
}

/** `profile "coding"`, `server "github"`. */
export function describeScope(scope: HttpTokenScope): string {
  return `${scope.kind} ${JSON.stringify(scope.name)}`;
}
