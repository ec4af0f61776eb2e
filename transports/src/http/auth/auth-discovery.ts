import { OAuthError, PROTOCOL_DEFAULTS, quote } from "@mcpd/protocol";
import { urlLabel } from "../../url-label.js";
import { defaultEndpoints, fetchAuthServerMetadata, type AuthServerMetadata } from "./auth-server-metadata.js";
import { isSecureEndpoint, type OAuthHttp } from "./oauth-http.js";
import { canonicalResource, checkResource } from "./resource-match.js";
import { fetchResourceMetadata } from "./resource-metadata.js";

/** Everything discovery learns about where and how to authorize for one server. */
export interface AuthTarget {
  /** The `resource` parameter (RFC 8707) for every authorization and token request. */
  resource: string;
  /** The protected resource metadata's `scopes_supported`, if it has one. */
  scopesSupported?: string[];
  /** The authorization server. */
  server: AuthServerMetadata;
}

/**
 * Discovery as the MCP authorization spec orders it (2025-11-25, with the 2025-03-26 fallbacks):
 *
 * 1. Protected resource metadata (RFC 9728) from the challenge's `resource_metadata`, else the well-known
 *    URIs (path, then root). Its `resource` must cover the server URL, or discovery stops there.
 * 2. The authorization server's metadata (RFC 8414, then OpenID Connect discovery, with the path
 *    variants), for the first of its `authorization_servers` that answers.
 * 3. Without resource metadata (a 2025-03-26 server): the metadata at the server's base URL
 *    (its origin), else the default endpoints `/authorize`, `/token`, `/register` there.
 *
 * @throws OAuthError `MCPD_OAUTH_RESOURCE_MISMATCH` (nothing was sent to any authorization server),
 *   `MCPD_OAUTH_DISCOVERY_FAILED` (the metadata names no authorization server that answers), and
 *   `signal.reason`.
 */
export async function discoverAuthTarget(
  http: OAuthHttp,
  serverUrl: URL,
  challengeResourceMetadata: string | undefined,
  signal?: AbortSignal,
): Promise<AuthTarget> {
  const problems: string[] = [];
  const prm = await fetchResourceMetadata(http, serverUrl, challengeResourceMetadata, problems, signal);
  if (!prm) {
    const base = new URL(serverUrl.origin);
    const server = (await fetchAuthServerMetadata(http, base, problems, signal)) ?? defaultEndpoints(base);
    return { resource: canonicalResource(serverUrl), server };
  }
  checkResource(prm.resource, serverUrl);
  for (const raw of prm.authorizationServers) {
    let issuer: URL;
    try {
      issuer = new URL(raw);
    } catch {
      problems.push(`authorization server ${JSON.stringify(quote(raw, PROTOCOL_DEFAULTS.quotedNameChars))} is not a URL`);
      continue;
    }
    if (!isSecureEndpoint(issuer)) {
      problems.push(`authorization server ${urlLabel(issuer)} is neither https nor on this machine`);
      continue;
    }
    const server = await fetchAuthServerMetadata(http, issuer, problems, signal);
    if (server) {
      return { resource: prm.resource, ...(prm.scopesSupported ? { scopesSupported: prm.scopesSupported } : {}), server };
    }
  }
  throw new OAuthError(
    "MCPD_OAUTH_DISCOVERY_FAILED",
    `no authorization server metadata for ${urlLabel(serverUrl)}` +
      (prm.authorizationServers.length === 0 ? ` (its resource metadata at ${prm.url} names no authorization server)` : "") +
      (problems.length > 0 ? `: ${problems.slice(-6).join("; ")}` : ""),
  );
}
