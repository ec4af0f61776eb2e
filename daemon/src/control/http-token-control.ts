import {
  McpdError,
  McpdHttpTokenIssue,
  McpdHttpTokenList,
  McpdHttpTokenRevoke,
  WireCode,
  type ControlHandler,
  type HttpTokenIssueParams,
  type HttpTokenIssueResult,
  type HttpTokenListResult,
  type HttpTokenRevokeParams,
  type HttpTokenRevokeResult,
  type JsonObject,
  type NoParams,
} from "@mcpd/protocol";

/** The scoped tokens of the HTTP front end, as the control methods use them (the front end's ScopedAccess). */
export interface HttpTokenAdmin {
  issue(params: HttpTokenIssueParams): HttpTokenIssueResult;
  list(): HttpTokenListResult;
  revoke(id: string): HttpTokenRevokeResult;
}

/** What these handlers need from the daemon: its token admin, when it has an HTTP front end. */
interface TokenContext {
  d: { httpTokens?: HttpTokenAdmin };
}

const badParam = (message: string): McpdError => new McpdError("MCPD_PROTOCOL_VIOLATION", message, { wireCode: WireCode.InvalidParams });

function admin(ctx: TokenContext): HttpTokenAdmin {
  if (ctx.d.httpTokens) return ctx.d.httpTokens;
  throw new McpdError("MCPD_METHOD_NOT_FOUND", "this daemon has no HTTP front end, so no HTTP tokens", {
    wireCode: WireCode.MethodNotFound,
  });
}

/** `{ profile }` or `{ server }`: a non-empty string, exactly one of them. */
function issueParams(params: JsonObject | undefined): HttpTokenIssueParams {
  const out: HttpTokenIssueParams = {};
  for (const key of ["profile", "server"] as const) {
    const v = params?.[key];
    if (v === undefined) continue;
    if (typeof v !== "string" || v === "") throw badParam(`"${key}" must be a ${key}'s name`);
    out[key] = v;
  }
  if ((out.profile === undefined) === (out.server === undefined)) {
    throw badParam('give exactly one of "profile" and "server": the one profile or server the token opens');
  }
  return out;
}

function revokeParams(params: JsonObject | undefined): HttpTokenRevokeParams {
  const id = params?.id;
  if (typeof id !== "string" || id === "") throw badParam('"id" must be a token id (mcpd http tokens lists them)');
  return { id };
}

/** The handlers of `mcpd/httpTokenIssue`, `mcpd/httpTokenList` and `mcpd/httpTokenRevoke` (all privileged). */
export const HTTP_TOKEN_HANDLERS: {
  readonly [McpdHttpTokenIssue.method]: ControlHandler<typeof McpdHttpTokenIssue, TokenContext>;
  readonly [McpdHttpTokenList.method]: ControlHandler<typeof McpdHttpTokenList, TokenContext>;
  readonly [McpdHttpTokenRevoke.method]: ControlHandler<typeof McpdHttpTokenRevoke, TokenContext>;
} = {
  [McpdHttpTokenIssue.method]: {
    params: issueParams,
    handle: async (params, ctx) => admin(ctx).issue(params),
  },
  [McpdHttpTokenList.method]: {
    params: (): NoParams => ({}),
    handle: async (_params, ctx) => admin(ctx).list(),
  },
  [McpdHttpTokenRevoke.method]: {
    params: revokeParams,
    handle: async ({ id }, ctx) => admin(ctx).revoke(id),
  },
};
