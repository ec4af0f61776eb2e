import type { AuthorizationServer } from "oauth4webapi";
import { isObject, OAuthError, PROTOCOL_DEFAULTS, quote } from "@mcpd/protocol";
import { urlLabel } from "../../url-label.js";
import { errorText } from "../http-wire.js";
import { isSecureEndpoint, oauthFetch, oauthLibrary, type OAuthHttp } from "./oauth-http.js";
import { canonicalResource, checkResource } from "./resource-match.js";

/** Everything discovery learns about where and how to authorize for one server. */
export interface AuthTarget {
  /** The `resource` parameter (RFC 8707) for every authorization and token request. */
  resource: string;
  /** The protected resource metadata's `scopes_supported`, if it has one. */
  scopesSupported?: string[];
  /** The authorization server's metadata (validated by oauth4webapi: its `issuer` is the one asked for). */
  server: AuthorizationServer;
  /** false: no metadata was found and these are the 2025-03-26 default endpoints. */
  discovered: boolean;
}

const PRM = "/.well-known/oauth-protected-resource";

/**
 * Where to look for protected resource metadata (RFC 9728), in the MCP spec's order: the challenge's
 * `resource_metadata` (when https, loopback or the server's origin), the well-known URI with the server's
 * path, the well-known URI at the root; each once.
 */
export function resourceMetadataUrls(serverUrl: URL, challengeUrl?: string): URL[] {
  const out: URL[] = [];
  if (challengeUrl && URL.canParse(challengeUrl, serverUrl.href)) {
    const url = new URL(challengeUrl, serverUrl);
    if (isSecureEndpoint(url) || url.origin === serverUrl.origin) out.push(url);
  }
  const path = serverUrl.pathname.replace(/\/+$/, "");
  if (path !== "") out.push(new URL(`${PRM}${path}`, serverUrl.origin));
  out.push(new URL(PRM, serverUrl.origin));
  return out.filter((u, i) => out.findIndex((v) => v.href === u.href) === i);
}

/**
 * The metadata URLs of an issuer, in the MCP spec's order: with a path, RFC 8414 with the path inserted,
 * OpenID Connect with the path inserted, then appended; without one, RFC 8414 then OpenID Connect.
 */
export function authServerMetadataUrls(issuer: URL): URL[] {
  const path = issuer.pathname.replace(/\/+$/, "");
  const at = (p: string): URL => new URL(p, issuer.origin);
  if (path === "") return [at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration")];
  return [
    at(`/.well-known/oauth-authorization-server${path}`),
    at(`/.well-known/openid-configuration${path}`),
    at(`${path}/.well-known/openid-configuration`),
  ];
}

/**
 * The first document of `urls` (GET, JSON asked for) that `read` accepts (returns), in order; what every
 * other URL answered (`read` throws it) goes to `problems`.
 * @throws `signal.reason`.
 */
async function firstDocument<T>(
  http: OAuthHttp,
  urls: URL[],
  problems: string[],
  signal: AbortSignal | undefined,
  read: (res: Response, url: URL) => Promise<T>,
): Promise<T | undefined> {
  for (const url of urls) {
    try {
      return await read(await oauthFetch(http, url, { headers: { accept: "application/json" }, signal }), url);
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      problems.push(`${urlLabel(url)}: ${errorText(err)}`);
    }
  }
  return undefined;
}

/**
 * The first protected resource metadata document found, or undefined when no URL has one (a 2025-03-26
 * server). A document that is there but malformed (JSON with no `resource` or with lists that are not lists
 * of strings, or anything but a JSON object at the URL the server's challenge named) is a problem, not a
 * reason to fall back to the 2025-03-26 defaults: when no other URL has a good one, discovery fails naming
 * it. (Something else than JSON at a well-known URL nobody named, such as a site's catch-all page, is
 * taken for no document.)
 * @throws OAuthError `MCPD_OAUTH_DISCOVERY_FAILED` when only malformed documents were found; `signal.reason`.
 */
async function resourceMetadata(http: OAuthHttp, serverUrl: URL, named: string | undefined, problems: string[], signal?: AbortSignal) {
  let found = false; // a document was there, usable or not
  const namedHref = named !== undefined && URL.canParse(named, serverUrl.href) ? new URL(named, serverUrl).href : undefined;
  const prm = await firstDocument(http, resourceMetadataUrls(serverUrl, named), problems, signal, async (res, url) => {
    if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
    found ||= url.href === namedHref;
    const doc: unknown = JSON.parse(await res.text());
    found ||= isObject(doc);
    const problem = resourceMetadataProblem(doc);
    if (problem !== undefined || !isObject(doc)) throw new Error(problem);
    const servers = (doc.authorization_servers as string[] | undefined) ?? [];
    return { url, resource: doc.resource as string, servers, scopes: doc.scopes_supported as string[] | undefined };
  });
  if (!prm && found) throw discoveryFailed(serverUrl, "", problems);
  return prm;
}

/** What makes a protected resource metadata document unusable, or undefined when it is usable. */
function resourceMetadataProblem(doc: unknown): string | undefined {
  const isList = (v: unknown): boolean => v === undefined || (Array.isArray(v) && v.every((s) => typeof s === "string"));
  if (!isObject(doc)) return "not a JSON object";
  if (typeof doc.resource !== "string") return 'no "resource"';
  if (!isList(doc.authorization_servers)) return '"authorization_servers" is not a list of URLs';
  if (!isList(doc.scopes_supported)) return '"scopes_supported" is not a list of strings';
  return undefined;
}

/** `MCPD_OAUTH_DISCOVERY_FAILED` for `serverUrl`, with what each URL answered (the last six). */
function discoveryFailed(serverUrl: URL, detail: string, problems: string[]): OAuthError {
  return new OAuthError(
    "MCPD_OAUTH_DISCOVERY_FAILED",
    `no authorization server metadata for ${urlLabel(serverUrl)}${detail}` +
      (problems.length > 0 ? `: ${problems.slice(-6).join("; ")}` : ""),
  );
}

/**
 * The metadata of the authorization server `issuer`, from the first of its metadata URLs that answers
 * with a document oauth4webapi accepts: JSON, within the size bound, and whose `issuer` is exactly
 * `issuer` (RFC 8414 section 3.3: a document naming another issuer is not used).
 */
async function serverMetadata(http: OAuthHttp, issuer: URL, problems: string[], signal?: AbortSignal) {
  const lib = await oauthLibrary();
  return firstDocument(http, authServerMetadataUrls(issuer), problems, signal, async (res) => {
    if (res.status === 404) throw new Error("HTTP 404");
    const copy = res.clone();
    try {
      return await lib.processDiscoveryResponse(issuer, res);
    } catch (err) {
      // Older servers (and the conformance suite 0.1.x) serve a tenant's metadata (`https://h/tenant1`)
      // naming the bare origin as issuer: the same host, so accepted; any other issuer is refused.
      if ((err as { code?: string }).code !== "OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED" || issuer.pathname === "/") throw err;
      return await lib.processDiscoveryResponse(new URL(issuer.origin), copy);
    }
  });
}

/**
 * Discovery as the MCP authorization spec orders it: protected resource metadata (its `resource` must
 * cover the server), then the metadata of the first of its `authorization_servers` that answers. Without
 * resource metadata (2025-03-26): the metadata of the server's origin, else the default endpoints there.
 * @throws OAuthError `MCPD_OAUTH_RESOURCE_MISMATCH`, `MCPD_OAUTH_DISCOVERY_FAILED`; `signal.reason`.
 */
export async function discoverAuthTarget(
  http: OAuthHttp,
  serverUrl: URL,
  challengeUrl?: string,
  signal?: AbortSignal,
): Promise<AuthTarget> {
  const problems: string[] = [];
  const prm = await resourceMetadata(http, serverUrl, challengeUrl, problems, signal);
  if (!prm) {
    const base = new URL(serverUrl.origin);
    const found = await serverMetadata(http, base, problems, signal);
    return { resource: canonicalResource(serverUrl), server: found ?? defaultEndpoints(base), discovered: found !== undefined };
  }
  checkResource(prm.resource, serverUrl);
  for (const raw of prm.servers) {
    if (!URL.canParse(raw)) {
      problems.push(`authorization server ${JSON.stringify(quote(raw, PROTOCOL_DEFAULTS.quotedNameChars))} is not a URL`);
      continue;
    }
    const server = await serverMetadata(http, new URL(raw), problems, signal);
    if (server) return { resource: prm.resource, ...(prm.scopes ? { scopesSupported: prm.scopes } : {}), server, discovered: true };
  }
  const none = prm.servers.length === 0 ? ` (its resource metadata at ${urlLabel(prm.url)} names no authorization server)` : "";
  throw discoveryFailed(serverUrl, none, problems);
}

/** The 2025-03-26 fallback: `/authorize`, `/token` and `/register` at the server's origin, PKCE assumed. */
function defaultEndpoints(base: URL): AuthorizationServer {
  return {
    issuer: base.origin,
    authorization_endpoint: new URL("/authorize", base).href,
    token_endpoint: new URL("/token", base).href,
    registration_endpoint: new URL("/register", base).href,
    code_challenge_methods_supported: ["S256"],
  };
}
