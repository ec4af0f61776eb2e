import type { Dispatcher } from "undici";
import { silentLogger, type Logger } from "@mcpd/protocol";
import { TRANSPORT_DEFAULTS } from "../../defaults.js";
import { urlLabel } from "../../url-label.js";
import { errorText, waitOrAbort } from "../http-wire.js";
import { probeChallenge } from "./auth-probe.js";
import { discoverAuthTarget, type AuthTarget } from "./auth-discovery.js";
import { authorizationCodeGrant } from "./authorization-code.js";
import { clientCredentialsGrant } from "./client-credentials.js";
import { defaultOAuthHttp, type OAuthHttp } from "./oauth-http.js";
import type { AuthorizationContext, OAuthProvider, OAuthTokens } from "./oauth-provider.js";
import { resourceCovers } from "./resource-match.js";
import { chooseScopes } from "./scope-selection.js";
import { expiresIn, refreshTokens, serverOfTokens } from "./token-refresh.js";
import { parseBearerChallenge, type BearerChallenge } from "./www-authenticate.js";

/** Options of an {@link OAuthClient}; every bound defaults to `TRANSPORT_DEFAULTS`. */
export interface OAuthClientOptions {
  /** The undici dispatcher for metadata, registration and token requests (the transport's agent). */
  dispatcher?: Dispatcher;
  logger?: Logger;
  /** How long to wait for the browser's redirect, in ms. Default `oauthAuthorizationTimeoutMs` (300000). */
  authorizationTimeoutMs?: number;
  /** Refresh this close to expiry, in ms. Default `oauthRefreshMarginMs` (60000). */
  refreshMarginMs?: number;
}

/** What an authorization is for: the challenge that asked for it, and whether it is a step-up. */
interface ObtainRequest {
  challenge: BearerChallenge | undefined;
  stepUp: boolean;
  reason: string;
}

/**
 * The OAuth client of one MCP server (the MCP authorization spec, 2025-11-25 with the 2025-03-26
 * fallbacks). The transport asks it for the access token of each request ({@link accessToken}: refreshed
 * first when close to expiry) and tells it about 401 ({@link unauthorized}: the token is refreshed once,
 * else a new authorization runs) and 403 `insufficient_scope` ({@link insufficientScope}: step-up with the
 * granted scopes plus the challenged ones). Tokens and the client registration live in the
 * {@link OAuthProvider}; the user is reached through it too.
 *
 * One refresh or authorization runs at a time; requests that need one meanwhile wait for it (each
 * bounded by its own signal), then use its outcome. A refresh token the server refuses (`invalid_grant`)
 * is forgotten, and the reason is given to the next authorization.
 */
export class OAuthClient {
  private readonly http: OAuthHttp;
  private readonly log: Logger;
  private readonly authorizationTimeoutMs: number;
  private readonly refreshMarginMs: number;
  /** Aborts whatever runs when the client is closed (its transport closed). */
  private readonly lifetime = new AbortController();
  private target: AuthTarget | undefined;
  private targetMetadataUrl: string | undefined;
  private running: Promise<unknown> | undefined;
  /** Why the last refresh failed for good, for the next authorization's reason. */
  private refreshFailure: string | undefined;

  constructor(
    readonly serverUrl: URL,
    private readonly provider: OAuthProvider,
    options: OAuthClientOptions = {},
  ) {
    this.http = defaultOAuthHttp(options.dispatcher);
    this.log = options.logger ?? silentLogger;
    this.authorizationTimeoutMs = options.authorizationTimeoutMs ?? TRANSPORT_DEFAULTS.oauthAuthorizationTimeoutMs;
    this.refreshMarginMs = options.refreshMarginMs ?? TRANSPORT_DEFAULTS.oauthRefreshMarginMs;
  }

  /** The stored tokens when they are for this server's resource (a changed URL makes them someone else's). */
  async tokens(): Promise<OAuthTokens | undefined> {
    const tokens = await this.provider.tokens();
    return tokens && resourceCovers(tokens.resource, this.serverUrl) ? tokens : undefined;
  }

  /**
   * The access token to send now, or undefined when there is none (the server will answer 401 and
   * {@link unauthorized} takes over). Waits for a refresh or authorization in progress; refreshes first
   * when the token expires within the margin. A refresh that fails for a passing reason (network) keeps
   * a token that has not expired yet.
   * @throws OAuthError when an expired token cannot be refreshed for a passing reason; `signal.reason`.
   */
  async accessToken(signal?: AbortSignal): Promise<string | undefined> {
    if (this.running)
      await within(
        this.running.catch(() => {}),
        signal,
      );
    const tokens = await this.tokens();
    if (!tokens || !this.due(tokens)) return tokens?.accessToken;
    try {
      await within(
        this.exclusive(async () => {
          const now = await this.tokens();
          if (now && this.due(now)) await this.renew(now);
        }),
        signal,
      );
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (tokens.expiresAt !== undefined && tokens.expiresAt > Date.now()) {
        this.log.warn(
          { url: urlLabel(this.serverUrl), err: errorText(err) },
          "token refresh failed; using the current token until it expires",
        );
        return tokens.accessToken;
      }
      throw err;
    }
    return (await this.tokens())?.accessToken;
  }

  /**
   * The server answered 401 to a request sent with `sentToken` (undefined: none). Resolves once a new
   * token is stored: by another request's run, by one refresh, or by a new authorization (which may
   * need the user: see {@link OAuthProvider.authorizationNeeded}).
   * @throws what the refresh or authorization threw (OAuthError, the provider's error); `signal.reason`.
   */
  async unauthorized(wwwAuthenticate: string | undefined, sentToken: string | undefined, signal?: AbortSignal): Promise<void> {
    const challenge = parseBearerChallenge(wwwAuthenticate);
    await within(
      this.exclusive(async () => {
        const tokens = await this.tokens();
        if (tokens && tokens.accessToken !== sentToken) return; // replaced meanwhile: just retry
        if (tokens && sentToken !== undefined && (await this.renew(tokens))) return;
        const reason = this.refreshFailure ?? (tokens ? "the server refused the access token" : "no access token yet");
        await this.obtain({ challenge, stepUp: false, reason });
      }),
      signal,
    );
  }

  /**
   * The server answered 403 `insufficient_scope` to a request sent with `sentToken`: a step-up
   * authorization for the granted scopes plus the challenged ones, unless another request's already
   * replaced the token.
   * @throws like {@link unauthorized}.
   */
  async insufficientScope(wwwAuthenticate: string | undefined, sentToken: string | undefined, signal?: AbortSignal): Promise<void> {
    const challenge = parseBearerChallenge(wwwAuthenticate);
    const wanted = challenge?.scopes?.join(" ");
    await within(
      this.exclusive(async () => {
        const tokens = await this.tokens();
        if (tokens && tokens.accessToken !== sentToken) return;
        await this.obtain({ challenge, stepUp: true, reason: `more scopes needed${wanted ? `: ${wanted}` : ""}` });
      }),
      signal,
    );
  }

  /**
   * A new authorization on request (`mcpd auth`), whatever is stored: discovery from `challenge` (what
   * the server last asked, if known), the configured grant, tokens stored. Resolves with the new tokens.
   */
  authorize(challenge: BearerChallenge | undefined, reason: string, signal?: AbortSignal): Promise<OAuthTokens> {
    return within(
      this.exclusive(() => this.obtain({ challenge, stepUp: false, reason })),
      signal,
    );
  }

  /**
   * What the server asks for now ({@link probeChallenge}): its `Bearer` challenge, or undefined when it
   * lets an unauthenticated `initialize` through.
   */
  probe(signal?: AbortSignal): Promise<BearerChallenge | undefined> {
    return probeChallenge(this.http, this.serverUrl, signal);
  }

  /** Ends whatever runs (a wait for the browser, a token request) with `reason`. */
  close(reason: unknown): void {
    this.lifetime.abort(reason);
  }

  // --- internals ---

  /** Runs `fn` after every run before it; the chain never breaks on a failure. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = (this.running ?? Promise.resolve()).catch(() => {}).then(fn);
    const tracked = run.finally(() => {
      if (this.running === tracked) this.running = undefined;
    });
    tracked.catch(() => {});
    this.running = tracked;
    return run;
  }

  /** Whether `tokens` expire within the margin (a fifth of their lifetime, if less). */
  private due(tokens: OAuthTokens): boolean {
    if (tokens.expiresAt === undefined) return false;
    const margin = Math.min(this.refreshMarginMs, (tokens.expiresAt - tokens.obtainedAt) / 5);
    return Date.now() >= tokens.expiresAt - margin;
  }

  /**
   * A new access token without the user: the refresh token, or for the client credentials grant a new
   * grant. True when one was stored. A refresh the server refuses (an OAuth error answer) forgets the
   * tokens and returns false; a passing failure (network) throws.
   */
  private async renew(tokens: OAuthTokens): Promise<boolean> {
    if (tokens.refreshToken === undefined) {
      if (tokens.grant !== "client_credentials") return false;
      await this.obtain({ challenge: undefined, stepUp: false, reason: "the access token expired" });
      return true;
    }
    const outcome = await refreshTokens(
      {
        http: this.http,
        provider: this.provider,
        serverUrl: this.serverUrl,
        log: this.log,
        current: () => this.tokens(),
        signal: this.lifetime.signal,
      },
      this.target?.server ?? serverOfTokens(tokens),
      tokens,
      tokens.refreshToken,
    );
    if (typeof outcome === "object") {
      this.refreshFailure = outcome.refused;
      await this.provider.saveTokens(undefined);
      return false;
    }
    if (outcome === "refreshed") this.refreshFailure = undefined;
    return true;
  }

  /** Discovery, cached for this client's life unless a challenge names other resource metadata. */
  private async discover(resourceMetadataUrl: string | undefined): Promise<AuthTarget> {
    if (this.target && (resourceMetadataUrl === undefined || resourceMetadataUrl === this.targetMetadataUrl)) return this.target;
    const target = await discoverAuthTarget(this.http, this.serverUrl, resourceMetadataUrl, this.lifetime.signal);
    this.target = target;
    this.targetMetadataUrl = resourceMetadataUrl;
    this.log.debug(
      { url: urlLabel(this.serverUrl), issuer: target.server.issuer, discovered: target.server.discovered, resource: target.resource },
      "authorization server discovered",
    );
    return target;
  }

  /** A new token by the configured grant (asking the user first, for the authorization code grant). */
  private async obtain(request: ObtainRequest): Promise<OAuthTokens> {
    const settings = this.provider.settings;
    const grant = settings.grant ?? "authorization_code";
    const granted = (await this.tokens())?.scopes ?? [];
    const select = (scopesSupported: readonly string[] | undefined): string[] =>
      chooseScopes({ configured: settings.scopes, challenge: request.challenge, scopesSupported, granted, stepUp: request.stepUp });
    const context: AuthorizationContext = {
      reason: request.reason,
      scopes: select(undefined),
      stepUp: request.stepUp,
      ...(request.challenge?.resourceMetadata ? { resourceMetadataUrl: request.challenge.resourceMetadata } : {}),
    };
    // Before anything is set up: a daemon with nobody to ask refuses here, at no cost.
    if (grant === "authorization_code") await this.provider.authorizationNeeded?.(context);
    const target = await this.discover(request.challenge?.resourceMetadata);
    const scopes = select(target.scopesSupported);
    const tokens =
      grant === "client_credentials"
        ? await clientCredentialsGrant(this.http, this.provider, target, scopes, this.lifetime.signal)
        : await authorizationCodeGrant({
            http: this.http,
            provider: this.provider,
            target,
            scopes,
            context: { ...context, scopes },
            timeoutMs: this.authorizationTimeoutMs,
            signal: this.lifetime.signal,
          });
    await this.provider.saveTokens(tokens);
    this.refreshFailure = undefined;
    this.log.info(
      { url: urlLabel(this.serverUrl), grant, scopes: tokens.scopes, expiresInS: expiresIn(tokens) },
      request.stepUp ? "step-up authorization granted" : "authorization granted",
    );
    return tokens;
  }
}

/** `promise`, or `signal.reason` when the signal aborts first. */
function within<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  return signal ? waitOrAbort(promise, signal) : promise;
}
