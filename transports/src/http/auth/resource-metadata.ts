import type { JsonObject } from "@mcpd/protocol";
import { firstDocument, isSecureEndpoint, type OAuthHttp } from "./oauth-http.js";

/** A protected resource metadata document (RFC 9728), the parts mcpd uses. */
export interface ResourceMetadata {
  /** Where it was found. */
  url: string;
  /** The resource it describes (checked against the server's URL before use). */
  resource: string;
  /** The authorization servers' issuer URLs, in the server's order of preference. */
  authorizationServers: string[];
  scopesSupported?: string[];
}

const WELL_KNOWN = "/.well-known/oauth-protected-resource";

/**
 * Where to look for a server's protected resource metadata, in the spec's order: the URL its
 * `WWW-Authenticate` challenge named (`resource_metadata`), then the well-known URI with the server's path
 * (`https://h/.well-known/oauth-protected-resource/public/mcp` for `https://h/public/mcp`), then the
 * well-known URI at the root. A challenge URL that is neither https, loopback nor the server's origin is
 * left out.
 */
export function resourceMetadataUrls(serverUrl: URL, challengeUrl?: string): URL[] {
  const out: URL[] = [];
  if (challengeUrl) {
    try {
      const url = new URL(challengeUrl, serverUrl);
      if (isSecureEndpoint(url) || url.origin === serverUrl.origin) out.push(url);
    } catch {
      // Not a URL: the well-known ones remain.
    }
  }
  const path = serverUrl.pathname.replace(/\/+$/, "");
  if (path !== "") out.push(new URL(`${WELL_KNOWN}${path}`, serverUrl.origin));
  out.push(new URL(WELL_KNOWN, serverUrl.origin));
  // The challenge may name one of the well-known URIs itself: fetch each once.
  return out.filter((u, i) => out.findIndex((v) => v.href === u.href) === i);
}

/**
 * Fetches the first protected resource metadata document found at {@link resourceMetadataUrls}.
 * Undefined when none answers with one (a 2025-03-26 server: the caller falls back). `problems` collects
 * what each failed attempt said, for the error that may follow.
 */
export async function fetchResourceMetadata(
  http: OAuthHttp,
  serverUrl: URL,
  challengeUrl: string | undefined,
  problems: string[],
  signal?: AbortSignal,
): Promise<ResourceMetadata | undefined> {
  const read = (doc: JsonObject, url: URL): ResourceMetadata | string => {
    if (typeof doc.resource !== "string") return 'not a protected resource metadata document (no "resource")';
    const servers = Array.isArray(doc.authorization_servers) ? doc.authorization_servers.filter((s) => typeof s === "string") : [];
    const scopes = Array.isArray(doc.scopes_supported) ? doc.scopes_supported.filter((s) => typeof s === "string") : undefined;
    return {
      url: url.href,
      resource: doc.resource,
      authorizationServers: servers as string[],
      ...(scopes ? { scopesSupported: scopes as string[] } : {}),
    };
  };
  return firstDocument(http, resourceMetadataUrls(serverUrl, challengeUrl), read, problems, signal);
}
