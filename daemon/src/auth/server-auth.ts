import { readFileSync } from "node:fs";
import { AuthRequiredError, ConfigError } from "@mcpd/protocol";
import type { AuthorizationContext, ClientRegistration, OAuthClock, OAuthProvider, OAuthSettings, OAuthTokens } from "@mcpd/transports";
import type { AuthConfig } from "../config/config-schema.js";
import type { AuthStore } from "./auth-store.js";

/**
 * The client settings of a server's `auth`: `privateKeyFile` becomes `privateKey`, read each time a
 * token request needs it (so a replaced key file is used without a reload).
 * @throws (when the key is needed) ConfigError naming the file that cannot be read.
 */
export function oauthSettings(auth: AuthConfig | undefined): OAuthSettings {
  if (!auth) return {};
  const { privateKeyFile, ...settings } = auth;
  if (privateKeyFile === undefined) return settings;
  return Object.defineProperty({ ...settings }, "privateKey", {
    enumerable: true,
    get(): string {
      try {
        return readFileSync(privateKeyFile, "utf8");
      } catch (err) {
        throw new ConfigError(
          `auth: cannot read "privateKeyFile" ${privateKeyFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
        );
      }
    },
  });
}

/**
 * The OAuth provider a server's transport runs with inside the daemon: tokens and registration from the
 * {@link AuthStore}; nobody to ask, so an authorization that needs the user is refused with
 * {@link AuthRequiredError} (-32076) naming `mcpd auth SERVER`, after telling `onNeeded` what it would have
 * asked for (the next `mcpd auth` starts from there).
 */
export class ServerAuth implements OAuthProvider {
  readonly settings: OAuthSettings;

  constructor(
    private readonly server: string,
    auth: AuthConfig | undefined,
    private readonly store: AuthStore,
    private readonly onNeeded: (server: string, context: AuthorizationContext) => void,
    readonly clock?: OAuthClock,
  ) {
    this.settings = oauthSettings(auth);
  }

  tokens(): OAuthTokens | undefined {
    return this.store.tokens(this.server);
  }

  saveTokens(tokens: OAuthTokens | undefined): void {
    this.store.saveTokens(this.server, tokens);
  }

  registration(issuer: string): ClientRegistration | undefined {
    return this.store.registration(this.server, issuer);
  }

  saveRegistration(issuer: string, registration: ClientRegistration | undefined): void {
    this.store.saveRegistration(this.server, issuer, registration);
  }

  authorizationNeeded(context: AuthorizationContext): void {
    this.onNeeded(this.server, context);
    throw new AuthRequiredError(this.server, context.reason, { stepUp: context.stepUp });
  }

  redirect(_url: URL, context: AuthorizationContext): void {
    throw new AuthRequiredError(this.server, context.reason, { stepUp: context.stepUp });
  }
}
