import type { AuthorizationServer, Client, ClientAuth } from "oauth4webapi";
import { ConfigError } from "@mcpd/protocol";
import { oauthLibrary } from "./oauth-http.js";
import type { ClientRegistration, OAuthProvider, OAuthSettings } from "./oauth-provider.js";
import { importSigningKey } from "./signing-key.js";

/** How the client authenticates at the token endpoint (RFC 8414 `token_endpoint_auth_method` values mcpd speaks). */
export type ClientAuthMethod = "none" | "client_secret_basic" | "client_secret_post" | "client_secret_jwt" | "private_key_jwt";

const METHODS: readonly ClientAuthMethod[] = ["none", "client_secret_basic", "client_secret_post", "client_secret_jwt", "private_key_jwt"];

/** The client as the token endpoint sees it. */
export interface ClientIdentity {
  clientId: string;
  clientSecret?: string;
  method: ClientAuthMethod;
  /** Where it came from: the config, a Client ID Metadata Document URL, or a registration. */
  source: "configured" | "metadata-document" | "registered";
  registration?: ClientRegistration;
}

/** A registration's or the server's method name as one mcpd speaks, or undefined. */
export function knownMethod(value: unknown): ClientAuthMethod | undefined {
  return METHODS.find((m) => m === value);
}

/**
 * The method for a client with a secret, as the server's metadata allows: basic when listed or the list
 * is absent (RFC 8414's default), else post, else client_secret_jwt when listed, else basic.
 */
export function secretMethod(server: AuthorizationServer): ClientAuthMethod {
  const supported = server.token_endpoint_auth_methods_supported;
  if (supported === undefined || supported.includes("client_secret_basic")) return "client_secret_basic";
  return (["client_secret_post", "client_secret_jwt"] as const).find((m) => supported.includes(m)) ?? "client_secret_basic";
}

/** Whether `url` may be a Client ID Metadata Document's client id: https with a path. */
export function isMetadataDocumentUrl(url: string): boolean {
  if (!URL.canParse(url)) return false;
  const u = new URL(url);
  return u.protocol === "https:" && u.pathname !== "/" && u.pathname !== "";
}

/** Whether a stored registration can still be used with `server` (same issuer, secret not expired). */
export function registrationUsable(registration: ClientRegistration | undefined, server: AuthorizationServer, now = Date.now()): boolean {
  if (!registration || registration.issuer !== server.issuer) return false;
  return registration.clientSecretExpiresAt === undefined || registration.clientSecretExpiresAt > now;
}

/**
 * The client identity to use with `server` without registering, in the spec's order of preference:
 * the configured `clientId`; the configured `clientMetadataUrl` (a Client ID Metadata Document) when the
 * server supports them; a stored registration with this issuer. Undefined: the caller registers.
 */
export async function knownClient(
  settings: OAuthSettings,
  provider: OAuthProvider,
  server: AuthorizationServer,
): Promise<ClientIdentity | undefined> {
  if (settings.clientId !== undefined) {
    const method =
      settings.privateKey !== undefined ? "private_key_jwt" : settings.clientSecret !== undefined ? secretMethod(server) : "none";
    return {
      clientId: settings.clientId,
      ...(settings.clientSecret !== undefined ? { clientSecret: settings.clientSecret } : {}),
      method,
      source: "configured",
    };
  }
  const cimd = settings.clientMetadataUrl;
  if (cimd !== undefined && server.client_id_metadata_document_supported === true && isMetadataDocumentUrl(cimd)) {
    return { clientId: cimd, method: settings.privateKey !== undefined ? "private_key_jwt" : "none", source: "metadata-document" };
  }
  const stored = await provider.registration(server.issuer);
  return stored && registrationUsable(stored, server) ? registeredIdentity(stored, server) : undefined;
}

/** The identity of a registration with `server`: the method it was registered with, else one that fits its secret (or none). */
export function registeredIdentity(registration: ClientRegistration, server: AuthorizationServer): ClientIdentity {
  const secret = registration.clientSecret;
  const method = knownMethod(registration.tokenEndpointAuthMethod) ?? (secret !== undefined ? secretMethod(server) : "none");
  return {
    clientId: registration.clientId,
    ...(secret !== undefined ? { clientSecret: secret } : {}),
    method,
    source: "registered",
    registration,
  };
}

/**
 * The client and its authentication as oauth4webapi takes them: `None`, `ClientSecretBasic`,
 * `ClientSecretPost`, `ClientSecretJwt`, or `PrivateKeyJwt` with the configured key.
 * @throws ConfigError when the method needs a secret or a key the settings lack, or the key is unusable.
 */
export async function clientAuthentication(
  identity: ClientIdentity,
  server: AuthorizationServer,
  settings: OAuthSettings,
): Promise<{ client: Client; auth: ClientAuth }> {
  const lib = await oauthLibrary();
  const client: Client = { client_id: identity.clientId, token_endpoint_auth_method: identity.method };
  const secret = (): string => {
    if (identity.clientSecret !== undefined) return identity.clientSecret;
    throw new ConfigError(
      `auth: client ${JSON.stringify(identity.clientId)} authenticates with a secret, but none is known (set "clientSecret")`,
    );
  };
  switch (identity.method) {
    case "none":
      return { client, auth: lib.None() };
    case "client_secret_basic": {
      // oauth4webapi's ClientSecretBasic also escapes "-", "." and "_", which servers that do not decode
      // the pair (many, and the conformance suite's) then refuse; form encoding as browsers do leaves them.
      const pair = `${formEncode(identity.clientId)}:${formEncode(secret())}`;
      return {
        client,
        auth: (_as, _client, _body, headers) => headers.set("authorization", `Basic ${Buffer.from(pair).toString("base64")}`),
      };
    }
    case "client_secret_post":
      return { client, auth: lib.ClientSecretPost(secret()) };
    case "client_secret_jwt":
      return { client, auth: lib.ClientSecretJwt(secret()) };
    case "private_key_jwt": {
      if (settings.privateKey === undefined) {
        throw new ConfigError(`auth: the authorization server wants private_key_jwt, but no "privateKey" is configured`);
      }
      const { key, alg } = await importSigningKey(
        settings.privateKey,
        settings.signingAlgorithm,
        server.token_endpoint_auth_signing_alg_values_supported,
      );
      return { client, auth: lib.PrivateKeyJwt(key, { [lib.modifyAssertion]: (header) => void (header.alg = alg) }) };
    }
  }
}

/** application/x-www-form-urlencoded encoding of one credential (RFC 6749 section 2.3.1). */
function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, "+");
}
