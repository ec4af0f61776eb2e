import { createHash } from "node:crypto";

/** Names MCP clients accept for tools and prompts (several enforce it). */
export const EXPOSED_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const MAX = 64;
const SEP = "__";

function shortHash(server: string, name: string): string {
  return createHash("sha256").update(`${server}\0${name}`).digest("hex").slice(0, 6);
}

/**
 * The name an aggregate-view client sees for a server's tool or prompt: `<server>__<name>`.
 * Characters outside `[A-Za-z0-9_-]` become `_`; when that changed anything, the result is longer than
 * 64 characters, or the server's name holds the separator `__` (server `a__b`'s tool `c` would be server
 * `a`'s tool `b__c`), it is cut and suffixed with `_` + 6 hex digits of SHA-256(`server\0name`), so the
 * alias is stable across restarts and two different names (`s3` vs `s_3`, `a.b` vs `a_b`) never collide.
 * Routing always goes through a lookup table, never by parsing this name.
 */
export function exposedName(server: string, name: string): string {
  const raw = `${server}${SEP}${name}`;
  const clean = raw.replace(/[^A-Za-z0-9_-]/g, "_");
  if (clean === raw && clean.length <= MAX && !server.includes(SEP)) return clean;
  const suffix = `_${shortHash(server, name)}`;
  return clean.slice(0, MAX - suffix.length) + suffix;
}
