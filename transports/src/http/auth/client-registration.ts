import { OAuthError, PROTOCOL_DEFAULTS, quote } from "@mcpd/protocol";
import { urlLabel } from "../../url-label.js";
import { errorText } from "../http-wire.js";
import type { AuthServerMetadata } from "./auth-server-metadata.js";
import { knownMethod, secretMethod, type ClientAuthMethod } from "./client-authentication.js";
import { isSecureEndpoint, oauthRequest, type OAuthHttp, type OAuthResponse } from "./oauth-http.js";
import type { ClientRegistration, OAuthSettings } from "./oauth-provider.js";

/**
 * The method to ask for in a registration: `none` (mcpd is a public client on the user's machine) when
 * the server allows it or says nothing, else a secret method it lists.
 */
function requestedMethod(server: AuthServerMetadata): ClientAuthMethod {
  const supported = server.tokenEndpointAuthMethods;
  if (supported === undefined || supported.includes("none")) return "none";
  return secretMethod(server);
}

/**
 * Dynamic Client Registration (RFC 7591): registers mcpd as a native client with the loopback
 * `redirectUri`, for the authorization code grant (with refresh tokens).
 * @throws OAuthError (`MCPD_OAUTH_REGISTRATION_FAILED`) when the server has no registration endpoint, the
 *   endpoint is neither https nor on this machine, or it refuses (its `error` and description quoted).
 */
export async function registerClient(
  http: OAuthHttp,
  server: AuthServerMetadata,
  settings: OAuthSettings,
  redirectUri: string,
  signal?: AbortSignal,
): Promise<ClientRegistration> {
  if (!server.registrationEndpoint) {
    throw new OAuthError(
      "MCPD_OAUTH_REGISTRATION_FAILED",
      `the authorization server ${server.issuer} offers no dynamic client registration and no client id is configured: ` +
        `register a client with it and set "auth": {"clientId": ...} for this server`,
    );
  }
  const endpoint = new URL(server.registrationEndpoint);
  if (!isSecureEndpoint(endpoint)) {
    throw new OAuthError(
      "MCPD_OAUTH_REGISTRATION_FAILED",
      `registration endpoint ${urlLabel(endpoint)} is neither https nor on this machine`,
    );
  }
  const method = requestedMethod(server);
  const body = {
    client_name: settings.clientName ?? "mcpd",
    redirect_uris: [redirectUri],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: method,
    ...(settings.scopes?.length ? { scope: settings.scopes.join(" ") } : {}),
  };
  let res: OAuthResponse;
  try {
    res = await oauthRequest(
      http,
      endpoint,
      { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
      signal,
    );
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    throw new OAuthError("MCPD_OAUTH_REGISTRATION_FAILED", `registration at ${urlLabel(endpoint)} failed: ${errorText(err)}`, {
      cause: err,
    });
  }
  const doc = res.json;
  if (res.status < 200 || res.status > 299 || !doc || typeof doc.client_id !== "string" || doc.client_id === "") {
    const oauthError = typeof doc?.error === "string" ? quote(doc.error, PROTOCOL_DEFAULTS.quotedNameChars) : undefined;
    const description =
      typeof doc?.error_description === "string" ? `: ${quote(doc.error_description, PROTOCOL_DEFAULTS.quotedDescriptionChars)}` : "";
    throw new OAuthError(
      "MCPD_OAUTH_REGISTRATION_FAILED",
      `registration at ${urlLabel(endpoint)} refused (HTTP ${res.status}${oauthError ? `, ${oauthError}` : ""}${description})`,
      oauthError ? { oauthError } : {},
    );
  }
  const registration: ClientRegistration = {
    issuer: server.issuer,
    clientId: doc.client_id,
    redirectUris: [redirectUri],
  };
  if (typeof doc.client_secret === "string" && doc.client_secret !== "") registration.clientSecret = doc.client_secret;
  if (typeof doc.client_secret_expires_at === "number" && doc.client_secret_expires_at > 0) {
    registration.clientSecretExpiresAt = doc.client_secret_expires_at * 1000;
  }
  const granted = typeof doc.token_endpoint_auth_method === "string" ? knownMethod(doc.token_endpoint_auth_method) : undefined;
  // The server's answer decides; without one, a secret means a secret method and none means `none`.
  registration.tokenEndpointAuthMethod = granted ?? (registration.clientSecret ? secretMethod(server) : "none");
  return registration;
}

/** Whether a stored registration can still be used with `server` (same issuer, secret not expired). */
export function registrationUsable(registration: ClientRegistration | undefined, server: AuthServerMetadata, now = Date.now()): boolean {
  if (!registration || registration.issuer !== server.issuer) return false;
  return registration.clientSecretExpiresAt === undefined || registration.clientSecretExpiresAt > now;
}
