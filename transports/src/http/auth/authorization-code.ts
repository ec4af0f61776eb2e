import type { AuthorizationServer } from "oauth4webapi";
import { OAuthError } from "@mcpd/protocol";
import { urlLabel } from "../../url-label.js";
import type { AuthTarget } from "./discovery.js";
import { knownClient, type ClientIdentity } from "./client-identity.js";
import { registerClient } from "./client-registration.js";
import { LoopbackRedirect } from "./loopback-redirect.js";
import { isSecureEndpoint, oauthLibrary } from "./oauth-http.js";
import type { AuthorizationContext, OAuthTokens } from "./oauth-provider.js";
import type { RenewalContext } from "./token-renewal.js";
import { oauthFailure, requestToken } from "./token-request.js";

/** What one authorization code grant needs. */
export interface CodeGrantOptions extends RenewalContext {
  target: AuthTarget;
  /** The scopes to request (empty: the `scope` parameter is left out). */
  scopes: string[];
  context: AuthorizationContext;
  /** How long to wait for the browser's redirect, in ms. */
  timeoutMs: number;
}

/** The loopback port to ask for: the configured one, else the one a stored registration names, else any. */
function preferredPort(configured: number | undefined, identity: ClientIdentity | undefined): number {
  if (configured !== undefined) return configured;
  const uri = identity?.registration?.redirectUris.find((u) => URL.canParse(u));
  const port = uri ? Number(new URL(uri).port) : 0;
  return Number.isInteger(port) && port > 0 ? port : 0;
}

/**
 * The authorization code grant with PKCE (S256) and a loopback redirect (RFC 8252), mcpd's part around
 * oauth4webapi's: the loopback listener, the client identity (configured, Client ID Metadata Document,
 * stored registration, else a new registration at this issuer), the browser through `provider.redirect`.
 * oauth4webapi makes the PKCE pair and `state`, validates the authorization response (`state`, `error`,
 * and `iss` per RFC 9207: a wrong `iss`, or none where the server advertises it, is refused), exchanges
 * the code and validates the answer. A registration the token endpoint no longer knows
 * (`invalid_client`) is forgotten, so the next attempt registers again.
 * @throws OAuthError (`MCPD_OAUTH_UNSUPPORTED`, `MCPD_OAUTH_REGISTRATION_FAILED`,
 *   `MCPD_OAUTH_AUTHORIZATION_FAILED`, `MCPD_OAUTH_TOKEN_REFUSED`), what `provider.redirect` throws.
 */
export async function authorizationCodeGrant(options: CodeGrantOptions): Promise<OAuthTokens> {
  const { http, provider, target, scopes, signal } = options;
  const server = target.server;
  const endpoint = authorizationEndpoint(server, target.discovered);
  const lib = await oauthLibrary();
  let identity = await knownClient(provider.settings, provider, server);
  const state = lib.generateRandomState();
  const loopback = new LoopbackRedirect(state);
  await loopback.listen(preferredPort(provider.settings.redirectPort, identity), provider.settings.redirectPort === undefined);
  try {
    if (!identity) {
      identity = await registerClient(http, server, provider.settings, loopback.redirectUri, signal);
      await provider.saveRegistration(server.issuer, identity.registration);
    }
    const verifier = lib.generateRandomCodeVerifier();
    const url = new URL(endpoint);
    url.searchParams.set("response_type", "code");
    url.searchParams.set("client_id", identity.clientId);
    url.searchParams.set("redirect_uri", loopback.redirectUri);
    url.searchParams.set("code_challenge", await lib.calculatePKCECodeChallenge(verifier));
    url.searchParams.set("code_challenge_method", "S256");
    url.searchParams.set("state", state);
    if (scopes.length > 0) url.searchParams.set("scope", scopes.join(" "));
    url.searchParams.set("resource", target.resource);
    await provider.redirect(url, { ...options.context, scopes });
    const returned = await loopback.wait(options.timeoutMs, signal);
    let code: string | null;
    try {
      code = lib.validateAuthResponse(server, { client_id: identity.clientId }, returned, state).get("code");
    } catch (err) {
      throw oauthFailure("MCPD_OAUTH_AUTHORIZATION_FAILED", `the authorization response from ${server.issuer}`, err);
    }
    if (!code) throw new OAuthError("MCPD_OAUTH_AUTHORIZATION_FAILED", `the authorization response from ${server.issuer} has no code`);
    return await requestToken(
      http,
      server,
      identity,
      provider.settings,
      { grant: "authorization_code", code: { code, redirectUri: loopback.redirectUri, verifier }, resource: target.resource, scopes },
      signal,
      options.clock.now,
    ).catch(async (err: unknown) => {
      if (identity?.source === "registered" && err instanceof OAuthError && err.oauthError === "invalid_client")
        await provider.saveRegistration(server.issuer, undefined);
      throw err;
    });
  } finally {
    loopback.close();
  }
}

/**
 * The server's authorization endpoint, once it is known to take this grant with S256 PKCE.
 * @throws OAuthError `MCPD_OAUTH_UNSUPPORTED` when it offers no S256 PKCE or no authorization code grant,
 *   or names no authorization endpoint, or one that is neither https nor on this machine.
 */
function authorizationEndpoint(server: AuthorizationServer, discovered: boolean): URL {
  const methods = server.code_challenge_methods_supported;
  if (discovered && !(methods ?? []).includes("S256")) {
    throw new OAuthError(
      "MCPD_OAUTH_UNSUPPORTED",
      `the authorization server ${server.issuer} does not offer PKCE with S256 (code_challenge_methods_supported: ` +
        `${JSON.stringify(methods ?? null)}); refusing to authorize without it`,
    );
  }
  const grants = server.grant_types_supported;
  if (grants !== undefined && !grants.includes("authorization_code")) {
    throw new OAuthError(
      "MCPD_OAUTH_UNSUPPORTED",
      `the authorization server ${server.issuer} offers no authorization_code grant (grant_types_supported: ${grants.join(", ")}); ` +
        `for machine-to-machine access set "auth": {"grant": "client_credentials", ...}`,
    );
  }
  const raw = server.authorization_endpoint;
  const endpoint = raw && URL.canParse(raw) ? new URL(raw) : undefined;
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
