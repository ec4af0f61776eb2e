import type { JsonObject } from "@mcpd/protocol";
import { firstDocument, type OAuthHttp } from "./oauth-http.js";

/** An authorization server's metadata (RFC 8414 / OpenID Connect discovery), the parts mcpd uses. */
export interface AuthServerMetadata {
  /** The issuer (as the document says, else the URL it was discovered from). */
  issuer: string;
  authorizationEndpoint?: string;
  tokenEndpoint: string;
  registrationEndpoint?: string;
  scopesSupported?: string[];
  /** `code_challenge_methods_supported`; undefined when absent (no PKCE: refused, see the caller). */
  codeChallengeMethods?: string[];
  /** `token_endpoint_auth_methods_supported`; undefined when absent (RFC 8414: client_secret_basic then). */
  tokenEndpointAuthMethods?: string[];
  /** `token_endpoint_auth_signing_alg_values_supported`, for private_key_jwt. */
  signingAlgorithms?: string[];
  grantTypes?: string[];
  /** `client_id_metadata_document_supported`. */
  clientIdMetadataDocuments: boolean;
  /** false: no metadata was found and these are the 2025-03-26 default endpoints. */
  discovered: boolean;
}

/**
 * The metadata URLs of an issuer, in the MCP spec's order. With a path (`https://a/tenant1`): RFC 8414
 * with the path inserted, OpenID Connect with the path inserted, OpenID Connect with the path appended.
 * Without: RFC 8414, then OpenID Connect, at the root.
 */
export function authServerMetadataUrls(issuer: URL): URL[] {
  const path = issuer.pathname.replace(/\/+$/, "");
  const origin = issuer.origin;
  if (path === "") {
    return [new URL("/.well-known/oauth-authorization-server", origin), new URL("/.well-known/openid-configuration", origin)];
  }
  return [
    new URL(`/.well-known/oauth-authorization-server${path}`, origin),
    new URL(`/.well-known/openid-configuration${path}`, origin),
    new URL(`${path}/.well-known/openid-configuration`, origin),
  ];
}

/**
 * Fetches the first metadata document found for `issuer` ({@link authServerMetadataUrls}). Undefined
 * when none answers with one; `problems` collects what each attempt said.
 */
export async function fetchAuthServerMetadata(
  http: OAuthHttp,
  issuer: URL,
  problems: string[],
  signal?: AbortSignal,
): Promise<AuthServerMetadata | undefined> {
  const read = (doc: JsonObject): AuthServerMetadata | string => readMetadata(doc, issuer) ?? 'no valid "token_endpoint"';
  return firstDocument(http, authServerMetadataUrls(issuer), read, problems, signal);
}

/**
 * The 2025-03-26 fallback for a server without metadata: the default endpoints `/authorize`, `/token` and
 * `/register` at the base URL (the server URL without its path), PKCE assumed.
 */
export function defaultEndpoints(base: URL): AuthServerMetadata {
  return {
    issuer: base.origin,
    authorizationEndpoint: new URL("/authorize", base.origin).href,
    tokenEndpoint: new URL("/token", base.origin).href,
    registrationEndpoint: new URL("/register", base.origin).href,
    codeChallengeMethods: ["S256"],
    clientIdMetadataDocuments: false,
    discovered: false,
  };
}

function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : undefined;
}

function endpoint(value: unknown, base: URL): string | undefined {
  if (typeof value !== "string" || value === "") return undefined;
  try {
    return new URL(value, base).href;
  } catch {
    return undefined;
  }
}

function readMetadata(doc: JsonObject, issuer: URL): AuthServerMetadata | undefined {
  const tokenEndpoint = endpoint(doc.token_endpoint, issuer);
  if (!tokenEndpoint) return undefined;
  const out: AuthServerMetadata = {
    issuer: typeof doc.issuer === "string" && doc.issuer !== "" ? doc.issuer : issuer.href.replace(/\/$/, ""),
    tokenEndpoint,
    clientIdMetadataDocuments: doc.client_id_metadata_document_supported === true,
    discovered: true,
  };
  const authorization = endpoint(doc.authorization_endpoint, issuer);
  if (authorization) out.authorizationEndpoint = authorization;
  const registration = endpoint(doc.registration_endpoint, issuer);
  if (registration) out.registrationEndpoint = registration;
  const optional: [keyof AuthServerMetadata, unknown][] = [
    ["scopesSupported", doc.scopes_supported],
    ["codeChallengeMethods", doc.code_challenge_methods_supported],
    ["tokenEndpointAuthMethods", doc.token_endpoint_auth_methods_supported],
    ["signingAlgorithms", doc.token_endpoint_auth_signing_alg_values_supported],
    ["grantTypes", doc.grant_types_supported],
  ];
  for (const [key, value] of optional) {
    const list = strings(value);
    if (list) (out as unknown as Record<string, unknown>)[key] = list;
  }
  return out;
}
