import type { JsonObject } from "@mcpd/protocol";
import type { Upstream } from "./upstream-port.js";

/** mcpd's own answer to a server's `roots/list` that no client can take: the server's configured `roots`, copied. */
export function configuredRoots(handle: Pick<Upstream, "config">): JsonObject {
  return { roots: handle.config.roots.map((r) => ({ ...r })) };
}
