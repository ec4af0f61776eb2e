import type { Dispatcher } from "undici";
import { OAuthError, type Logger } from "@mcpd/protocol";
import { urlLabel } from "../../url-label.js";
import { TRANSPORT_DEFAULTS } from "../../defaults.js";
import { discardBody, headerValue } from "../http-wire.js";
import { OAuthClient } from "./oauth-client.js";
import type { OAuthProvider } from "./oauth-provider.js";
import { oauthErrorText } from "./token-request.js";
import { parseBearerChallenge, type BearerChallenge } from "./www-authenticate.js";

/**
 * OAuth as the HTTP transport applies it: the access token on every request (`Authorization: Bearer`),
 * 401 and 403 `insufficient_scope` answered by the {@link OAuthClient} and the request sent again.
 */
export class HttpAuth {
  readonly client: OAuthClient;

  /** @param dispatcher for metadata, registration and token requests; undefined: undici's global one */
  constructor(url: URL, provider: OAuthProvider, dispatcher: Dispatcher | undefined, logger: Logger) {
    this.client = new OAuthClient(url, provider, {
      ...(dispatcher ? { dispatcher } : {}),
      logger,
      ...(provider.clock ? { clock: provider.clock } : {}),
    });
  }

  /** `configured` with the bearer token, when there is one. */
  static withToken(configured: Record<string, string>, token: string | undefined): Record<string, string> {
    return token === undefined ? configured : { ...configured, authorization: `Bearer ${token}` };
  }

  /** `configured` with the current access token (refreshed first when due; none when that fails), for GETs. */
  async headers(configured: Record<string, string>): Promise<Record<string, string>> {
    return HttpAuth.withToken(configured, await this.client.accessToken().catch(() => undefined));
  }

  /** `configured` with the stored access token, never refreshing (for the DELETE on the way out). */
  async storedHeaders(configured: Record<string, string>): Promise<Record<string, string>> {
    return HttpAuth.withToken(configured, (await this.client.tokens().catch(() => undefined))?.accessToken);
  }

  /**
   * Sends a request with the access token (`send` is called with the headers to use). A 401 (with a
   * `Bearer` challenge, or none) is answered once by a refresh or a new authorization and the request
   * sent again; a 403 `insufficient_scope` by a step-up, at most `TRANSPORT_DEFAULTS.oauthStepUpAttempts`
   * times. Returns the last answer (a 403 when the step-ups did not help, a 401 of another scheme); the
   * bodies of the answers replaced are discarded.
   * @throws OAuthError `MCPD_OAUTH_TOKEN_REJECTED` when the server refuses the new token too; what the
   *   OAuth client throws (OAuthError, the provider's refusal); `signal.reason`.
   */
  async send(
    configured: Record<string, string>,
    send: (headers: Record<string, string>) => Promise<Dispatcher.ResponseData>,
    signal: AbortSignal,
  ): Promise<Dispatcher.ResponseData> {
    let reauthorized = false;
    let stepUps = 0;
    for (;;) {
      const token = await this.client.accessToken(signal);
      const res = await send(HttpAuth.withToken(configured, token));
      const status = res.statusCode;
      if (status !== 401 && status !== 403) return res;
      const header = headerValue(res.headers, "www-authenticate");
      const challenge = await parseBearerChallenge(header);
      // A challenge of another scheme only (Basic, ...) is not OAuth's to answer.
      const bearer = header === undefined || challenge !== undefined;
      if (status === 401 && bearer) {
        discardBody(res.body);
        if (reauthorized) throw await this.rejected(challenge);
        reauthorized = true;
        await this.client.unauthorized(challenge, token, signal);
        continue;
      }
      if (status === 403 && stepUps < TRANSPORT_DEFAULTS.oauthStepUpAttempts && challenge?.error === "insufficient_scope") {
        stepUps++;
        discardBody(res.body);
        await this.client.insufficientScope(challenge, token, signal);
        continue;
      }
      return res;
    }
  }

  /** The error of a 401 to a token obtained for the very request the server refused: no second try. */
  private async rejected(challenge: BearerChallenge | undefined): Promise<OAuthError> {
    const issuer = (await this.client.tokens().catch(() => undefined))?.issuer;
    const why = challenge?.error ? ` (${oauthErrorText(challenge.error, challenge.errorDescription)})` : "";
    return new OAuthError(
      "MCPD_OAUTH_TOKEN_REJECTED",
      `${urlLabel(this.client.serverUrl)} answered HTTP 401${why} to an access token just obtained${issuer ? ` from ${issuer}` : ""}: ` +
        "not trying again (one new token per refused request); the server or its authorization server is misconfigured",
    );
  }
}
