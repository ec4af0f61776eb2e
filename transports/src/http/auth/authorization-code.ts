import { OAuthError, PROTOCOL_DEFAULTS, quote } from "@mcpd/protocol";
import { urlLabel } from "../../url-label.js";
import type { AuthTarget } from "./auth-discovery.js";
import type { AuthServerMetadata } from "./auth-server-metadata.js";
import { registerClient } from "./client-registration.js";
import type { ClientIdentity } from "./client-authentication.js";
import { knownClient, registeredIdentity } from "./client-identity.js";
import { LoopbackRedirect } from "./loopback-redirect.js";
import { isSecureEndpoint, type OAuthHttp } from "./oauth-http.js";
import type { AuthorizationContext, OAuthProvider, OAuthTokens } from "./oauth-provider.js";
import { createPkce, randomState } from "./pkce.js";
import { requestToken } from "./token-endpoint.js";

/** What one authorization code grant needs. */
export interface CodeGrantOptions {
  http: OAuthHttp;
  provider: OAuthProvider;
  target: AuthTarget;
  /** The scopes to request (empty: the `scope` parameter is left out). */
  scopes: string[];
  context: AuthorizationContext;
  /** How long to wait for the browser's redirect, in ms. */
  timeoutMs: number;
  signal?: AbortSignal;
}

/** The loopback port to ask for: the configured one, else the one a stored registration names, else any. */
function preferredPort(configured: number | undefined, redirectUris: readonly string[] | undefined): number {
  if (configured !== undefined) return configured;
  for (const uri of redirectUris ?? []) {
    try {
      const port = Number(new URL(uri).port);
      if (Number.isInteger(port) && port > 0) return port;
    } catch {
      // not a URL: any port then
    }
  }
  return 0;
}

/**
 * The authorization code grant with PKCE (S256) and a loopback redirect (RFC 8252):
 *
 * 1. refuses a server whose metadata offers no S256 PKCE, or has no (secure) authorization endpoint;
 * 2. listens on `http://127.0.0.1:<port>/callback`;
 * 3. takes the client identity ({@link knownClient}), or registers one with that redirect URI;
 * 4. sends the user to the authorization URL (`response_type=code`, `client_id`, `redirect_uri`,
 *    `code_challenge`, `state`, `scope` when any, `resource`) through `provider.redirect`;
 * 5. waits for the redirect with the same `state`, and exchanges the code (with the verifier and the same
 *    `resource`) at the token endpoint.
 *
 * A registration the token endpoint no longer knows (`invalid_client`) is forgotten, so the next attempt
 * registers again.
 * @throws OAuthError (`MCPD_OAUTH_UNSUPPORTED`, `MCPD_OAUTH_REGISTRATION_FAILED`,
 *   `MCPD_OAUTH_AUTHORIZATION_FAILED`, `MCPD_OAUTH_TOKEN_REFUSED`), what `provider.redirect` throws,
 *   ConfigError for unusable client credentials.
 */
export async function authorizationCodeGrant(options: CodeGrantOptions): Promise<OAuthTokens> {
  const { http, provider, target, scopes, context, signal } = options;
  const server = target.server;
  const settings = provider.settings;
  const endpoint = authorizationEndpoint(server);
  let known = await knownClient(settings, provider, server);
  const state = randomState();
  const loopback = new LoopbackRedirect(state);
  await loopback.listen(preferredPort(settings.redirectPort, known?.registration?.redirectUris), settings.redirectPort === undefined);
  try {
    if (!known) {
      const registration = await registerClient(http, server, settings, loopback.redirectUri, signal);
      await provider.saveRegistration(registration);
      known = { identity: registeredIdentity(registration, server), registration };
    }
    const pkce = createPkce();
    const url = new URL(endpoint);
    url.searchParams.set("response_type", "code");
    url.searchParams.set("client_id", known.identity.clientId);
    url.searchParams.set("redirect_uri", loopback.redirectUri);
    url.searchParams.set("code_challenge", pkce.challenge);
    url.searchParams.set("code_challenge_method", pkce.method);
    url.searchParams.set("state", state);
    if (scopes.length > 0) url.searchParams.set("scope", scopes.join(" "));
    url.searchParams.set("resource", target.resource);
    await provider.redirect(url, { ...context, scopes });
    const response = await loopback.wait(options.timeoutMs, signal);
    // RFC 9207: a response naming another issuer was meant for another authorization server (mix-up).
    if (response.iss !== undefined && server.discovered && response.iss !== server.issuer) {
      throw new OAuthError(
        "MCPD_OAUTH_AUTHORIZATION_FAILED",
        `the authorization response names issuer ${JSON.stringify(quote(response.iss, PROTOCOL_DEFAULTS.quotedTextChars))}, not ${server.issuer}`,
      );
    }
    return await exchangeCode(options, known.identity, response.code, loopback.redirectUri, pkce.verifier);
  } finally {
    loopback.close();
  }
}

/**
 * The server's authorization endpoint, once it is known to take this grant with S256 PKCE.
 * @throws OAuthError `MCPD_OAUTH_UNSUPPORTED` when it offers no S256 PKCE or no authorization code grant,
 *   or names no authorization endpoint, or one that is neither https nor on this machine.
 */
function authorizationEndpoint(server: AuthServerMetadata): URL {
  if (server.discovered && !(server.codeChallengeMethods ?? []).includes("S256")) {
    throw new OAuthError(
      "MCPD_OAUTH_UNSUPPORTED",
      `the authorization server ${server.issuer} does not offer PKCE with S256 (code_challenge_methods_supported: ` +
        `${JSON.stringify(server.codeChallengeMethods ?? null)}); refusing to authorize without it`,
    );
  }
  if (server.grantTypes !== undefined && !server.grantTypes.includes("authorization_code")) {
    throw new OAuthError(
      "MCPD_OAUTH_UNSUPPORTED",
      `the authorization server ${server.issuer} offers no authorization_code grant (grant_types_supported: ${server.grantTypes.join(", ")}); ` +
        `for machine-to-machine access set "auth": {"grant": "client_credentials", ...}`,
    );
  }
  const endpoint = server.authorizationEndpoint ? new URL(server.authorizationEndpoint) : undefined;
  if (!endpoint || !isSecureEndpoint(endpoint)) {
    throw new OAuthError(
      "MCPD_OAUTH_UNSUPPORTED",
      endpoint
        ? `authorization endpoint ${urlLabel(endpoint)} is neither https nor on this machine`
        : `the authorization server ${server.issuer} names no authorization endpoint`,
    );
  }
  return endpoint;
}

/**
 * The code exchanged at the token endpoint, with the verifier and the same `resource`. A registration
 * the endpoint no longer knows (`invalid_client`) is forgotten.
 */
async function exchangeCode(
  options: CodeGrantOptions,
  identity: ClientIdentity,
  code: string,
  redirectUri: string,
  verifier: string,
): Promise<OAuthTokens> {
  const { http, provider, target, scopes, signal } = options;
  try {
    const tokens = await requestToken(
      http,
      target.server,
      identity,
      provider.settings,
      {
        fields: { grant_type: "authorization_code", code, redirect_uri: redirectUri, code_verifier: verifier },
        resource: target.resource,
        scopes,
        grant: "authorization_code",
      },
      signal,
    );
    return { ...tokens, clientAuthMethod: identity.authMethod };
  } catch (err) {
    if (identity.source === "registered" && err instanceof OAuthError && err.oauthError === "invalid_client") {
      await provider.saveRegistration(undefined);
    }
    throw err;
  }
}
