/**
 * Access tokens obtained without the user: a refresh (RFC 6749 section 6) with the client identity the
 * tokens were obtained with, and the client credentials grant (MCP's machine-to-machine extension).
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { AuthorizationServer } from "oauth4webapi";
import { OAuthError, type Logger } from "@mcpd/protocol";
import { TRANSPORT_DEFAULTS } from "../../defaults.js";
import { urlLabel } from "../../url-label.js";
import { errorText } from "../http-wire.js";
import { knownClient, knownMethod } from "./client-identity.js";
import type { AuthTarget } from "./discovery.js";
import type { OAuthHttp } from "./oauth-http.js";
import type { OAuthClock, OAuthProvider, OAuthTokens } from "./oauth-provider.js";
import { isRefusal, requestToken } from "./token-request.js";

/** The real clock. */
export const realClock: OAuthClock = { now: Date.now, sleep: (ms, signal) => sleep(ms, undefined, { signal }) };

/** What a refresh or a client credentials grant needs. */
export interface RenewalContext {
  http: OAuthHttp;
  provider: OAuthProvider;
  serverUrl: URL;
  log: Logger;
  clock: OAuthClock;
  signal: AbortSignal;
  /** The stored tokens for this server now (another client of it may have refreshed them meanwhile). */
  current(): Promise<OAuthTokens | undefined>;
}

/**
 * How a refresh ended: `refreshed` (new tokens stored), `replaced` (another client rotated the refresh
 * token first: its tokens stand), or `{ refused }`: the server refused for good (`invalid_grant`, or the
 * client is gone) and the caller forgets the tokens.
 */
export type RefreshOutcome = "refreshed" | "replaced" | { refused: string };

/** The refreshes in flight in this process, by token endpoint and refresh token, with the signal each runs under. */
const refreshing = new Map<string, { run: Promise<RefreshOutcome>; signal: AbortSignal }>();

/**
 * Refreshes `tokens` at `discovered` (the authorization server that issued them, else the one the tokens
 * name). Every client of the server in this process (per-client sessions have one each) joins the refresh
 * in flight for the same refresh token, so a rotating one is sent once; when the client that started it
 * closes meanwhile, the others start again. A passing failure (network, 5xx, an answer that is not OAuth,
 * `temporarily_unavailable`) is tried again after `oauthRefreshBackoffMs`, doubled each time,
 * `oauthRefreshAttempts` times in all.
 * @throws the last passing failure: the tokens are kept, and a later request tries again.
 */
export async function refreshTokens(
  ctx: RenewalContext,
  discovered: AuthorizationServer | undefined,
  tokens: OAuthTokens,
  refreshToken: string,
): Promise<RefreshOutcome> {
  const key = `${tokens.tokenEndpoint} ${refreshToken}`;
  const joined = refreshing.get(key);
  if (joined !== undefined) {
    try {
      return await joined.run;
    } catch (err) {
      if (!joined.signal.aborted || ctx.signal.aborted) throw err;
    }
  }
  const run = refreshWithRetries(ctx, discovered, tokens, refreshToken).finally(() => refreshing.delete(key));
  refreshing.set(key, { run, signal: ctx.signal });
  return run;
}

async function refreshWithRetries(
  ctx: RenewalContext,
  discovered: AuthorizationServer | undefined,
  tokens: OAuthTokens,
  refreshToken: string,
): Promise<RefreshOutcome> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await refreshOnce(ctx, discovered, tokens, refreshToken);
    } catch (err) {
      if (ctx.signal.aborted || attempt >= TRANSPORT_DEFAULTS.oauthRefreshAttempts) throw err;
      const delayMs = TRANSPORT_DEFAULTS.oauthRefreshBackoffMs * 2 ** (attempt - 1);
      ctx.log.warn({ url: urlLabel(ctx.serverUrl), attempt, delayMs, err: errorText(err) }, "token refresh failed; trying again");
      await ctx.clock.sleep(delayMs, ctx.signal);
    }
  }
}

async function refreshOnce(
  ctx: RenewalContext,
  discovered: AuthorizationServer | undefined,
  tokens: OAuthTokens,
  refreshToken: string,
): Promise<RefreshOutcome> {
  const server = discovered ?? { issuer: tokens.issuer ?? new URL(tokens.tokenEndpoint).origin, token_endpoint: tokens.tokenEndpoint };
  const known = await knownClient(ctx.provider.settings, ctx.provider, server);
  if (!known) return { refused: "the client registration is gone" };
  const identity = { ...known, method: knownMethod(tokens.clientAuthMethod) ?? known.method };
  const request = { grant: "refresh_token" as const, refreshToken, resource: tokens.resource, scopes: tokens.scopes };
  try {
    const fresh = await requestToken(ctx.http, server, identity, ctx.provider.settings, request, ctx.signal, ctx.clock.now);
    await ctx.provider.saveTokens({ ...fresh, grant: tokens.grant });
    ctx.log.info({ url: urlLabel(ctx.serverUrl), expiresAt: fresh.expiresAt ?? null }, "access token refreshed");
    return "refreshed";
  } catch (err) {
    if (!isRefusal(err)) throw err;
    // Another client of the same server (a per-client session) may have rotated it first: its tokens stand.
    if ((await ctx.current())?.refreshToken !== refreshToken) return "replaced";
    const oauthError = (err as OAuthError).oauthError;
    ctx.log.warn({ url: urlLabel(ctx.serverUrl), oauthError }, "refresh token refused; a new authorization is needed");
    return { refused: `the refresh token was refused (${oauthError})` };
  }
}

/**
 * The client credentials grant: the configured client acts on its own behalf (secret or signed
 * assertion), no user involved.
 * @throws OAuthError (`MCPD_OAUTH_REGISTRATION_FAILED` without a configured client, `MCPD_OAUTH_UNSUPPORTED`
 *   when the server does not offer the grant, `MCPD_OAUTH_TOKEN_REFUSED`), ConfigError for an unusable key.
 */
export async function clientCredentialsGrant(ctx: RenewalContext, target: AuthTarget, scopes: string[]): Promise<OAuthTokens> {
  const { settings } = ctx.provider;
  const server = target.server;
  if (settings.clientId === undefined || (settings.clientSecret === undefined && settings.privateKey === undefined)) {
    throw new OAuthError(
      "MCPD_OAUTH_REGISTRATION_FAILED",
      `the client_credentials grant needs a configured "clientId" with a "clientSecret" or a "privateKey"`,
    );
  }
  const grants = server.grant_types_supported;
  if (grants !== undefined && !grants.includes("client_credentials")) {
    throw new OAuthError(
      "MCPD_OAUTH_UNSUPPORTED",
      `the authorization server ${server.issuer} offers no client_credentials grant (grant_types_supported: ${grants.join(", ")})`,
    );
  }
  const identity = (await knownClient(settings, ctx.provider, server))!;
  const request = { grant: "client_credentials" as const, resource: target.resource, scopes };
  return requestToken(ctx.http, server, identity, settings, request, ctx.signal, ctx.clock.now);
}
