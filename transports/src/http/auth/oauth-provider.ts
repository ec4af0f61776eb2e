/**
 * What the OAuth client of an HTTP transport needs from its owner: the client settings (from the
 * config), storage for tokens and the client registration, and the user interaction (sending a browser
 * to the authorization URL). The daemon supplies files in its state directory and `mcpd auth`; a test or
 * a script may keep everything in memory and follow the redirect itself.
 */

/** Tokens of one server, as the OAuth client keeps them. Times are epoch ms. */
export interface OAuthTokens {
  accessToken: string;
  /** `Bearer` (the only type MCP uses). */
  tokenType: string;
  refreshToken?: string;
  /** When the access token expires, if the server said (`expires_in`). */
  expiresAt?: number;
  /** When it was obtained (the base of the refresh margin). */
  obtainedAt: number;
  /** The scopes granted (the token response's `scope`, else the scopes requested). */
  scopes: string[];
  /** The `resource` (RFC 8707) the token was requested for. */
  resource: string;
  /** The authorization server that issued it, and its token endpoint (for refreshing without discovery). */
  issuer?: string;
  tokenEndpoint: string;
  /** `authorization_code` or `client_credentials`: how a new one is obtained when this one cannot be refreshed. */
  grant: OAuthGrant;
  /** How the client authenticated at the token endpoint (`none`, `client_secret_basic`, ...), to refresh the same way. */
  clientAuthMethod?: string;
}

/** A client identity obtained by Dynamic Client Registration (RFC 7591), for one authorization server. */
export interface ClientRegistration {
  /** The authorization server it is valid for (its issuer, or its base URL without metadata). */
  issuer: string;
  clientId: string;
  clientSecret?: string;
  /** Epoch ms; absent or 0: the secret does not expire. */
  clientSecretExpiresAt?: number;
  tokenEndpointAuthMethod?: string;
  redirectUris: string[];
}

/** The time token lifetimes are measured in (epoch ms), and the wait between refresh attempts. */
export interface OAuthClock {
  now(): number;
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

/** The grants mcpd uses: a user authorizes in a browser, or the client acts on its own behalf. */
export type OAuthGrant = "authorization_code" | "client_credentials";

/** The `auth` settings of an HTTP server entry. Every key is optional. */
export interface OAuthSettings {
  /** `authorization_code` (default: a user authorizes in a browser) or `client_credentials` (machine to machine). */
  grant?: OAuthGrant;
  /** A pre-registered client id; used before any other way of getting one. */
  clientId?: string;
  /** The pre-registered client's secret (client_secret_basic / client_secret_post). */
  clientSecret?: string;
  /** A PEM private key (PKCS#8) for `private_key_jwt` client authentication. */
  privateKey?: string;
  /** The JWS algorithm for `private_key_jwt` (ES256, RS256, PS256, EdDSA, ...); default from the key. */
  signingAlgorithm?: string;
  /** Scopes to request instead of the ones the server suggests. */
  scopes?: string[];
  /** An https URL of a Client ID Metadata Document naming mcpd, used as client id where the server supports them. */
  clientMetadataUrl?: string;
  /** `client_name` sent in a registration. Default `mcpd`. */
  clientName?: string;
  /** The loopback port of the redirect (`http://127.0.0.1:<port>/callback`); default: the registered one, else any free port. */
  redirectPort?: number;
}

/** Why an authorization needs the user, and what it will ask for. */
export interface AuthorizationContext {
  /** In words: `no token`, `the refresh token was refused (invalid_grant)`, `more scopes needed: a b`. */
  reason: string;
  /** The scopes that will be requested (empty: none named). */
  scopes: string[];
  /** The protected resource metadata URL the server named in its challenge, if it did. */
  resourceMetadataUrl?: string;
  /** True for a step-up: the current token works, but this request needs more scopes. */
  stepUp: boolean;
}

/** Storage and user interaction for the OAuth client of one server. Every method may be async. */
export interface OAuthProvider {
  /** The client settings (the config's `auth`). */
  readonly settings: OAuthSettings;
  /** The clock of token lifetimes and refresh backoff; absent: the real one (tests inject a fake one). */
  readonly clock?: OAuthClock;
  /** The stored tokens in use, if any. */
  tokens(): OAuthTokens | undefined | Promise<OAuthTokens | undefined>;
  /** Stores new tokens (keyed by their issuer and resource) and uses them; `undefined` forgets those in use. */
  saveTokens(tokens: OAuthTokens | undefined): void | Promise<void>;
  /** The stored client registration with the authorization server `issuer`, if any. */
  registration(issuer: string): ClientRegistration | undefined | Promise<ClientRegistration | undefined>;
  /** Stores the registration with `issuer`; `undefined` forgets it (the server no longer knows the client). */
  saveRegistration(issuer: string, registration: ClientRegistration | undefined): void | Promise<void>;
  /**
   * Asked before an authorization that needs the user starts, before anything is set up (no listener,
   * no registration). Throw to refuse: the error rejects the request that needed it (a daemon with nobody
   * to ask throws an error naming the command that does it). Absent: allowed.
   */
  authorizationNeeded?(context: AuthorizationContext): void | Promise<void>;
  /**
   * Sends the user (a browser) to `authorizationUrl`. Resolves once that is done; the redirect back to
   * the loopback listener is awaited by the client. Throwing abandons the authorization with that error.
   */
  redirect(authorizationUrl: URL, context: AuthorizationContext): void | Promise<void>;
}
