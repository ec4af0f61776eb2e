import { OAuthError } from "@mcpd/protocol";
import type { AuthTarget } from "./auth-discovery.js";
import { knownClient } from "./client-identity.js";
import type { OAuthHttp } from "./oauth-http.js";
import type { OAuthProvider, OAuthTokens } from "./oauth-provider.js";
import { requestToken } from "./token-endpoint.js";

/**
 * The client credentials grant (OAuth 2.1 section 4.2; MCP's machine-to-machine extension): the client
 * acts on its own behalf, authenticated with its secret (client_secret_basic / client_secret_post) or a
 * signed assertion (private_key_jwt), and no user is involved.
 * @throws OAuthError (`MCPD_OAUTH_REGISTRATION_FAILED` without a configured client id,
 *   `MCPD_OAUTH_UNSUPPORTED` when the server does not offer the grant, `MCPD_OAUTH_TOKEN_REFUSED`),
 *   ConfigError for an unusable key.
 */
export async function clientCredentialsGrant(
  http: OAuthHttp,
  provider: OAuthProvider,
  target: AuthTarget,
  scopes: string[],
  signal?: AbortSignal,
): Promise<OAuthTokens> {
  const settings = provider.settings;
  const server = target.server;
  if (settings.clientId === undefined || (settings.clientSecret === undefined && settings.privateKey === undefined)) {
    throw new OAuthError(
      "MCPD_OAUTH_REGISTRATION_FAILED",
      `the client_credentials grant needs a configured "clientId" with a "clientSecret" or a "privateKey"`,
    );
  }
  if (server.grantTypes !== undefined && !server.grantTypes.includes("client_credentials")) {
    throw new OAuthError(
      "MCPD_OAUTH_UNSUPPORTED",
      `the authorization server ${server.issuer} offers no client_credentials grant (grant_types_supported: ${server.grantTypes.join(", ")})`,
    );
  }
  const known = await knownClient(settings, provider, server);
  const identity = known!.identity;
  const tokens = await requestToken(
    http,
    server,
    identity,
    settings,
    {
      fields: { grant_type: "client_credentials", ...(scopes.length > 0 ? { scope: scopes.join(" ") } : {}) },
      resource: target.resource,
      scopes,
      grant: "client_credentials",
    },
    signal,
  );
  return { ...tokens, clientAuthMethod: identity.authMethod };
}
