import { readFileSync } from "node:fs";
import type { DaemonStatus, HttpFrontStatus } from "@mcpd/client";
import { McpdHttpTokenIssue, type HttpTokenScope } from "@mcpd/protocol/core";
import { CliError, UsageError, stringOption, type ParsedCommand } from "../args.js";
import { clientSnippets, type ClientSnippets } from "../client-snippets.js";
import { println, type CliContext, type Command } from "../context.js";
import { askDaemon, fullStatus } from "../ask-daemon.js";
import { hintFor } from "../../config/did-you-mean.js";
import { runTokens, scopeLabel, scopePath } from "./http-tokens.js";

/** What `mcpd http --json` prints. */
export interface HttpCommandJson {
  /** The Streamable HTTP endpoint: `/mcp`, `/servers/<name>/mcp` with `--server`, `/profiles/<name>/mcp` with `--profile`. */
  url: string;
  /** The legacy HTTP+SSE endpoint beside it (`/sse`, `/servers/<name>/sse`), for clients that speak only that. */
  sseUrl: string;
  /**
   * The bearer token: the main one, or with `--server`/`--profile` a new scoped token that opens only that
   * endpoint (shown this once). Null with `--no-token` (the snippets then hold `<token>`; none is issued).
   */
  token: string | null;
  /** The scoped token's id (for `mcpd http tokens revoke ID`); null for the main token or with `--no-token`. */
  tokenId: string | null;
  /** What the token opens: null for the main token (everything). */
  scope: HttpTokenScope | null;
  tokenFile: string;
  snippets: ClientSnippets;
}

/** The placeholder the snippets hold instead of the token with `--no-token`. */
const TOKEN_PLACEHOLDER = "<token>";
/** Largest token file read, in bytes (the daemon writes 44 bytes and refuses files over 1 KiB). */
const MAX_TOKEN_FILE_BYTES = 1024;
/** A token's form, as the daemon writes and accepts it (base64url). */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{32,512}$/;

/**
 * The front end's status, when it serves.
 * @throws CliError (exit 1) saying why it does not serve and which setting fixes it.
 */
function serving(status: DaemonStatus): HttpFrontStatus & { url: string } {
  const http = status.http;
  const config = status.daemon.configFile ?? "the config file";
  if (http === undefined) {
    throw new CliError(
      `the running daemon (version ${status.daemon.version}) reports no HTTP front end; stop it and start this version ('mcpd stop; mcpd start')`,
    );
  }
  if (http.enabled !== true) {
    throw new CliError(
      `the HTTP front end is off: "mcpd.http.enabled" is false in ${config}. Set it to true (or remove it) and run 'mcpd reload'.`,
    );
  }
  if (http.listening !== true || typeof http.url !== "string") {
    throw new CliError(
      [
        `the HTTP front end is not serving: ${http.error ?? "not listening"}.`,
        `Fix "mcpd.http" in ${config} ("port": a free port, or 0 for any; "host": a loopback address, or`,
        `"allowRemote": true) and run 'mcpd reload'. MCPD_HTTP_PORT in the daemon's environment overrides "port".`,
      ].join("\n"),
    );
  }
  return http as HttpFrontStatus & { url: string };
}

/**
 * Reads the bearer token the daemon keeps in `file` (this command runs as the daemon's user).
 * @throws CliError naming the file when it cannot be read or holds no token.
 */
function readToken(file: string): string {
  let text: string;
  try {
    const buf = readFileSync(file);
    if (buf.length > MAX_TOKEN_FILE_BYTES) throw new Error(`${buf.length} bytes, more than a token`);
    text = buf.toString("utf8").trim();
  } catch (err) {
    throw new CliError(`cannot read the HTTP token in ${file}: ${(err as Error).message} (run 'mcpd http' as the user the daemon runs as)`);
  }
  if (!TOKEN_PATTERN.test(text)) {
    throw new CliError(`${file} does not hold a token mcpd would accept; run 'mcpd stop; mcpd start' to have a new one written`);
  }
  return text;
}

/**
 * Checks `--server NAME` against the daemon's servers.
 * @throws CliError (exit 1) for a server the daemon does not have, listing the configured ones.
 */
function checkServer(status: DaemonStatus, server: string): void {
  const names = (status.servers ?? []).map((s) => s.name);
  if (!names.includes(server)) {
    throw new CliError(
      `unknown server "${server}"${hintFor(server, names)}; configured: ${names.length > 0 ? names.join(", ") : "(none)"}`,
    );
  }
}

/** What the endpoint shows, for the heading. */
function viewOf(scope: HttpTokenScope | undefined): string {
  if (scope === undefined) return "every server's tools, as <server>__<tool>";
  if (scope.kind === "server") return `server "${scope.name}" alone, its tools as named there`;
  return `profile "${scope.name}": what it selects, as <server>__<tool>`;
}

/** The token lines: the token (or why not shown) and what it opens. */
function renderToken(ctx: CliContext, out: HttpCommandJson, scope: HttpTokenScope | undefined): void {
  const c = ctx.out;
  if (scope === undefined) {
    if (out.token === null) println(ctx, `token  (not shown: --no-token; it is in ${out.tokenFile})`);
    else println(ctx, `token  ${out.token}`);
    println(ctx, c.dim(`       kept in ${out.tokenFile} (0600); it opens every server mcpd runs: keep it private`));
    return;
  }
  if (out.token === null || out.tokenId === null) {
    println(ctx, "token  (none issued: --no-token; run without it to issue a token for this endpoint)");
    return;
  }
  println(ctx, `token  ${out.token}`);
  println(ctx, c.dim(`       id ${out.tokenId}: opens only ${scopeLabel(scope)}'s endpoint (and its SSE form); shown this once,`));
  println(ctx, c.dim(`       mcpd keeps only its hash. List: 'mcpd http tokens'; revoke: 'mcpd http tokens revoke ${out.tokenId}'`));
}

/** The human output: URL, token, then each client's snippet, unindented so it pastes as is. */
function render(ctx: CliContext, out: HttpCommandJson, name: string, scope: HttpTokenScope | undefined): void {
  const c = ctx.out;
  println(ctx, `${c.bold("mcpd over HTTP")} (${viewOf(scope)})`);
  println(ctx, `url    ${out.url}`);
  renderToken(ctx, out, scope);
  println(ctx);
  println(ctx, c.bold("Claude Code") + c.dim(" (run once; add --scope user to have it in every project):"));
  println(ctx, out.snippets.claudeCode);
  println(ctx);
  println(ctx, c.bold("Cursor") + c.dim(' (~/.cursor/mcp.json, or .cursor/mcp.json in a project; merge into "mcpServers"):'));
  println(ctx, JSON.stringify(out.snippets.cursor, null, 2));
  println(ctx);
  println(
    ctx,
    c.bold("VS Code") + c.dim(' (.vscode/mcp.json, or the user mcp.json: "MCP: Open User Configuration"; merge into "servers"):'),
  );
  println(ctx, JSON.stringify(out.snippets.vscode, null, 2));
  println(ctx);
  println(ctx, c.dim(`A client that speaks only the legacy SSE transport: ${out.sseUrl}, with the same header.`));
  if (name !== "mcpd") println(ctx, c.dim(`The entry is named "${name}"; rename it if the client already has a server by that name.`));
}

/** The scope `--server NAME` or `--profile NAME` asks for; undefined for neither. @throws UsageError for both, or an empty name */
function scopeOption(values: ParsedCommand["values"]): HttpTokenScope | undefined {
  const server = stringOption(values, "server");
  const profile = stringOption(values, "profile");
  if (server !== undefined && profile !== undefined) throw new UsageError("give --server or --profile, not both", "http");
  if (server === "" || profile === "") throw new UsageError(`--${server === "" ? "server" : "profile"} needs a name`, "http");
  if (server !== undefined) return { kind: "server", name: server };
  return profile === undefined ? undefined : { kind: "profile", name: profile };
}

/** The token to print: the main one, a new scoped one for `scope`, or none with `--no-token`. */
async function tokenFor(
  ctx: CliContext,
  http: HttpFrontStatus,
  scope: HttpTokenScope | undefined,
  hidden: boolean,
): Promise<{ token: string | null; tokenId: string | null }> {
  if (hidden) return { token: null, tokenId: null };
  if (scope === undefined) return { token: readToken(http.tokenFile), tokenId: null };
  const issued = await askDaemon(ctx, McpdHttpTokenIssue, scope.kind === "server" ? { server: scope.name } : { profile: scope.name });
  return { token: issued.token, tokenId: issued.id };
}

/** `mcpd http`: the HTTP front end's URL, its token, and ready client configs; `mcpd http tokens` for the scoped tokens. */
export const httpCommand: Command = {
  spec: {
    name: "http",
    usage: "http [--server NAME | --profile NAME] [--json] [--no-token] | http tokens [--json] | http tokens revoke ID",
    summary: "Print the HTTP endpoint, its token and ready configs for Claude Code, Cursor and VS Code",
    options: {
      server: {
        type: "string",
        value: "NAME",
        description: "One server's view (/servers/NAME/mcp), the entry named NAME, with a new token that opens only it",
      },
      profile: {
        type: "string",
        value: "NAME",
        description: "A profile's view (/profiles/NAME/mcp), the entry named NAME, with a new token that opens only it",
      },
      json: {
        type: "boolean",
        description: "Print JSON: {url, sseUrl, token, tokenId, scope, tokenFile, snippets: {claudeCode, cursor, vscode}}",
      },
      "no-token": { type: "boolean", description: "Leave the token out (and issue none): the snippets hold <token>" },
    },
    minPositionals: 0,
    maxPositionals: 3,
    details: [
      "The daemon serves MCP over Streamable HTTP on loopback: /mcp is the aggregate view (every server's tools),",
      "/servers/NAME/mcp one server's own view, /profiles/NAME/mcp a profile's. Every request needs",
      "'Authorization: Bearer <token>'. The main token opens everything and stays the same across restarts.",
      "--server NAME and --profile NAME issue a new scoped token on each run that opens only that endpoint",
      "(and its SSE form); it is shown once and kept across restarts until revoked.",
      "http tokens              list the scoped tokens: id, scope, when issued (never the token)",
      "http tokens revoke ID    revoke one: it opens nothing from then on, its open sessions end at once",
      'Exit code 1 when the front end is off or not serving (the reason and the "mcpd.http" setting that',
      "fixes it are printed), NAME is not a configured server or profile, or ID is no token's; 3 when the",
      "daemon is not running.",
    ].join("\n"),
  },
  async run(ctx, args) {
    const { values, positionals } = args;
    if (positionals[0] !== undefined) {
      if (positionals[0] !== "tokens") throw new UsageError(`unexpected argument: ${positionals[0]} (expected 'tokens')`, "http");
      return runTokens(ctx, args);
    }
    const scope = scopeOption(values);
    const status = await fullStatus(ctx);
    const http = serving(status);
    if (scope?.kind === "server") checkServer(status, scope.name);
    const url = scope === undefined ? http.url : new URL(scopePath(scope), http.url).href;
    const { token, tokenId } = await tokenFor(ctx, http, scope, values["no-token"] === true);
    const name = scope?.name ?? "mcpd";
    const out: HttpCommandJson = {
      url,
      sseUrl: url.replace(/\/mcp$/, "/sse"),
      token,
      tokenId,
      scope: scope ?? null,
      tokenFile: http.tokenFile,
      snippets: clientSnippets(name, url, token ?? TOKEN_PLACEHOLDER),
    };
    if (values.json) println(ctx, JSON.stringify(out, null, 2));
    else render(ctx, out, name, scope);
    return 0;
  },
};
