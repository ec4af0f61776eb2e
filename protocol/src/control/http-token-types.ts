/**
 * The shapes of the scoped HTTP token methods (`mcpd/httpTokenIssue`, `mcpd/httpTokenList`,
 * `mcpd/httpTokenRevoke`): tokens for the HTTP front end that open one profile's or one server's
 * endpoints and nothing else, beside the main token that opens everything.
 */
import type { Fields } from "./fields.js";

/** What a scoped token opens: the endpoints of one profile (`/profiles/<name>/...`) or one server (`/servers/<name>/...`). */
export interface HttpTokenScope {
  kind: "profile" | "server";
  /** The profile's name (`mcpd.profiles.<name>`) or the server's. */
  name: string;
}

/** Params of `mcpd/httpTokenIssue`: exactly one of `profile` and `server`. */
export interface HttpTokenIssueParams {
  /** A configured profile: the token opens `/profiles/<profile>/mcp` (and `/sse`, `/messages`). */
  profile?: string;
  /** A configured server: the token opens `/servers/<server>/mcp` (and `/sse`, `/messages`). */
  server?: string;
}

/** A scoped token as listed: never its secret. */
export interface HttpTokenInfo {
  /** Its id, for `mcpd/httpTokenRevoke` (not a secret, and nothing to derive the token from). */
  id: string;
  scope: HttpTokenScope;
  /** When it was issued (ISO 8601). */
  createdAt: string;
  /**
   * Whether its profile or server is in the config now. False: it opens nothing until a reload brings that
   * name back (its requests get 403 `MCPD_HTTP_TOKEN_SCOPE_GONE`).
   */
  configured: boolean;
}

/** Result of `mcpd/httpTokenIssue`: the new token, shown this once (the daemon keeps only its SHA-256). */
export interface HttpTokenIssueResult extends HttpTokenInfo {
  token: string;
}

/** Result of `mcpd/httpTokenList`. */
export interface HttpTokenListResult {
  tokens: HttpTokenInfo[];
  /** How many scoped tokens may exist at once (issuing one more is refused with `MCPD_HTTP_TOKEN_LIMIT`). */
  max: number;
}

/** Params of `mcpd/httpTokenRevoke`. */
export interface HttpTokenRevokeParams {
  /** The id `mcpd/httpTokenList` shows (-32602 `MCPD_UNKNOWN_HTTP_TOKEN` when there is none). */
  id: string;
}

/** Result of `mcpd/httpTokenRevoke`: the token opens nothing from now on. */
export interface HttpTokenRevokeResult {
  id: string;
  scope: HttpTokenScope;
  /** HTTP sessions opened with it that were ended, and requests and streams of it that were cut. */
  closed: number;
}

const SCOPE_FIELDS: Fields<HttpTokenScope> = { kind: "required", name: "required" };

export const HTTP_TOKEN_INFO_FIELDS: Fields<HttpTokenInfo> = {
  id: "required",
  scope: { presence: "required", fields: SCOPE_FIELDS },
  createdAt: "required",
  configured: "required",
};

export const HTTP_TOKEN_ISSUE_RESULT_FIELDS: Fields<HttpTokenIssueResult> = { ...HTTP_TOKEN_INFO_FIELDS, token: "required" };

export const HTTP_TOKEN_REVOKE_RESULT_FIELDS: Fields<HttpTokenRevokeResult> = {
  id: "required",
  scope: { presence: "required", fields: SCOPE_FIELDS },
  closed: "required",
};
