import type { Dispatcher } from "undici";
import { silentLogger, type Logger } from "@mcpd/protocol";
import { TRANSPORT_DEFAULTS } from "../../defaults.js";
import { urlLabel } from "../../url-label.js";
import { errorText, waitOrAbort } from "../http-wire.js";
import { probeChallenge } from "./auth-probe.js";
import { authorizationCodeGrant } from "./authorization-code.js";
import { discoverAuthTarget, type AuthTarget } from "./discovery.js";
import { defaultOAuthHttp, type OAuthHttp } from "./oauth-http.js";
import type { OAuthClock, OAuthProvider, OAuthTokens } from "./oauth-provider.js";
import { resourceCovers } from "./resource-match.js";
import { chooseScopes } from "./scope-selection.js";
import { clientCredentialsGrant, realClock, refreshTokens, type RenewalContext } from "./token-renewal.js";
import type { BearerChallenge } from "./www-authenticate.js";

/** Options of an {@link OAuthClient}; every bound defaults to `TRANSPORT_DEFAULTS`. */
export interface OAuthClientOptions {
  /** The undici dispatcher for metadata, registration and token requests (the transport's agent). */
  dispatcher?: Dispatcher;
  logger?: Logger;
  /** How long to wait for the browser's redirect, in ms. Default `oauthAuthorizationTimeoutMs` (300000). */
  authorizationTimeoutMs?: number;
  /** Refresh this close to expiry, in ms. Default `oauthRefreshMarginMs` (60000). */
  refreshMarginMs?: number;
  /** The clock of token lifetimes and refresh backoff; default the real one (tests inject a fake one). */
  clock?: OAuthClock;
}

/** What an authorization is for: the challenge that asked for it, and whether it is a step-up. */
interface ObtainRequest {
  challenge: BearerChallenge | undefined;
  stepUp: boolean;
  reason: string;
}

/**
 * The OAuth client of one MCP server, mcpd's part around oauth4webapi: which tokens are this server's,
 * when to refresh, when to ask the user. The transport asks it for the access token of each request
 * ({@link accessToken}: refreshed first when close to expiry) and tells it about 401 ({@link unauthorized}:
 * discovery again, then one refresh, else a new authorization) and 403 `insufficient_scope`
 * ({@link insufficientScope}: step-up with the granted scopes plus the challenged ones).
 *
 * One refresh or authorization runs at a time, however many requests wait for it (each bounded by its own
 * signal). A refresh that fails for a passing reason is retried with backoff and never drops the tokens;
 * only a refusal (`invalid_grant`) forgets them, and its reason goes to the next authorization.
 */
export class OAuthClient {
  private readonly http: OAuthHttp;
  private readonly log: Logger;
  private readonly clock: OAuthClock;
  /** Aborts whatever runs when the client is closed (its transport closed). */
  private readonly lifetime = new AbortController();
  private target: AuthTarget | undefined;
  private targetMetadataUrl: string | undefined;
  private running: Promise<unknown> | undefined;
  /** The renewal started ahead of expiry, while it runs: every request that finds the token due joins it. */
  private renewing: Promise<void> | undefined;
  /** After a renewal failed for a passing reason: no new one starts ahead of expiry before this time. */
  private renewAfter = 0;
  /** Why the last refresh failed for good, for the next authorization's reason. */
  private refreshFailure: string | undefined;

  constructor(
    readonly serverUrl: URL,
    private readonly provider: OAuthProvider,
    private readonly options: OAuthClientOptions = {},
  ) {
    this.http = defaultOAuthHttp(options.dispatcher);
    this.log = options.logger ?? silentLogger;
    this.clock = options.clock ?? realClock;
  }

  /** The stored tokens when they are for this server's resource (a changed URL makes them someone else's). */
  async tokens(): Promise<OAuthTokens | undefined> {
    const tokens = await this.provider.tokens();
    return tokens && resourceCovers(tokens.resource, this.serverUrl) ? tokens : undefined;
  }

  /**
   * The access token to send now, or undefined when there is none (the server will answer 401 and
   * {@link unauthorized} takes over). Waits for an authorization in progress. A token that expires within
   * the margin is renewed ahead ({@link renewAhead}) while the request goes out with it; only an expired
   * one waits for its renewal.
   * @throws OAuthError when an expired token cannot be refreshed for a passing reason; `signal.reason`.
   */
  async accessToken(signal?: AbortSignal): Promise<string | undefined> {
    // A renewal ahead of expiry holds nobody up; anything else running replaces the token.
    if (this.running && this.running !== this.renewing)
      await within(
        this.running.catch(() => {}),
        signal,
      );
    const tokens = await this.tokens();
    if (!tokens || !this.due(tokens)) return tokens?.accessToken;
    const renewal = this.renewAhead(tokens);
    if ((tokens.expiresAt ?? 0) > this.clock.now()) return tokens.accessToken;
    await within(renewal, signal);
    return (await this.tokens())?.accessToken;
  }

  /**
   * The server answered 401 (with `challenge`, if any) to a request sent with `sentToken` (undefined:
   * none). Resolves once a new token is stored: by another request's run, by one refresh, or by a new
   * authorization (which may need the user). Discovery runs again first: a server that moved to another authorization server (SEP-2352)
   * gets a new authorization there (and a registration of its own), never a refresh at the old one.
   * @throws what the refresh or authorization threw (OAuthError, the provider's error); `signal.reason`.
   */
  async unauthorized(challenge: BearerChallenge | undefined, sentToken: string | undefined, signal?: AbortSignal): Promise<void> {
    const run = async (): Promise<void> => {
      const tokens = await this.tokens();
      if (tokens && tokens.accessToken !== sentToken) return; // replaced meanwhile: just retry
      let moved: string | undefined;
      if (tokens && sentToken !== undefined) {
        const issuer = (await this.discover(challenge?.resourceMetadata, true)).server.issuer;
        if (tokens.issuer !== undefined && tokens.issuer !== issuer) moved = issuer;
        else if (await this.renew(tokens)) return;
      }
      const reason = moved
        ? `the server moved to the authorization server ${moved}`
        : (this.refreshFailure ?? (tokens ? "the server refused the access token" : "no access token yet"));
      await this.obtain({ challenge, stepUp: false, reason });
    };
    await within(this.exclusive(run), signal);
  }

  /**
   * The server answered 403 `insufficient_scope` to a request sent with `sentToken`: a step-up
   * authorization for the granted scopes plus the challenged ones, unless another request's already
   * replaced the token. @throws like {@link unauthorized}.
   */
  async insufficientScope(challenge: BearerChallenge | undefined, sentToken: string | undefined, signal?: AbortSignal): Promise<void> {
    const wanted = challenge?.scopes?.join(" ");
    const run = async (): Promise<void> => {
      if ((await this.tokens())?.accessToken !== sentToken) return;
      await this.obtain({ challenge, stepUp: true, reason: `more scopes needed${wanted ? `: ${wanted}` : ""}` });
    };
    await within(this.exclusive(run), signal);
  }

  /** A new authorization on request (`mcpd auth`), whatever is stored, from `challenge` (what the server last asked). */
  authorize(challenge: BearerChallenge | undefined, reason: string, signal?: AbortSignal): Promise<OAuthTokens> {
    return within(
      this.exclusive(() => this.obtain({ challenge, stepUp: false, reason })),
      signal,
    );
  }

  /** What the server asks for now ({@link probeChallenge}), or undefined when it lets an unauthenticated request through. */
  probe(signal?: AbortSignal): Promise<BearerChallenge | undefined> {
    return probeChallenge(this.http, this.serverUrl, signal);
  }

  /** Ends whatever runs (a wait for the browser, a token request) with `reason`. */
  close(reason: unknown): void {
    this.lifetime.abort(reason);
  }

  /** Runs `fn` after every run before it; the chain never breaks on a failure. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = (this.running ?? Promise.resolve()).catch(() => {}).then(fn);
    const tracked = run.finally(() => {
      if (this.running === tracked) this.running = undefined;
    });
    tracked.catch(() => {});
    this.running = tracked;
    return tracked;
  }

  /**
   * The renewal of `tokens` (due): the one in progress, else a new one, unless one failed within the
   * backoff and `tokens` have not expired yet. A failure is logged here; the promise rejects with it.
   */
  private renewAhead(tokens: OAuthTokens): Promise<void> {
    if (this.renewing) return this.renewing;
    const now = this.clock.now();
    const ahead = (tokens.expiresAt ?? 0) > now;
    if (ahead && now < this.renewAfter) return Promise.resolve();
    const renewing = this.exclusive(async () => {
      const current = await this.tokens();
      if (current && this.due(current)) await this.renew(current);
    });
    this.renewing = renewing;
    // Nobody may wait for it (a request whose token is still good goes out at once): its outcome is kept here.
    void renewing.then(
      () => {
        this.renewing = undefined;
      },
      (err: unknown) => {
        this.renewing = undefined;
        this.renewAfter = this.clock.now() + TRANSPORT_DEFAULTS.oauthRefreshBackoffMs * 2 ** TRANSPORT_DEFAULTS.oauthRefreshAttempts;
        const what = ahead ? "token refresh failed; using the current token until it expires" : "token refresh failed";
        this.log.warn({ url: urlLabel(this.serverUrl), err: errorText(err) }, what);
      },
    );
    return renewing;
  }

  /** Whether `tokens` expire within the margin (a fifth of their lifetime, if less). */
  private due(tokens: OAuthTokens): boolean {
    if (tokens.expiresAt === undefined) return false;
    const margin = Math.min(
      this.options.refreshMarginMs ?? TRANSPORT_DEFAULTS.oauthRefreshMarginMs,
      (tokens.expiresAt - tokens.obtainedAt) / 5,
    );
    return this.clock.now() >= tokens.expiresAt - margin;
  }

  /**
   * A new access token without the user: the refresh token, or for the client credentials grant a new
   * grant. True when one was stored; false when there is no way (no refresh token, or it was refused:
   * the tokens are then forgotten). A passing failure throws once its retries are spent, the tokens kept.
   */
  private async renew(tokens: OAuthTokens): Promise<boolean> {
    if (tokens.refreshToken === undefined) {
      if (tokens.grant !== "client_credentials") return false;
      await this.obtain({ challenge: undefined, stepUp: false, reason: "the access token expired" });
      return true;
    }
    // The discovered authorization server, if it is the one that issued the tokens: after a move (SEP-2352)
    // they are refreshed where they came from, never sent to the new one.
    const found = this.target?.server;
    const issued = tokens.issuer !== undefined ? found?.issuer === tokens.issuer : found?.token_endpoint === tokens.tokenEndpoint;
    const outcome = await refreshTokens(this.renewal(), issued ? found : undefined, tokens, tokens.refreshToken);
    if (typeof outcome === "object") {
      this.refreshFailure = outcome.refused;
      await this.provider.saveTokens(undefined);
      return false;
    }
    if (outcome === "refreshed") this.refreshFailure = undefined;
    return true;
  }

  private renewal(): RenewalContext {
    const { http, provider, serverUrl, log, clock } = this;
    return { http, provider, serverUrl, log, clock, signal: this.lifetime.signal, current: () => this.tokens() };
  }

  /** Discovery, cached for this client's life unless `fresh` or a challenge names other resource metadata. */
  private async discover(resourceMetadataUrl: string | undefined, fresh = false): Promise<AuthTarget> {
    const same = resourceMetadataUrl === undefined || resourceMetadataUrl === this.targetMetadataUrl;
    if (this.target && same && !fresh) return this.target;
    this.targetMetadataUrl = resourceMetadataUrl ?? this.targetMetadataUrl;
    const target = await discoverAuthTarget(this.http, this.serverUrl, this.targetMetadataUrl, this.lifetime.signal);
    this.target = target;
    this.log.debug(
      { url: urlLabel(this.serverUrl), issuer: target.server.issuer, resource: target.resource },
      "authorization server discovered",
    );
    return target;
  }

  /**
   * A new token by the configured grant (asking the user first, for the authorization code grant, before
   * anything is set up: a daemon with nobody to ask refuses at no cost). `offline_access` is asked for
   * only where the authorization server lists it (SEP-2207).
   */
  private async obtain(request: ObtainRequest): Promise<OAuthTokens> {
    const settings = this.provider.settings;
    const grant = settings.grant ?? "authorization_code";
    const granted = (await this.tokens())?.scopes ?? [];
    const select = (scopesSupported: readonly string[] | undefined): string[] =>
      chooseScopes({ configured: settings.scopes, challenge: request.challenge, scopesSupported, granted, stepUp: request.stepUp });
    const { reason, stepUp } = request;
    const metadataUrl = request.challenge?.resourceMetadata;
    const context = { reason, stepUp, scopes: select(undefined), ...(metadataUrl ? { resourceMetadataUrl: metadataUrl } : {}) };
    if (grant === "authorization_code") await this.provider.authorizationNeeded?.(context);
    const target = await this.discover(metadataUrl);
    const scopes = select(target.scopesSupported);
    const offline = grant === "authorization_code" && target.server.scopes_supported?.includes("offline_access");
    if (offline && !scopes.includes("offline_access")) scopes.push("offline_access");
    const tokens =
      grant === "client_credentials"
        ? await clientCredentialsGrant(this.renewal(), target, scopes)
        : await authorizationCodeGrant({
            ...this.renewal(),
            target,
            scopes,
            context: { ...context, scopes },
            timeoutMs: this.options.authorizationTimeoutMs ?? TRANSPORT_DEFAULTS.oauthAuthorizationTimeoutMs,
          });
    await this.provider.saveTokens(tokens);
    this.refreshFailure = undefined;
    const info = { url: urlLabel(this.serverUrl), grant, scopes: tokens.scopes, issuer: tokens.issuer };
    this.log.info(info, stepUp ? "step-up authorization granted" : "authorization granted");
    return tokens;
  }
}

/** `promise`, or `signal.reason` when the signal aborts first. */
function within<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  return signal ? waitOrAbort(promise, signal) : promise;
}
