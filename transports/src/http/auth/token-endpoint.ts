import { OAuthError, PROTOCOL_DEFAULTS, quote } from "@mcpd/protocol";
import { urlLabel } from "../../url-label.js";
import { errorText } from "../http-wire.js";
import type { AuthServerMetadata } from "./auth-server-metadata.js";
import { clientAuthentication, type ClientIdentity } from "./client-authentication.js";
import { formBody, isSecureEndpoint, oauthRequest, type OAuthHttp, type OAuthResponse } from "./oauth-http.js";
import type { OAuthGrant, OAuthSettings, OAuthTokens } from "./oauth-provider.js";
import { splitScopes } from "./www-authenticate.js";

/** One token request: the grant's fields (grant_type and the rest), and what to record with the tokens. */
export interface TokenRequest {
  fields: Record<string, string | undefined>;
  /** The `resource` (RFC 8707), sent with every token request. */
  resource: string;
  /** The scopes requested, recorded as granted when the answer does not say. */
  scopes: string[];
  grant: OAuthGrant;
  /** A refresh token to keep when the answer brings no new one (a server that does not rotate them). */
  previousRefreshToken?: string;
}

/**
 * POSTs a token request (form-encoded, the client authenticated as its method says, `resource` included)
 * and reads the answer into {@link OAuthTokens}. Only an error answer's `error` and `error_description`
 * ever reach a message: a success body holds the tokens.
 * @throws OAuthError `MCPD_OAUTH_TOKEN_REFUSED` (with `oauthError`, e.g. `invalid_grant`, when the server
 *   gave one) for a refusal, a network failure or an answer without an access token; ConfigError when the
 *   client's method needs a secret or key that is not configured; `signal.reason`.
 */
export async function requestToken(
  http: OAuthHttp,
  server: AuthServerMetadata,
  client: ClientIdentity,
  settings: OAuthSettings,
  request: TokenRequest,
  signal?: AbortSignal,
): Promise<OAuthTokens> {
  const endpoint = new URL(server.tokenEndpoint);
  if (!isSecureEndpoint(endpoint)) {
    throw new OAuthError("MCPD_OAUTH_TOKEN_REFUSED", `token endpoint ${urlLabel(endpoint)} is neither https nor on this machine`);
  }
  const auth = clientAuthentication(client, server, settings);
  const body = formBody({ ...request.fields, resource: request.resource, ...auth.fields });
  const grantType = request.fields.grant_type ?? "?";
  let res: OAuthResponse;
  try {
    res = await oauthRequest(
      http,
      endpoint,
      { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", ...auth.headers }, body },
      signal,
    );
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    throw new OAuthError("MCPD_OAUTH_TOKEN_REFUSED", `token request (${grantType}) to ${urlLabel(endpoint)} failed: ${errorText(err)}`, {
      cause: err,
    });
  }
  const doc = res.json;
  if (res.status !== 200 || !doc || typeof doc.access_token !== "string" || doc.access_token === "") {
    const oauthError = typeof doc?.error === "string" ? quote(doc.error, PROTOCOL_DEFAULTS.quotedNameChars) : undefined;
    const description =
      typeof doc?.error_description === "string" ? `: ${quote(doc.error_description, PROTOCOL_DEFAULTS.quotedDescriptionChars)}` : "";
    const what =
      res.status === 200
        ? "answered without an access token"
        : `refused it (HTTP ${res.status}${oauthError ? `, ${oauthError}` : ""}${description})`;
    throw new OAuthError("MCPD_OAUTH_TOKEN_REFUSED", `token request (${grantType}) to ${urlLabel(endpoint)}: the server ${what}`, {
      ...(oauthError ? { oauthError } : {}),
    });
  }
  const now = Date.now();
  const tokens: OAuthTokens = {
    accessToken: doc.access_token,
    tokenType: typeof doc.token_type === "string" ? doc.token_type : "Bearer",
    obtainedAt: now,
    scopes: typeof doc.scope === "string" ? splitScopes(doc.scope) : request.scopes,
    resource: request.resource,
    issuer: server.issuer,
    tokenEndpoint: server.tokenEndpoint,
    grant: request.grant,
  };
  if (typeof doc.expires_in === "number" && Number.isFinite(doc.expires_in) && doc.expires_in > 0) {
    tokens.expiresAt = now + doc.expires_in * 1000;
  }
  const refresh = typeof doc.refresh_token === "string" && doc.refresh_token !== "" ? doc.refresh_token : request.previousRefreshToken;
  if (refresh !== undefined) tokens.refreshToken = refresh;
  return tokens;
}
