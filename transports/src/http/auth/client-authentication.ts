import { ConfigError } from "@mcpd/protocol";
import type { AuthServerMetadata } from "./auth-server-metadata.js";
import { chooseAlgorithm, clientAssertion, readPrivateKey } from "./jwt-assertion.js";
import type { OAuthSettings } from "./oauth-provider.js";

/** How the client authenticates at the token endpoint (RFC 8414 `token_endpoint_auth_method` values). */
export type ClientAuthMethod = "none" | "client_secret_basic" | "client_secret_post" | "private_key_jwt";

/** The client as the token endpoint sees it. */
export interface ClientIdentity {
  clientId: string;
  clientSecret?: string;
  authMethod: ClientAuthMethod;
  /** Where it came from, for messages: the config, a metadata document URL, or a registration. */
  source: "configured" | "metadata-document" | "registered";
}

const METHODS: readonly ClientAuthMethod[] = ["none", "client_secret_basic", "client_secret_post", "private_key_jwt"];

/** A registration's or the server's method name as one mcpd speaks, or undefined. */
export function knownMethod(value: string | undefined): ClientAuthMethod | undefined {
  return METHODS.find((m) => m === value);
}

/**
 * The method for a client with a secret, as the server's metadata allows: `client_secret_basic` when it
 * is listed or the list is absent (RFC 8414's default), else `client_secret_post` when listed, else basic.
 */
export function secretMethod(server: AuthServerMetadata): ClientAuthMethod {
  const supported = server.tokenEndpointAuthMethods;
  if (supported === undefined || supported.includes("client_secret_basic")) return "client_secret_basic";
  if (supported.includes("client_secret_post")) return "client_secret_post";
  return "client_secret_basic";
}

/** The method for a client configured with `settings`: private_key_jwt with a key, a secret method with a secret, else none. */
export function configuredMethod(settings: OAuthSettings, server: AuthServerMetadata): ClientAuthMethod {
  if (settings.privateKey !== undefined) return "private_key_jwt";
  if (settings.clientSecret !== undefined) return secretMethod(server);
  return "none";
}

/** Form-urlencoding of one credential, as RFC 6749 section 2.3.1 wants before Basic encoding. */
function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, "+");
}

/**
 * The headers and form fields that authenticate `client` in one token request:
 * - `none`: `client_id` in the form;
 * - `client_secret_basic`: `Authorization: Basic base64(id:secret)` (each form-encoded first);
 * - `client_secret_post`: `client_id` and `client_secret` in the form;
 * - `private_key_jwt`: `client_id`, `client_assertion_type` and a signed `client_assertion` (RFC 7523)
 *   whose audience is the server's issuer.
 * @throws ConfigError when the method needs a secret or a key the settings lack.
 */
export function clientAuthentication(
  client: ClientIdentity,
  server: AuthServerMetadata,
  settings: OAuthSettings,
): { headers: Record<string, string>; fields: Record<string, string> } {
  switch (client.authMethod) {
    case "none":
      return { headers: {}, fields: { client_id: client.clientId } };
    case "client_secret_basic": {
      const secret = needSecret(client);
      const pair = `${formEncode(client.clientId)}:${formEncode(secret)}`;
      return { headers: { authorization: `Basic ${Buffer.from(pair).toString("base64")}` }, fields: {} };
    }
    case "client_secret_post":
      return { headers: {}, fields: { client_id: client.clientId, client_secret: needSecret(client) } };
    case "private_key_jwt": {
      if (settings.privateKey === undefined) {
        throw new ConfigError(`auth: the authorization server wants private_key_jwt, but no "privateKey" is configured`);
      }
      const key = readPrivateKey(settings.privateKey);
      const alg = chooseAlgorithm(key, settings.signingAlgorithm, server.signingAlgorithms);
      return {
        headers: {},
        fields: {
          client_id: client.clientId,
          client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
          client_assertion: clientAssertion(key, alg, client.clientId, server.issuer),
        },
      };
    }
  }
}

function needSecret(client: ClientIdentity): string {
  if (client.clientSecret === undefined) {
    throw new ConfigError(
      `auth: client ${JSON.stringify(client.clientId)} authenticates with a secret, but none is known (set "clientSecret")`,
    );
  }
  return client.clientSecret;
}
