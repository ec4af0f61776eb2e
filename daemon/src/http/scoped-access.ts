import type { ServerResponse } from "node:http";
import {
  McpdError,
  WireCode,
  type HttpTokenInfo,
  type HttpTokenIssueParams,
  type HttpTokenIssueResult,
  type HttpTokenListResult,
  type HttpTokenRevokeResult,
  type HttpTokenScope,
  type Logger,
} from "@mcpd/protocol";
import type { Router } from "../router/router.js";
import { ViewFilter } from "../router/view-filter.js";
import type { HttpTokenAdmin } from "../control/http-token-control.js";
import type { Route } from "./http-routes.js";
import type { HttpSessions } from "./http-sessions.js";
import { ScopedTokenStore, type ScopedToken } from "./scoped-tokens.js";
import { TokenHolders } from "./token-holders.js";
import { describeScope, scopeAllows, scopeEndpoint } from "./token-scope.js";

export interface ScopedAccessOptions {
  /** The file the tokens' digests are kept in (0600, in the state directory). */
  file: string;
  /** How many may exist at once. */
  max: number;
  router: Router;
  sessions: HttpSessions;
  log: Logger;
}

/** Why a scoped token may not make a request: 403 with this code and message. */
export interface ScopeRefusal {
  mcpdCode: "MCPD_HTTP_TOKEN_SCOPE" | "MCPD_HTTP_TOKEN_SCOPE_GONE";
  message: string;
}

/**
 * The scoped tokens of the HTTP front end, end to end: issued, listed and revoked for the control methods
 * (`mcpd http --profile NAME`, `mcpd http tokens`), and checked on each request that carries one: it
 * opens its own profile's or server's endpoints while that name is configured, nothing else. Revoking one
 * ends the sessions it opened and the requests it has open.
 */
export class ScopedAccess implements HttpTokenAdmin {
  private readonly store: ScopedTokenStore;
  private readonly holders: TokenHolders;
  private readonly router: Router;
  private readonly file: string;

  constructor(options: ScopedAccessOptions) {
    this.file = options.file;
    this.store = new ScopedTokenStore(options.file, options.max, options.log);
    this.holders = new TokenHolders(options.sessions);
    this.router = options.router;
  }

  /** The scoped token whose digest `presented` is (see bearerDigest), or undefined. */
  match(presented: Buffer | undefined): ScopedToken | undefined {
    return this.store.match(presented);
  }

  /** Why `token` may not use `route` (at `path`), or undefined when it may. */
  refusal(token: ScopedToken, route: Route | undefined, path: string): ScopeRefusal | undefined {
    const scope = token.scope;
    if (!scopeAllows(scope, route)) {
      return {
        mcpdCode: "MCPD_HTTP_TOKEN_SCOPE",
        message:
          `Forbidden: this token opens only ${scopeEndpoint(scope)} and ${scopeEndpoint(scope, "sse")}, not ${path.slice(0, 200)}; ` +
          "use the main token (mcpd http prints it) or a token for that endpoint",
      };
    }
    if (!this.configured(scope)) {
      return {
        mcpdCode: "MCPD_HTTP_TOKEN_SCOPE_GONE",
        message:
          `Forbidden: this token's ${describeScope(scope)} is not in the config now; it opens ${scopeEndpoint(scope)} again once ` +
          `a reload brings it back (or revoke it: mcpd http tokens revoke ${token.id})`,
      };
    }
    return undefined;
  }

  /**
   * The sessions a request made with `token` is served with; `res` is held as that token's until it is
   * done. A session it opens is confined to its scope (see Confinement): per-request routing
   * (`_meta["mcpd/server"]`) and the listings reach nothing outside it.
   */
  sessionsFor(token: ScopedToken, res: ServerResponse): HttpSessions {
    this.holders.track(token.id, res);
    const confinement = token.scope.kind === "server" ? { server: token.scope.name } : {};
    return this.holders.sessionsFor(token.id, (session) => {
      session.filter = ViewFilter.confined(session.filter, confinement);
    });
  }

  /**
   * @throws McpdError MCPD_PROTOCOL_VIOLATION (-32602) unless exactly one of `profile` and `server` is given; NotFoundError
   *   (MCPD_UNKNOWN_PROFILE, MCPD_UNKNOWN_SERVER) naming the configured ones; McpdError MCPD_HTTP_TOKEN_LIMIT
   */
  issue(params: HttpTokenIssueParams): HttpTokenIssueResult {
    const { profile, server } = params;
    if ((profile === undefined) === (server === undefined)) {
      throw new McpdError(
        "MCPD_PROTOCOL_VIOLATION",
        'give exactly one of "profile" and "server": the one profile or server the token opens',
        {
          wireCode: WireCode.InvalidParams,
        },
      );
    }
    let scope: HttpTokenScope;
    if (profile !== undefined) {
      this.router.profiles.select(profile, undefined);
      scope = { kind: "profile", name: profile };
    } else {
      scope = { kind: "server", name: this.router.manager.require(server as string).name };
    }
    const { token, entry } = this.store.issue(scope);
    return { ...this.info(entry), token };
  }

  list(): HttpTokenListResult {
    return { tokens: this.store.list().map((t) => this.info(t)), max: this.store.max };
  }

  /**
   * Revokes token `id` and ends what it holds open, at once.
   * @throws McpdError MCPD_UNKNOWN_HTTP_TOKEN naming the ids there are; an Error when the revocation could
   *   not be written down (it holds until the daemon restarts)
   */
  revoke(id: string): HttpTokenRevokeResult {
    const { entry, saveError } = this.store.revoke(id);
    const closed = this.holders.cut(id);
    if (saveError) {
      throw new Error(
        `HTTP token ${id} is revoked (${closed} sessions and requests ended) until the daemon restarts, but ${this.file} could not be written: ${saveError.message}`,
      );
    }
    return { id: entry.id, scope: { ...entry.scope }, closed };
  }

  private info(t: ScopedToken): HttpTokenInfo {
    return { id: t.id, scope: { ...t.scope }, createdAt: t.createdAt, configured: this.configured(t.scope) };
  }

  /** Whether the scope's profile or server is in the config now. */
  private configured(scope: HttpTokenScope): boolean {
    return scope.kind === "profile"
      ? this.router.profiles.get(scope.name) !== undefined
      : this.router.manager.get(scope.name) !== undefined;
  }
}
