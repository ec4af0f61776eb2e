import type { AuthServerMetadata } from "./auth-server-metadata.js";
import { configuredMethod, knownMethod, secretMethod, type ClientIdentity } from "./client-authentication.js";
import { registrationUsable } from "./client-registration.js";
import type { ClientRegistration, OAuthProvider, OAuthSettings } from "./oauth-provider.js";

/** Whether `url` may be a Client ID Metadata Document's client id: https with a path. */
export function isMetadataDocumentUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === "https:" && u.pathname !== "/" && u.pathname !== "";
  } catch {
    return false;
  }
}

/**
 * The client identity to use with `server` without registering, in the spec's order of preference:
 * 1. the pre-registered `clientId` of the settings (with its secret or key);
 * 2. the settings' `clientMetadataUrl` as client id, when the server supports Client ID Metadata Documents;
 * 3. a stored registration with this server (same issuer, secret not expired).
 * Undefined when none applies: the caller registers (Dynamic Client Registration) or gives up.
 */
export async function knownClient(
  settings: OAuthSettings,
  provider: OAuthProvider,
  server: AuthServerMetadata,
): Promise<{ identity: ClientIdentity; registration?: ClientRegistration } | undefined> {
  if (settings.clientId !== undefined) {
    return {
      identity: {
        clientId: settings.clientId,
        ...(settings.clientSecret !== undefined ? { clientSecret: settings.clientSecret } : {}),
        authMethod: configuredMethod(settings, server),
        source: "configured",
      },
    };
  }
  if (settings.clientMetadataUrl !== undefined && server.clientIdMetadataDocuments && isMetadataDocumentUrl(settings.clientMetadataUrl)) {
    return {
      identity: {
        clientId: settings.clientMetadataUrl,
        authMethod: settings.privateKey !== undefined ? "private_key_jwt" : "none",
        source: "metadata-document",
      },
    };
  }
  const stored = await provider.registration();
  if (stored && registrationUsable(stored, server)) return { identity: registeredIdentity(stored, server), registration: stored };
  return undefined;
}

/** The identity a registration gives. */
export function registeredIdentity(registration: ClientRegistration, server: AuthServerMetadata): ClientIdentity {
  const method =
    knownMethod(registration.tokenEndpointAuthMethod) ?? (registration.clientSecret !== undefined ? secretMethod(server) : "none");
  return {
    clientId: registration.clientId,
    ...(registration.clientSecret !== undefined ? { clientSecret: registration.clientSecret } : {}),
    authMethod: method,
    source: "registered",
  };
}
