/**
 * A new access token from the stored refresh token: the client identity the tokens were obtained with,
 * the token endpoint asked, the new tokens stored; or why the stored tokens can no longer be refreshed.
 */
import { OAuthError, type Logger } from "@mcpd/protocol";
import { urlLabel } from "../../url-label.js";
import type { AuthServerMetadata } from "./auth-server-metadata.js";
import { knownMethod } from "./client-authentication.js";
import { knownClient } from "./client-identity.js";
import type { OAuthHttp } from "./oauth-http.js";
import type { OAuthProvider, OAuthTokens } from "./oauth-provider.js";
import { requestToken } from "./token-endpoint.js";

/** What a refresh needs besides the tokens. */
export interface RefreshContext {
  http: OAuthHttp;
  provider: OAuthProvider;
  serverUrl: URL;
  log: Logger;
  /** The stored tokens for this server now (another client of it may have refreshed them meanwhile). */
  current(): Promise<OAuthTokens | undefined>;
  signal: AbortSignal;
}

/**
 * How a refresh ended: `refreshed` (new tokens stored), `replaced` (another client rotated the refresh
 * token first: its tokens stand), or `{ refused }`, why the stored tokens are of no more use (the
 * registration is gone, or the server refused the refresh token): the caller forgets them.
 */
export type RefreshOutcome = "refreshed" | "replaced" | { refused: string };

/**
 * Refreshes `tokens` at `server` (the discovered authorization server, else {@link serverOfTokens}).
 * @throws a passing failure (network, a token endpoint that does not answer as OAuth), the tokens kept.
 */
export async function refreshTokens(
  ctx: RefreshContext,
  server: AuthServerMetadata,
  tokens: OAuthTokens,
  refreshToken: string,
): Promise<RefreshOutcome> {
  const { provider } = ctx;
  const known = await knownClient(provider.settings, provider, server);
  if (!known) return { refused: "the client registration is gone" };
  const identity = { ...known.identity, authMethod: knownMethod(tokens.clientAuthMethod) ?? known.identity.authMethod };
  try {
    const fresh = await requestToken(
      ctx.http,
      server,
      identity,
      provider.settings,
      {
        fields: { grant_type: "refresh_token", refresh_token: refreshToken },
        resource: tokens.resource,
        scopes: tokens.scopes,
        grant: tokens.grant,
        previousRefreshToken: refreshToken,
      },
      ctx.signal,
    );
    await provider.saveTokens({ ...fresh, clientAuthMethod: identity.authMethod });
    ctx.log.info({ url: urlLabel(ctx.serverUrl), expiresInS: expiresIn(fresh) }, "access token refreshed");
    return "refreshed";
  } catch (err) {
    if (!(err instanceof OAuthError) || err.oauthError === undefined) throw err;
    // Another client of the same server (a per-client session) may have rotated it first: its tokens stand.
    if ((await ctx.current())?.refreshToken !== refreshToken) return "replaced";
    ctx.log.warn({ url: urlLabel(ctx.serverUrl), oauthError: err.oauthError }, "refresh token refused; a new authorization is needed");
    return { refused: `the refresh token was refused (${err.oauthError})` };
  }
}

/** An authorization server as the stored tokens describe it (for refreshing without discovery). */
export function serverOfTokens(tokens: OAuthTokens): AuthServerMetadata {
  return {
    issuer: tokens.issuer ?? new URL(tokens.tokenEndpoint).origin,
    tokenEndpoint: tokens.tokenEndpoint,
    clientIdMetadataDocuments: false,
    discovered: false,
  };
}

/** Seconds until `tokens` expire, for the log (null: no expiry given). */
export function expiresIn(tokens: OAuthTokens): number | null {
  return tokens.expiresAt === undefined ? null : Math.round((tokens.expiresAt - Date.now()) / 1000);
}
