import { McpdError } from "./mcpd-error.js";
import { WireCode } from "./wire-codes.js";

/**
 * Why an OAuth step failed, as {@link OAuthError}'s `code`: discovery found no usable metadata
 * (`MCPD_OAUTH_DISCOVERY_FAILED`); the protected resource metadata names another resource than the
 * server's URL (`MCPD_OAUTH_RESOURCE_MISMATCH`); no client identity could be had (no client id
 * configured, no metadata document, no registration endpoint) or registration was refused
 * (`MCPD_OAUTH_REGISTRATION_FAILED`); the authorization server refused a token request
 * (`MCPD_OAUTH_TOKEN_REFUSED`, with `oauthError` such as `invalid_grant`); the user's authorization did not
 * come back (denied, state mismatch, timeout: `MCPD_OAUTH_AUTHORIZATION_FAILED`); the MCP server refused
 * an access token obtained for the request it refused (`MCPD_OAUTH_TOKEN_REJECTED`); the server's requirements
 * cannot be met (no PKCE S256, a grant the server does not offer, too many step-ups:
 * `MCPD_OAUTH_UNSUPPORTED`).
 */
export type OAuthErrorCode =
  | "MCPD_OAUTH_DISCOVERY_FAILED"
  | "MCPD_OAUTH_RESOURCE_MISMATCH"
  | "MCPD_OAUTH_REGISTRATION_FAILED"
  | "MCPD_OAUTH_TOKEN_REFUSED"
  | "MCPD_OAUTH_AUTHORIZATION_FAILED"
  | "MCPD_OAUTH_TOKEN_REJECTED"
  | "MCPD_OAUTH_UNSUPPORTED";

/**
 * An OAuth step towards a remote server's authorization failed (see {@link OAuthErrorCode}). The message
 * names the step, the URL (never a token or secret) and the authorization server's `error` code.
 */
export class OAuthError extends McpdError {
  override name = "OAuthError";
  /** The authorization server's `error` value (`invalid_grant`, `invalid_client`, ...), when it gave one. */
  readonly oauthError: string | undefined;
  constructor(code: OAuthErrorCode, message: string, options: { cause?: unknown; oauthError?: string } = {}) {
    super(code, message, {
      cause: options.cause,
      wireCode: WireCode.UpstreamHttpError,
      ...(options.oauthError ? { data: { oauthError: options.oauthError } } : {}),
    });
    this.oauthError = options.oauthError;
  }
}

/**
 * A remote server needs the user to authorize mcpd in a browser (no token, a refresh token that was
 * refused, more scopes needed), and nobody is there to ask. Code `MCPD_AUTH_REQUIRED`, wire -32076; the
 * message names the server and the exact command to run (`mcpd auth SERVER`); `data` carries `server`
 * and `command`.
 */
export class AuthRequiredError extends McpdError {
  override name = "AuthRequiredError";
  readonly server: string;
  readonly command: string;
  /** Why, in words: `no access token yet`, `the refresh token was refused (invalid_grant)`, ... */
  readonly reason: string;
  /**
   * True when only the request that asked needs more scopes (403 `insufficient_scope`): the server's
   * token still works for everything else.
   */
  readonly stepUp: boolean;
  constructor(server: string, why: string, options: { cause?: unknown; stepUp?: boolean } = {}) {
    const command = `mcpd auth ${server}`;
    super("MCPD_AUTH_REQUIRED", `Server "${server}" needs authorization (${why}): run \`${command}\``, {
      cause: options.cause,
      wireCode: WireCode.AuthRequired,
      data: { server, command },
    });
    this.server = server;
    this.command = command;
    this.reason = why;
    this.stepUp = options.stepUp ?? false;
  }
}
