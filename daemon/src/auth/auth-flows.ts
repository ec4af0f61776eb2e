import {
  McpdError,
  OAuthError,
  WireCode,
  silentLogger,
  type AuthLogoutResult,
  type AuthStartResult,
  type AuthWaitResult,
  type Logger,
} from "@mcpd/protocol";
import { OAuthClient, type AuthorizationContext, type BearerChallenge, type OAuthClock, type OAuthProvider } from "@mcpd/transports";
import type { ResolvedServerConfig } from "../config/config-schema.js";
import { RUNTIME_DEFAULTS } from "../defaults.js";
import type { MCPManager } from "../supervision/manager.js";
import type { AuthStore } from "./auth-store.js";
import { ServerAuth, oauthSettings } from "./server-auth.js";

/**
 * Whether mcpd runs OAuth for a server: an http or sse server, unless its config says `"auth": false` or
 * it sends its own `Authorization` header (and has no `auth` object).
 */
export function oauthApplies(config: ResolvedServerConfig): boolean {
  const t = config.transport;
  if (t.type !== "http" && t.type !== "sse") return false;
  if (config.auth === false) return false;
  if (config.auth !== undefined) return true;
  return !Object.keys(t.headers ?? {}).some((h) => h.toLowerCase() === "authorization");
}

/** One `mcpd auth` in progress (or finished and not yet waited for). */
interface Flow {
  client: OAuthClient;
  /** The URL handed out, or null once the flow ended without one. */
  started: Promise<{ url: string; scopes: string[]; redirectUri: string | null } | null>;
  done: Promise<AuthWaitResult>;
}

/**
 * OAuth in the daemon: the provider each server's transport runs with ({@link providerFor}; tokens from
 * the {@link AuthStore}, nobody to ask), and the `mcpd auth` flows, run here so that tokens never leave
 * the daemon: {@link start} discovers, registers, listens on the loopback redirect and answers with the
 * URL to open; {@link wait} waits for the browser, stores the tokens and restarts the server; {@link logout}
 * forgets them. What a server's transport last wanted (scopes, resource metadata) starts the next flow.
 */
export class AuthFlows {
  private readonly flows = new Map<string, Flow>();
  /** What each server's transport last needed the user for. */
  private readonly needed = new Map<string, AuthorizationContext>();

  constructor(
    private readonly store: AuthStore,
    private readonly manager: MCPManager,
    private readonly log: Logger = silentLogger,
    private readonly timeoutMs: number = RUNTIME_DEFAULTS.authFlowTimeoutMs,
    /** The clock of the servers' token lifetimes (tests inject a fake one); default the real one. */
    private readonly clock?: OAuthClock,
  ) {}

  /** The OAuth provider for a server's transport, or undefined when OAuth does not apply ({@link oauthApplies}). */
  providerFor(config: ResolvedServerConfig): OAuthProvider | undefined {
    if (!oauthApplies(config)) return undefined;
    return new ServerAuth(config.name, config.auth || undefined, this.store, (name, context) => this.needed.set(name, context), this.clock);
  }

  /**
   * Begins authorizing `server` (abandoning any authorization of it still waiting). Resolves with the URL
   * to open once the flow reached it, or with `url: null` when the flow finished without a user (client
   * credentials).
   * @throws NotFoundError for an unknown server; McpdError `MCPD_AUTH_NOT_APPLICABLE` when OAuth does not
   *   apply to it; what the flow threw before it reached the URL (OAuthError, network errors).
   */
  async start(server: string): Promise<AuthStartResult> {
    const handle = this.manager.require(server);
    const config = handle.config;
    if (!oauthApplies(config)) {
      const why =
        config.transport.type !== "http" && config.transport.type !== "sse"
          ? `it is a ${config.transport.type ?? "stdio"} server (OAuth applies to http and sse servers)`
          : config.auth === false
            ? `its config says "auth": false`
            : `it sends its own "Authorization" header (remove it, or add an "auth" object instead)`;
      throw new McpdError("MCPD_AUTH_NOT_APPLICABLE", `Server "${server}" does not use OAuth: ${why}`, {
        wireCode: WireCode.InvalidParams,
      });
    }
    this.abandon(server, "a new `mcpd auth` started");
    let announce: (value: { url: string; scopes: string[]; redirectUri: string | null }) => void = () => {};
    const announced = new Promise<{ url: string; scopes: string[]; redirectUri: string | null }>((resolve) => (announce = resolve));
    const provider: OAuthProvider = {
      settings: oauthSettings(config.auth || undefined),
      tokens: () => this.store.tokens(server),
      saveTokens: (tokens) => this.store.saveTokens(server, tokens),
      registration: (issuer) => this.store.registration(server, issuer),
      saveRegistration: (issuer, registration) => this.store.saveRegistration(server, issuer, registration),
      redirect: (url, context) => announce({ url: url.href, scopes: context.scopes, redirectUri: url.searchParams.get("redirect_uri") }),
    };
    const url = new URL((config.transport as { url: string }).url);
    const client = new OAuthClient(url, provider, { logger: this.log, authorizationTimeoutMs: this.timeoutMs });
    const done = this.run(server, client);
    const flow: Flow = { client, started: Promise.race([announced, done.then(() => null)]), done };
    done.catch(() => {}); // waited for by wait(), or abandoned
    this.flows.set(server, flow);
    const started = await flow.started;
    return { server, url: started?.url ?? null, scopes: started?.scopes ?? [], redirectUri: started?.redirectUri ?? null };
  }

  /**
   * Waits for the authorization {@link start} began to finish (bounded by `RUNTIME_DEFAULTS.authFlowTimeoutMs`
   * for the browser), then answers with the scopes granted and the server's state after its restart.
   * @throws McpdError `MCPD_AUTH_NOT_STARTED` when none was started; what the flow threw.
   */
  async wait(server: string): Promise<AuthWaitResult> {
    this.manager.require(server);
    const flow = this.flows.get(server);
    if (!flow) {
      throw new McpdError("MCPD_AUTH_NOT_STARTED", `No authorization of "${server}" is in progress; run \`mcpd auth ${server}\``, {
        wireCode: WireCode.InvalidParams,
      });
    }
    try {
      return await flow.done;
    } finally {
      if (this.flows.get(server) === flow) this.flows.delete(server);
    }
  }

  /** Forgets a server's tokens and registration and restarts it (it ends `needs-auth` if it wants OAuth). */
  async logout(server: string): Promise<AuthLogoutResult> {
    const handle = this.manager.require(server);
    this.abandon(server, "signed out with `mcpd auth --logout`");
    const forgotten = this.store.forget(server);
    this.needed.delete(server);
    this.log.info({ server, forgotten }, "OAuth tokens and registration forgotten");
    await this.restartAll(server, "signed out with mcpd auth --logout");
    return { server, forgotten, state: handle.state };
  }

  /** Ends every flow waiting (daemon shutdown). */
  close(): void {
    for (const server of [...this.flows.keys()]) this.abandon(server, "mcpd is shutting down");
  }

  private abandon(server: string, why: string): void {
    const flow = this.flows.get(server);
    if (!flow) return;
    this.flows.delete(server);
    flow.client.close(new OAuthError("MCPD_OAUTH_AUTHORIZATION_FAILED", `the authorization was abandoned: ${why}`));
  }

  /** The flow: what the server asks for (remembered, else probed), the authorization, the restart. */
  private async run(server: string, client: OAuthClient): Promise<AuthWaitResult> {
    const remembered = this.needed.get(server);
    const challenge: BearerChallenge | undefined = remembered
      ? {
          ...(remembered.scopes.length > 0 ? { scopes: remembered.scopes } : {}),
          ...(remembered.resourceMetadataUrl ? { resourceMetadata: remembered.resourceMetadataUrl } : {}),
        }
      : await client.probe();
    const tokens = await client.authorize(challenge, "requested with mcpd auth");
    this.needed.delete(server);
    this.log.info({ server, scopes: tokens.scopes }, "authorized with mcpd auth");
    await this.restartAll(server, "authorized with mcpd auth");
    const handle = this.manager.require(server);
    return { server, scopes: tokens.scopes, state: handle.state, stateReason: handle.stateReason };
  }

  /** Restarts the server and its private (per-client) sessions, so they use the new tokens (or none). */
  private async restartAll(server: string, reason: string): Promise<void> {
    await this.manager.restartServer(server, reason);
  }
}
