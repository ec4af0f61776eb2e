import type { AuthorizationServer } from "oauth4webapi";
import { isObject, OAuthError } from "@mcpd/protocol";
import { urlLabel } from "../../url-label.js";
import { knownMethod, registeredIdentity, secretMethod, type ClientIdentity } from "./client-identity.js";
import { libraryOptions, oauthLibrary, type OAuthHttp } from "./oauth-http.js";
import type { ClientRegistration, OAuthSettings } from "./oauth-provider.js";
import { oauthFailure } from "./token-request.js";

/**
 * Dynamic Client Registration (RFC 7591) through oauth4webapi: mcpd registers as a native application
 * (`application_type: "native"`, SEP-837: its redirect is a loopback URI) for the authorization code
 * grant with refresh tokens, asking for `none` (a public client on the user's machine) when the server
 * allows it, else a secret method it lists. The registration is for this issuer only.
 * @throws OAuthError `MCPD_OAUTH_REGISTRATION_FAILED` when the server has no registration endpoint or
 *   refuses (its `error` quoted); `signal.reason`.
 */
export async function registerClient(
  http: OAuthHttp,
  server: AuthorizationServer,
  settings: OAuthSettings,
  redirectUri: string,
  signal?: AbortSignal,
): Promise<ClientIdentity> {
  if (!server.registration_endpoint) {
    throw new OAuthError(
      "MCPD_OAUTH_REGISTRATION_FAILED",
      `the authorization server ${server.issuer} offers no dynamic client registration and no client id is configured: ` +
        `register a client with it and set "auth": {"clientId": ...} for this server`,
    );
  }
  const lib = await oauthLibrary();
  const supported = server.token_endpoint_auth_methods_supported;
  const method = supported === undefined || supported.includes("none") ? "none" : secretMethod(server);
  let doc: Awaited<ReturnType<typeof lib.processDynamicClientRegistrationResponse>>;
  try {
    const res = await lib.dynamicClientRegistrationRequest(
      server,
      {
        client_name: settings.clientName ?? "mcpd",
        application_type: "native",
        redirect_uris: [redirectUri],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: method,
        ...(settings.scopes?.length ? { scope: settings.scopes.join(" ") } : {}),
      },
      libraryOptions(lib, http, signal),
    );
    doc = await lib.processDynamicClientRegistrationResponse(await withSecretExpiry(res));
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    throw oauthFailure("MCPD_OAUTH_REGISTRATION_FAILED", `registration at ${urlLabel(new URL(server.registration_endpoint))}`, err);
  }
  const registration: ClientRegistration = { issuer: server.issuer, clientId: doc.client_id, redirectUris: [redirectUri] };
  if (typeof doc.client_secret === "string" && doc.client_secret !== "") registration.clientSecret = doc.client_secret;
  const expires = doc.client_secret_expires_at;
  if (typeof expires === "number" && expires > 0) registration.clientSecretExpiresAt = expires * 1000;
  // The server's answer decides; without one, a secret means a secret method and none means `none`.
  const registered = knownMethod(doc.token_endpoint_auth_method);
  if (registered) registration.tokenEndpointAuthMethod = registered;
  return registeredIdentity(registration, server);
}

/**
 * The registration answer with `client_secret_expires_at: 0` (never) added where it issues a secret
 * without one: RFC 7591 requires the field then, oauth4webapi insists, and servers (the conformance
 * suite's among them) leave it out.
 */
async function withSecretExpiry(res: Response): Promise<Response> {
  if (res.status !== 201) return res;
  const text = await res.text();
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return new Response(text, res);
  }
  if (!isObject(doc) || typeof doc.client_secret !== "string" || doc.client_secret_expires_at !== undefined) return new Response(text, res);
  return new Response(JSON.stringify({ ...doc, client_secret_expires_at: 0 }), res);
}
