import { McpdHttpTokenList, McpdHttpTokenRevoke, type HttpTokenInfo, type HttpTokenScope } from "@mcpd/protocol/core";
import { UsageError, type ParsedCommand } from "../args.js";
import { println, type CliContext } from "../context.js";
import { askDaemon } from "../ask-daemon.js";
import { table } from "../format.js";

/** `profile "coding"`, `server "github"`. */
export function scopeLabel(scope: HttpTokenScope): string {
  return `${scope.kind} ${JSON.stringify(scope.name)}`;
}

/** The path of a scope's Streamable HTTP endpoint: `/profiles/<name>/mcp`, `/servers/<name>/mcp`. */
export function scopePath(scope: HttpTokenScope): string {
  return `/${scope.kind === "profile" ? "profiles" : "servers"}/${encodeURIComponent(scope.name)}/mcp`;
}

function printList(ctx: CliContext, tokens: HttpTokenInfo[], max: number): void {
  if (tokens.length === 0) {
    println(ctx, "no scoped HTTP tokens (issue one with 'mcpd http --profile NAME' or 'mcpd http --server NAME')");
    return;
  }
  const rows = tokens.map((t) => [t.id, scopeLabel(t.scope), t.createdAt, t.configured ? "" : "not configured now: opens nothing"]);
  println(ctx, table(["ID", "SCOPE", "CREATED", "NOTE"], rows, ctx.out));
  println(
    ctx,
    ctx.out.dim(`${tokens.length} of at most ${max}; revoke one with 'mcpd http tokens revoke ID'. The main token opens everything.`),
  );
}

/**
 * `mcpd http tokens` (list: id, scope, when issued; never a secret) and `mcpd http tokens revoke ID`
 * (the token opens nothing from then on; the sessions opened with it end at once).
 * @throws UsageError for another subcommand, a missing or extra argument, or an option only `mcpd http` takes
 */
export async function runTokens(ctx: CliContext, { positionals, values }: ParsedCommand): Promise<number> {
  const misplaced = ["server", "profile", "no-token"].find((k) => values[k] !== undefined);
  if (misplaced) throw new UsageError(`--${misplaced} is not for 'http tokens'`, "http");
  const sub = positionals[1];
  if (sub === undefined) {
    const r = await askDaemon(ctx, McpdHttpTokenList, {});
    if (values.json) println(ctx, JSON.stringify(r, null, 2));
    else printList(ctx, r.tokens, r.max);
    return 0;
  }
  if (sub !== "revoke")
    throw new UsageError(`unknown subcommand 'http tokens ${sub}' (expected 'http tokens' or 'http tokens revoke ID')`, "http");
  const id = positionals[2];
  if (id === undefined || id === "") throw new UsageError("'http tokens revoke' needs the token's ID (see 'mcpd http tokens')", "http");
  const r = await askDaemon(ctx, McpdHttpTokenRevoke, { id });
  if (values.json) println(ctx, JSON.stringify(r, null, 2));
  else
    println(
      ctx,
      `revoked ${r.id} (${scopeLabel(r.scope)}); ended ${r.closed} open session${r.closed === 1 ? "" : "s"}/requests made with it`,
    );
  return 0;
}
