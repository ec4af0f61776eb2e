/**
 * `mcpd http` against a real daemon: the URL, the token and the client snippets it prints, each proved by
 * using it: the Claude Code command line is run by a shell (against a stand-in `claude` that records its
 * argv), the Cursor and VS Code entries are read as JSON, and every one's URL and headers go to the
 * official SDK's StreamableHTTPClientTransport, which must list the daemon's tools.
 */
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { CliWorld, until, type CliRun } from "./cli-harness.js";

let world: CliWorld;
let blocker: Server | undefined;
afterEach(async () => {
  await world?.dispose();
  if (blocker) await new Promise<void>((resolve) => blocker?.close(() => resolve()));
  blocker = undefined;
});

interface Endpoint {
  url: string;
  headers: Record<string, string>;
}

interface HttpJson {
  url: string;
  sseUrl: string;
  token: string | null;
  tokenId: string | null;
  scope: { kind: "profile" | "server"; name: string } | null;
  tokenFile: string;
  snippets: {
    claudeCode: string;
    cursor: { mcpServers: Record<string, { url: string; headers: Record<string, string> }> };
    vscode: { servers: Record<string, { type: string; url: string; headers: Record<string, string> }> };
  };
}

/** Starts the daemon with two fixture servers and waits until `mcpd http --json` answers. */
async function startWorld(): Promise<HttpJson> {
  world = new CliWorld();
  world.writeConfig({ fx: world.fixture("fx"), other: world.fixture("other") });
  expect((await world.run(["start"])).code).toBe(0);
  return JSON.parse(await httpOk(["--json"])) as HttpJson;
}

/** Runs `mcpd http ARGS` until it succeeds (the front end starts listening just after the socket answers). */
async function httpOk(args: string[]): Promise<string> {
  let last: CliRun | undefined;
  await until(
    async () => {
      last = await world.run(["http", ...args]);
      return last.code === 0;
    },
    "mcpd http to succeed",
    30_000,
    200,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; last run: ${JSON.stringify(last)}`);
  });
  return (last as CliRun).stdout;
}

/**
 * Runs the Claude Code snippet through `sh` with a stand-in `claude` first on PATH that prints its argv
 * as JSON, then reads the endpoint out of it as Claude Code would (`mcp add --transport http NAME URL --header "K: V"`).
 */
async function runClaudeSnippet(command: string): Promise<{ name: string } & Endpoint> {
  const bin = join(world.root, "bin");
  mkdirSync(bin, { recursive: true });
  const claude = join(bin, "claude");
  writeFileSync(claude, `#!${process.execPath}\nprocess.stdout.write(JSON.stringify(process.argv.slice(2)));\n`);
  chmodSync(claude, 0o755);
  const r = await world.shell(`PATH='${bin}':"$PATH"; ${command}`);
  expect(r.code, r.stderr).toBe(0);
  const argv = JSON.parse(r.stdout) as string[];
  expect(argv.slice(0, 4)).toEqual(["mcp", "add", "--transport", "http"]);
  expect(argv).toHaveLength(8);
  expect(argv[6]).toBe("--header");
  const header = argv[7] as string;
  const colon = header.indexOf(":");
  return {
    name: argv[4] as string,
    url: argv[5] as string,
    headers: { [header.slice(0, colon).trim()]: header.slice(colon + 1).trim() },
  };
}

/** The tool names an official SDK client gets from `tools/list` at this URL with these headers. */
async function sdkTools(e: Endpoint): Promise<string[]> {
  const client = new Client({ name: "snippet-check", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(e.url), { requestInit: { headers: e.headers } });
  await client.connect(transport);
  try {
    return (await client.listTools()).tools.map((t) => t.name);
  } finally {
    await transport.terminateSession().catch(() => {});
    await client.close();
  }
}

/** The snippets as printed by the human form: the `claude mcp add` line and the two JSON documents. */
function parseHuman(stdout: string): { claudeCode: string; cursor: unknown; vscode: unknown } {
  const lines = stdout.split("\n");
  const claudeCode = lines.find((l) => l.startsWith("claude mcp add ")) as string;
  const blocks: unknown[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== "{") continue;
    const end = lines.indexOf("}", i);
    blocks.push(JSON.parse(lines.slice(i, end + 1).join("\n")));
    i = end;
  }
  expect(blocks).toHaveLength(2);
  return { claudeCode, cursor: blocks[0], vscode: blocks[1] };
}

describe("mcpd http", () => {
  it("prints the URL, the token and Claude Code / Cursor / VS Code snippets whose url+headers list the daemon's tools", async () => {
    const out = await startWorld();
    expect(out.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(out.sseUrl).toBe(out.url.replace(/\/mcp$/, "/sse"));
    expect(statSync(out.tokenFile).mode & 0o777).toBe(0o600);
    expect(out.token).toBe(readFileSync(out.tokenFile, "utf8").trim());
    const auth = { Authorization: `Bearer ${out.token}` };

    const claude = await runClaudeSnippet(out.snippets.claudeCode);
    expect(claude).toEqual({ name: "mcpd", url: out.url, headers: auth });
    const cursor = out.snippets.cursor.mcpServers.mcpd;
    expect(cursor).toEqual({ url: out.url, headers: auth });
    const vscode = out.snippets.vscode.servers.mcpd;
    expect(vscode).toEqual({ type: "http", url: out.url, headers: auth });

    for (const e of [claude, cursor, vscode] as Endpoint[]) {
      const tools = await sdkTools(e);
      expect(tools).toContain("fx__echo");
      expect(tools).toContain("other__echo");
    }
    // The header is what opens it: the same URL without it is refused.
    expect((await fetch(out.url, { method: "POST", body: "{}" })).status).toBe(401);

    // The human form prints the same URL, token and snippets, each pasteable as printed.
    const human = await httpOk([]);
    expect(human).toMatch(new RegExp(`^url +${out.url.replace(/[.]/g, "\\.")}$`, "m"));
    expect(human).toMatch(new RegExp(`^token +${out.token}$`, "m"));
    expect(human).toContain(out.tokenFile);
    expect(parseHuman(human)).toEqual(out.snippets);
  });

  it("--server NAME: a new token that opens only /servers/NAME/mcp; the snippets name the entry NAME and reach it (that server's tools as named there); --no-token; an unknown NAME exits 1 listing the configured ones", async () => {
    const all = await startWorld();
    expect(all.tokenId).toBeNull();
    expect(all.scope).toBeNull();
    const out = JSON.parse(await httpOk(["--server", "fx", "--json"])) as HttpJson;
    expect(out.url).toBe(new URL("/servers/fx/mcp", all.url).href);
    expect(out.sseUrl).toBe(new URL("/servers/fx/sse", all.url).href);
    expect(out.scope).toEqual({ kind: "server", name: "fx" });
    expect(out.tokenId).toMatch(/^[0-9a-f]{12}$/);
    expect(out.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(out.token).not.toBe(all.token);
    const auth = { Authorization: `Bearer ${out.token}` };
    const claude = await runClaudeSnippet(out.snippets.claudeCode);
    expect(claude).toEqual({ name: "fx", url: out.url, headers: auth });
    expect(Object.keys(out.snippets.cursor.mcpServers)).toEqual(["fx"]);
    expect(Object.keys(out.snippets.vscode.servers)).toEqual(["fx"]);
    for (const e of [claude, out.snippets.cursor.mcpServers.fx, out.snippets.vscode.servers.fx] as Endpoint[]) {
      const tools = await sdkTools(e);
      expect(tools).toContain("echo");
      expect(tools.some((t) => t.includes("__"))).toBe(false);
    }
    // It opens that server alone: the aggregate view and the other server are refused.
    for (const path of ["/mcp", "/servers/other/mcp"]) {
      const r = await fetch(new URL(path, all.url), { method: "POST", headers: auth, body: "{}" });
      expect(r.status, path).toBe(403);
    }

    const hidden = await world.run(["http", "--no-token"]);
    expect(hidden.code, hidden.stderr).toBe(0);
    expect(hidden.stdout).not.toContain(all.token as string);
    expect(hidden.stdout).toContain('--header "Authorization: Bearer <token>"');
    expect(hidden.stdout).toContain(all.tokenFile);
    const hiddenJson = JSON.parse((await world.run(["http", "--no-token", "--json"])).stdout) as HttpJson;
    expect(hiddenJson.token).toBeNull();
    expect(hiddenJson.snippets.vscode.servers.mcpd?.headers).toEqual({ Authorization: "Bearer <token>" });

    const unknown = await world.run(["http", "--server", "fxx"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('unknown server "fxx" (did you mean "fx"?); configured: fx, other');
    expect(unknown.stdout).toBe("");
  });

  it("--profile NAME: a token that opens only /profiles/NAME/mcp; 'http tokens' lists it without the secret; it survives a restart; 'http tokens revoke ID' closes it", async () => {
    world = new CliWorld();
    world.writeConfig({ fx: world.fixture("fx"), other: world.fixture("other") }, { mcpd: { profiles: { coding: { servers: ["fx"] } } } });
    expect((await world.run(["start"])).code).toBe(0);
    const first = JSON.parse(await httpOk(["--profile", "coding", "--json"])) as HttpJson;
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/profiles\/coding\/mcp$/);
    expect(first.sseUrl).toBe(first.url.replace(/\/mcp$/, "/sse"));
    expect(first.scope).toEqual({ kind: "profile", name: "coding" });
    const entry = first.snippets.cursor.mcpServers.coding as Endpoint;
    expect(entry).toEqual({ url: first.url, headers: { Authorization: `Bearer ${first.token}` } });
    const tools = await sdkTools(entry);
    expect(tools).toContain("fx__echo");
    expect(tools.some((t) => t.startsWith("other__"))).toBe(false);
    const aggregate = new URL("/mcp", first.url).href;
    expect((await fetch(aggregate, { method: "POST", headers: entry.headers, body: "{}" })).status).toBe(403);

    // The human form issues another, printed with its id and how to revoke it.
    const human = await httpOk(["--profile", "coding"]);
    const second = /^token +(\S+)$/m.exec(human)?.[1] as string;
    const secondId = /id ([0-9a-f]{12})/.exec(human)?.[1] as string;
    expect(second).not.toBe(first.token);
    expect(human).toContain(`mcpd http tokens revoke ${secondId}`);
    expect(parseHuman(human).claudeCode).toContain(`Bearer ${second}`);

    const listed = await world.run(["http", "tokens", "--json"]);
    expect(listed.code, listed.stderr).toBe(0);
    const list = JSON.parse(listed.stdout) as { tokens: Array<{ id: string; scope: unknown; createdAt: string }>; max: number };
    expect(list.tokens.map((t) => t.id)).toEqual([first.tokenId, secondId]);
    expect(list.tokens[0]?.scope).toEqual({ kind: "profile", name: "coding" });
    const table = await world.run(["http", "tokens"]);
    expect(table.stdout).toMatch(new RegExp(`^${first.tokenId} +profile "coding" +\\d{4}-`, "m"));
    for (const out of [listed.stdout, table.stdout]) {
      expect(out).not.toContain(first.token as string);
      expect(out).not.toContain(second);
    }

    // Both survive a restart (the port may change: the URL is read again).
    expect((await world.run(["stop"])).code).toBe(0);
    expect((await world.run(["start"])).code).toBe(0);
    const after = JSON.parse(await httpOk(["--json"])) as HttpJson;
    const url = new URL("/profiles/coding/mcp", after.url).href;
    expect(await sdkTools({ url, headers: { Authorization: `Bearer ${first.token}` } })).toContain("fx__echo");

    const revoked = await world.run(["http", "tokens", "revoke", first.tokenId as string]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain(`revoked ${first.tokenId} (profile "coding")`);
    const refused = await fetch(url, { method: "POST", headers: { Authorization: `Bearer ${first.token}` }, body: "{}" });
    expect(refused.status).toBe(401);
    expect(await sdkTools({ url, headers: { Authorization: `Bearer ${second}` } })).toContain("fx__echo");

    const unknown = await world.run(["http", "tokens", "revoke", "nope"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('Unknown HTTP token id "nope"');
    const noProfile = await world.run(["http", "--profile", "nope"]);
    expect(noProfile.code).toBe(1);
    expect(noProfile.stderr).toContain('Unknown profile "nope"; configured (mcpd.profiles): coding');
    for (const args of [
      ["http", "tokens", "--server", "fx"],
      ["http", "--server", "fx", "--profile", "coding"],
      ["http", "nope"],
      ["http", "tokens", "drop", "x"],
    ]) {
      expect((await world.run(args)).code, args.join(" ")).toBe(2);
    }
  });

  it("a disabled front end: exit 1 saying so and which setting turns it on", async () => {
    world = new CliWorld();
    world.writeConfig({ fx: world.fixture("fx") }, { mcpd: { http: { enabled: false } } });
    expect((await world.run(["start"])).code).toBe(0);
    const r = await world.run(["http"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`the HTTP front end is off: "mcpd.http.enabled" is false in ${world.configFile}`);
    expect(r.stderr).toContain("'mcpd reload'");
    expect(r.stdout).toBe("");
  });

  it("a front end that cannot listen (port taken): exit 1 with the daemon's reason and the mcpd.http fix", async () => {
    const taken = createServer();
    blocker = taken;
    const port = await new Promise<number>((resolve, reject) => {
      taken.once("error", reject);
      taken.listen({ host: "127.0.0.1", port: 0 }, () => resolve((taken.address() as { port: number }).port));
    });
    world = new CliWorld();
    world.writeConfig({ fx: world.fixture("fx") });
    expect((await world.run(["start"], { env: { ...world.env, MCPD_HTTP_PORT: String(port) } })).code).toBe(0);
    let r: CliRun | undefined;
    // Until the daemon has tried (it binds just after its socket answers).
    await until(async () => {
      r = await world.run(["http"]);
      return r.stderr.includes("not serving");
    }, "mcpd http to report the taken port");
    expect(r?.code).toBe(1);
    expect(r?.stderr).toContain(`the HTTP front end is not serving: port ${port} on 127.0.0.1 is in use (EADDRINUSE)`);
    expect(r?.stderr).toContain('Fix "mcpd.http" in');
  });

  it("no daemon: exit 3 with the message every command gives", async () => {
    world = new CliWorld();
    const r = await world.run(["http"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/mcpd is not running \(no answer on .*\)\. Start it with 'mcpd start'\./);
    const help = await world.run(["help"]);
    expect(help.stdout).toMatch(/^ {2}http +Print the HTTP endpoint/m);
  });
});
