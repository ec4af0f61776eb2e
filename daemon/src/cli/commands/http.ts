import { readFileSync } from "node:fs";
import type { DaemonStatus, HttpFrontStatus } from "@mcpd/client";
import { CliError, stringOption } from "../args.js";
import { clientSnippets, type ClientSnippets } from "../client-snippets.js";
import { println, type CliContext, type Command } from "../context.js";
import { fullStatus } from "../daemon-control.js";
import { hintFor } from "../../config/did-you-mean.js";

/** What `mcpd http --json` prints. */
export interface HttpCommandJson {
  /** The Streamable HTTP endpoint: `/mcp`, or `/servers/<name>/mcp` with `--server`. */
  url: string;
  /** The legacy HTTP+SSE endpoint beside it (`/sse`, `/servers/<name>/sse`), for clients that speak only that. */
  sseUrl: string;
  /** The bearer token; null with `--no-token` (the snippets then hold `<token>`). */
  token: string | null;
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
 * The endpoint for `--server NAME`: `/servers/<name>/mcp` on the aggregate URL's origin.
 * @throws CliError (exit 1) for a server the daemon does not have, listing the configured ones.
 */
function serverUrl(status: DaemonStatus, aggregate: string, server: string): string {
  const names = (status.servers ?? []).map((s) => s.name);
  if (!names.includes(server)) {
    throw new CliError(
      `unknown server "${server}"${hintFor(server, names)}; configured: ${names.length > 0 ? names.join(", ") : "(none)"}`,
    );
  }
  return new URL(`/servers/${encodeURIComponent(server)}/mcp`, aggregate).href;
}

/** The human output: URL, token, then each client's snippet, unindented so it pastes as is. */
function render(ctx: CliContext, out: HttpCommandJson, name: string, server: string | undefined): void {
  const c = ctx.out;
  const view = server === undefined ? "every server's tools, as <server>__<tool>" : `server "${server}" alone, its tools as named there`;
  println(ctx, `${c.bold("mcpd over HTTP")} (${view})`);
  println(ctx, `url    ${out.url}`);
  if (out.token === null) println(ctx, `token  (not shown: --no-token; it is in ${out.tokenFile})`);
  else println(ctx, `token  ${out.token}`);
  println(ctx, c.dim(`       kept in ${out.tokenFile} (0600); it opens every server mcpd runs: keep it private`));
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

/** `mcpd http`: the HTTP front end's URL, its token, and ready client configs. */
export const httpCommand: Command = {
  spec: {
    name: "http",
    usage: "http [--server NAME] [--json] [--no-token]",
    summary: "Print the HTTP endpoint, its token and ready configs for Claude Code, Cursor and VS Code",
    options: {
      server: { type: "string", value: "NAME", description: "One server's view (/servers/NAME/mcp), the entry named NAME" },
      json: { type: "boolean", description: "Print JSON: {url, sseUrl, token, tokenFile, snippets: {claudeCode, cursor, vscode}}" },
      "no-token": { type: "boolean", description: "Leave the token out: the snippets hold <token>, to paste it in later" },
    },
    minPositionals: 0,
    maxPositionals: 0,
    details: [
      "The daemon serves MCP over Streamable HTTP on loopback: /mcp is the aggregate view (every server's tools),",
      "/servers/NAME/mcp one server's own view. Every request needs 'Authorization: Bearer <token>'; the token",
      "is printed by default (it is what the configs need) and stays the same across restarts.",
      'Exit code 1 when the front end is off or not serving (the reason and the "mcpd.http" setting that',
      "fixes it are printed), or NAME is not a configured server; 3 when the daemon is not running.",
    ].join("\n"),
  },
  async run(ctx, { values }) {
    const status = await fullStatus(ctx);
    const http = serving(status);
    const server = stringOption(values, "server");
    const url = server === undefined ? http.url : serverUrl(status, http.url, server);
    const token = values["no-token"] === true ? null : readToken(http.tokenFile);
    const name = server ?? "mcpd";
    const out: HttpCommandJson = {
      url,
      sseUrl: url.replace(/\/mcp$/, "/sse"),
      token,
      tokenFile: http.tokenFile,
      snippets: clientSnippets(name, url, token ?? TOKEN_PLACEHOLDER),
    };
    if (values.json) println(ctx, JSON.stringify(out, null, 2));
    else render(ctx, out, name, server);
    return 0;
  },
};
