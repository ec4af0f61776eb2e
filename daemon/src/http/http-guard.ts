import { createHash, timingSafeEqual } from "node:crypto";

/** Host names a loopback front end answers to: a page elsewhere that resolves its own name to 127.0.0.1 does not. */
export const LOOPBACK_NAMES: readonly string[] = ["localhost", "127.0.0.1", "[::1]", "::1"];

/** Whether `address` (an IP literal or `localhost`) names this machine's loopback interface only. */
export function isLoopbackAddress(address: string): boolean {
  const a = address.toLowerCase();
  return a === "localhost" || a === "::1" || a === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a);
}

/** The host name of a `Host` header value (`name`, `name:port`, `[v6]`, `[v6]:port`), lower-cased; undefined when malformed. */
export function hostOf(header: string): string | undefined {
  const h = header.trim().toLowerCase();
  if (h === "") return undefined;
  if (h.startsWith("[")) {
    const end = h.indexOf("]");
    if (end < 0) return undefined;
    const rest = h.slice(end + 1);
    if (rest !== "" && !/^:\d{1,5}$/.test(rest)) return undefined;
    return h.slice(0, end + 1);
  }
  const colon = h.indexOf(":");
  if (colon < 0) return h;
  if (!/^\d{1,5}$/.test(h.slice(colon + 1))) return undefined;
  return h.slice(0, colon);
}

/**
 * Checks the `Host` and `Origin` of a request against the names this front end answers to (the DNS
 * rebinding defence: a browser sends the attacker's name in both, whatever address it resolved).
 * `allowed`: lower-case host names (`localhost`, `127.0.0.1`, `[::1]`, and any configured extras).
 * @returns undefined when both are acceptable (no `Origin` is fine: only browsers send one), else why not.
 */
export function checkHostAndOrigin(host: string | undefined, origin: string | undefined, allowed: ReadonlySet<string>): string | undefined {
  if (host === undefined) return "the request has no Host header";
  const name = hostOf(host);
  if (name === undefined || !allowed.has(name)) return `Host "${host.slice(0, 100)}" is not one this server answers to`;
  if (origin === undefined) return undefined;
  let originHost: string;
  try {
    const url = new URL(origin);
    if (url.protocol !== "http:" && url.protocol !== "https:") return `Origin "${origin.slice(0, 100)}" is not allowed`;
    originHost = url.hostname.toLowerCase();
  } catch {
    return `Origin "${origin.slice(0, 100)}" is not allowed`;
  }
  if (!allowed.has(originHost)) return `Origin "${origin.slice(0, 100)}" is not allowed`;
  return undefined;
}

/** The SHA-256 digest a token is compared by (computed once per token, not per request). */
export function tokenDigest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** The {@link tokenDigest} of the token an `Authorization: Bearer <token>` header carries; undefined without one. */
export function bearerDigest(header: string | undefined): Buffer | undefined {
  if (header === undefined) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? tokenDigest(m[1] as string) : undefined;
}

/**
 * Whether `presented` (a {@link bearerDigest}) is `expected` (a token's {@link tokenDigest}): compared in
 * constant time over digests, so neither the length nor a prefix of the token leaks through timing.
 */
export function digestMatches(presented: Buffer | undefined, expected: Buffer): boolean {
  return presented !== undefined && presented.length === expected.length && timingSafeEqual(presented, expected);
}

/** Whether an `Authorization` header carries `Bearer <token>`, where `expected` is the token's {@link tokenDigest}. */
export function bearerMatches(header: string | undefined, expected: Buffer): boolean {
  return digestMatches(bearerDigest(header), expected);
}
