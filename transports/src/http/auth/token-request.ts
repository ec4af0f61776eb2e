import type { AuthorizationServer, TokenEndpointResponse } from "oauth4webapi";
import { McpdError, OAuthError, PROTOCOL_DEFAULTS, quote, type OAuthErrorCode } from "@mcpd/protocol";
import { urlLabel } from "../../url-label.js";
import { errorText } from "../http-wire.js";
import { clientAuthentication, type ClientIdentity } from "./client-identity.js";
import { libraryOptions, oauthLibrary, type OAuthHttp } from "./oauth-http.js";
import type { OAuthGrant, OAuthSettings, OAuthTokens } from "./oauth-provider.js";
import { splitScopes } from "./www-authenticate.js";

/** The errors of a token endpoint that no retry can fix: the grant or the client is gone (RFC 6749 section 5.2). */
export const REFUSALS: ReadonlySet<string> = new Set(["invalid_grant", "invalid_client", "unauthorized_client"]);

/**
 * An oauth4webapi failure as an OAuthError of `code` naming `what`: an OAuth error answer (its `error`
 * and description quoted, `oauthError` set), an authorization response error, or a response oauth4webapi
 * rejected (its reason). mcpd's own errors and `signal` aborts pass unchanged; a network failure is wrapped
 * without `oauthError` (a passing failure).
 */
export function oauthFailure(code: OAuthErrorCode, what: string, err: unknown): Error {
  if (err instanceof McpdError) return err;
  const e = err as { code?: string; error?: string; error_description?: string; status?: number; message?: string };
  if (e.code === "OAUTH_RESPONSE_BODY_ERROR" || e.code === "OAUTH_AUTHORIZATION_RESPONSE_ERROR") {
    const oauthError = quote(String(e.error), PROTOCOL_DEFAULTS.quotedNameChars);
    const description = e.error_description ? quote(e.error_description, PROTOCOL_DEFAULTS.quotedDescriptionChars) : undefined;
    // The user said no (or the server refused the request) in the browser: the redirect carried the error.
    if (e.code === "OAUTH_AUTHORIZATION_RESPONSE_ERROR") {
      return new OAuthError(code, `the authorization was not granted: ${oauthError}${description ? ` (${description})` : ""}`, {
        oauthError,
        cause: err,
      });
    }
    const status = e.status ? `HTTP ${e.status}, ` : "";
    return new OAuthError(code, `${what} refused (${status}${oauthErrorText(String(e.error), e.error_description)})`, {
      oauthError,
      cause: err,
    });
  }
  return new OAuthError(code, `${what} failed: ${errorText(err)}`, { cause: err });
}

/** An OAuth `error` and its description as messages quote them: `invalid_grant: the token was revoked`. */
export function oauthErrorText(error: string, description: string | undefined): string {
  const text = quote(error, PROTOCOL_DEFAULTS.quotedNameChars);
  return description ? `${text}: ${quote(description, PROTOCOL_DEFAULTS.quotedDescriptionChars)}` : text;
}

/** Whether `err` is the authorization server refusing for good (see {@link REFUSALS}). */
export function isRefusal(err: unknown): boolean {
  return err instanceof OAuthError && err.oauthError !== undefined && REFUSALS.has(err.oauthError);
}

/** One token request: the grant, its parameters and what to record with the tokens. */
export interface TokenRequest {
  grant: OAuthGrant | "refresh_token";
  /** authorization_code: the code of the validated callback, the redirect URI and the PKCE verifier. */
  code?: { code: string; redirectUri: string; verifier: string };
  refreshToken?: string;
  /** The `resource` (RFC 8707), sent with every token request. */
  resource: string;
  /** The scopes requested (sent with client_credentials), recorded as granted when the answer does not say. */
  scopes: string[];
}

/** The form parameters of a token request besides the client's: the grant's, and `resource` (RFC 8707). */
function grantParameters(request: TokenRequest): Record<string, string> {
  const { grant, code, refreshToken, resource, scopes } = request;
  if (grant === "refresh_token") return { refresh_token: refreshToken ?? "", resource };
  if (grant === "client_credentials") return { resource, ...(scopes.length > 0 ? { scope: scopes.join(" ") } : {}) };
  return { code: code!.code, redirect_uri: code!.redirectUri, code_verifier: code!.verifier, resource };
}

/**
 * A token request through oauth4webapi (the client authenticated as `identity.method` says, `resource`
 * sent), the answer validated by it and read into {@link OAuthTokens}. A refresh answer without a new
 * refresh token keeps the old one.
 * @throws OAuthError `MCPD_OAUTH_TOKEN_REFUSED` (with `oauthError` for an OAuth error answer); ConfigError.
 */
export async function requestToken(
  http: OAuthHttp,
  server: AuthorizationServer,
  identity: ClientIdentity,
  settings: OAuthSettings,
  request: TokenRequest,
  signal: AbortSignal | undefined,
  now: () => number,
): Promise<OAuthTokens> {
  const lib = await oauthLibrary();
  const { client, auth } = await clientAuthentication(identity, server, settings);
  let answer: TokenEndpointResponse;
  try {
    const res = await lib.genericTokenEndpointRequest(
      server,
      client,
      auth,
      request.grant,
      grantParameters(request),
      libraryOptions(lib, http, signal),
    );
    answer = await lib.processGenericTokenEndpointResponse(server, client, res);
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    throw oauthFailure(
      "MCPD_OAUTH_TOKEN_REFUSED",
      `token request (${request.grant}) to ${urlLabel(new URL(server.token_endpoint ?? server.issuer))}`,
      err,
    );
  }
  const at = now();
  const tokens: OAuthTokens = {
    accessToken: answer.access_token,
    tokenType: answer.token_type,
    obtainedAt: at,
    scopes: typeof answer.scope === "string" ? splitScopes(answer.scope) : request.scopes,
    resource: request.resource,
    issuer: server.issuer,
    tokenEndpoint: server.token_endpoint ?? "",
    grant: request.grant === "client_credentials" ? "client_credentials" : "authorization_code",
    clientAuthMethod: identity.method,
  };
  if (typeof answer.expires_in === "number" && answer.expires_in > 0) tokens.expiresAt = at + answer.expires_in * 1000;
  const refresh = answer.refresh_token ?? request.refreshToken;
  if (refresh !== undefined) tokens.refreshToken = refresh;
  return tokens;
}
