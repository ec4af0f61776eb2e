/**
 * Malicious or broken authorization servers, through a daemon in this process: each gets a clear error
 * in `mcpd status` naming its server and the rule it broke, is retried only as far as the restart policy
 * allows (never a loop), and never touches another server's tokens: the well-behaved server beside them
 * keeps its token file byte for byte and keeps answering.
 *
 * One HTTP server on 127.0.0.1 plays every part, by path prefix: `/good` (a protected MCP server whose
 * token mcpd already holds), `/liar` (metadata naming another issuer), `/moved` (metadata redirecting to
 * another host), `/garbled` (resource metadata that is not JSON), `/thief` (resource metadata claiming
 * `/good`'s resource), `/endless` (401 to every token, even a fresh one).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDaemon, type DaemonHandle } from "../../daemon/src/daemon.js";
import { RawClient, until } from "./harness.js";

const BAD = ["liar", "moved", "garbled", "thief", "endless"] as const;
/** One restart after the first attempt, quickly: the test waits for `failed`. */
const RESTART = { maxRestarts: 1, windowMs: 60_000, initialDelayMs: 10, maxDelayMs: 10 };

let server: Server;
let base = "";
const hits = new Map<string, number>();
let daemon: DaemonHandle | undefined;
let home = "";
let client: RawClient | undefined;

function json(res: ServerResponse, value: unknown, status = 200, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(typeof value === "string" ? value : JSON.stringify(value));
}

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    req.on("data", (d: Buffer) => (text += d.toString()));
    req.on("end", () => resolve(text));
  });
}

/** The MCP server of `/good`: answers with the token mcpd holds, 401 otherwise. */
async function goodMcp(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== "POST") return void res.writeHead(req.method === "DELETE" ? 200 : 405).end();
  const message = JSON.parse(await body(req)) as { id?: number; method: string; params?: { arguments?: { text?: string } } };
  if (req.headers.authorization !== "Bearer good-at") {
    return json(res, { error: "invalid_token" }, 401, {
      "www-authenticate": `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/good/mcp"`,
    });
  }
  if (message.id === undefined) return void res.writeHead(202).end();
  const result =
    message.method === "initialize"
      ? { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "good", version: "1" } }
      : message.method === "tools/list"
        ? { tools: [{ name: "echo", inputSchema: { type: "object" } }] }
        : { content: [{ type: "text", text: message.params?.arguments?.text ?? "" }] };
  json(res, { jsonrpc: "2.0", id: message.id, result });
}

function route(req: IncomingMessage, res: ServerResponse): void {
  const path = new URL(req.url ?? "/", "http://x").pathname;
  const name = /^\/(?:\.well-known\/[^/]+\/)?([a-z]+)/.exec(path)?.[1] ?? "";
  hits.set(path, (hits.get(path) ?? 0) + 1);
  if (path === "/good/mcp") return void goodMcp(req, res);
  if (path.startsWith("/.well-known/oauth-protected-resource/")) {
    if (name === "garbled") return json(res, "<html>not metadata</html>");
    const resource = name === "thief" ? `${base}/good/mcp` : `${base}/${name}/mcp`;
    return json(res, { resource, authorization_servers: [`${base}/${name}`] });
  }
  if (path.startsWith("/.well-known/oauth-authorization-server/") || path.startsWith("/.well-known/openid-configuration/")) {
    if (name === "moved") return void res.writeHead(302, { location: `http://192.0.2.1/${name}` }).end();
    const issuer = name === "liar" ? "https://attacker.example.com" : `${base}/${name}`;
    return json(res, { issuer, token_endpoint: `${base}/${name}/token`, grant_types_supported: ["client_credentials"] });
  }
  if (path === `/${name}/mcp`) {
    req.resume();
    const challenge = `Bearer error="invalid_token", resource_metadata="${base}/.well-known/oauth-protected-resource/${name}/mcp"`;
    return json(res, { error: "invalid_token" }, 401, { "www-authenticate": challenge });
  }
  if (path.endsWith("/token")) {
    req.resume();
    return json(res, { access_token: `${name}-at-${hits.get(path)}`, token_type: "Bearer", expires_in: 3600 });
  }
  res.writeHead(404).end();
}

/** The token file an earlier `mcpd auth good` left. */
function seedGood(stateDir: string): string {
  const dir = join(stateDir, "auth");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const issuer = `${base}/good`;
  const tokens = {
    accessToken: "good-at",
    tokenType: "bearer",
    obtainedAt: Date.now(),
    expiresAt: Date.now() + 3_600_000,
    scopes: [],
    resource: `${base}/good/mcp`,
    issuer,
    tokenEndpoint: `${issuer}/token`,
    grant: "client_credentials",
    clientAuthMethod: "client_secret_basic",
  };
  const key = `${issuer} ${base}/good/mcp`;
  const file = join(dir, "good.tokens.json");
  writeFileSync(file, JSON.stringify({ version: 2, current: key, tokens: { [key]: tokens } }), { mode: 0o600 });
  return file;
}

let goodFile = "";
let goodBefore = "";

beforeAll(async () => {
  server = createServer(route);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  home = mkdtempSync(join(tmpdir(), "mcpd-bad-as-"));
  const auth = { grant: "client_credentials", clientId: "mcpd", clientSecret: "s3cret" };
  const servers: Record<string, unknown> = { good: { type: "http", url: `${base}/good/mcp`, auth } };
  for (const name of BAD) servers[name] = { type: "http", url: `${base}/${name}/mcp`, auth, restart: RESTART };
  const configFile = join(home, "config.json");
  writeFileSync(configFile, JSON.stringify({ mcpServers: servers }));
  goodFile = seedGood(home);
  goodBefore = readFileSync(goodFile, "utf8");
  const env: NodeJS.ProcessEnv = { ...process.env, MCPD_HOME: home, MCPD_CONFIG: configFile, MCPD_HTTP_PORT: "0" };
  for (const k of ["MCPD_SOCKET", "XDG_RUNTIME_DIR", "XDG_STATE_HOME"]) delete env[k];
  daemon = await startDaemon({ configFile, foreground: false, env, handleSignals: false });
  client = await RawClient.open(daemon.paths.socketPath);
  await client.initialize();
});

afterAll(async () => {
  client?.close();
  await daemon?.shutdown("test over");
  server?.closeAllConnections();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  if (home) rmSync(home, { recursive: true, force: true });
});

type Row = { name: string; state: string; stateReason: string | null };

async function statusOf(name: string): Promise<Row> {
  const servers = (await client!.request("mcpd/status")).result.servers as Row[];
  return servers.find((s) => s.name === name)!;
}

/** The reason a bad server ended `failed` with (after its one restart). */
async function failure(name: string): Promise<string> {
  const row = await until(async () => {
    const s = await statusOf(name);
    return s.state === "failed" ? s : undefined;
  }, `${name} failed`);
  return row.stateReason ?? "";
}

describe("malicious or broken authorization servers beside a good one", () => {
  it("each fails with its server and the rule in status; none is tried beyond the restart policy", async () => {
    const url = (name: string): string => `${base}/${name}/mcp`;
    expect(await failure("liar")).toMatch(
      new RegExp(`no authorization server metadata for ${url("liar")}.*"issuer" property does not match`),
    );
    expect(await failure("moved")).toMatch(
      new RegExp(
        `no authorization server metadata for ${url("moved")}.*HTTP 302 redirecting to http://192\\.0\\.2\\.1/moved \\(not followed`,
      ),
    );
    expect(await failure("garbled")).toMatch(new RegExp(`no authorization server metadata for ${url("garbled")}: .*garbled/mcp: .*JSON`));
    expect(await failure("thief")).toContain(`the protected resource metadata of ${url("thief")} is for another resource`);
    expect(await failure("endless")).toContain(`${url("endless")} answered HTTP 401 (invalid_token) to an access token just obtained`);
    // Two attempts each (the first and one restart): a bounded number of requests, never a loop.
    for (const name of BAD) expect(hits.get(`/${name}/mcp`), name).toBeLessThanOrEqual(name === "endless" ? 4 : 2);
    expect(hits.get("/endless/token")).toBe(2);
    for (const name of ["liar", "moved", "garbled", "thief"]) expect(hits.get(`/${name}/token`), name).toBeUndefined();
  });

  it("the good server's tokens are untouched byte for byte, nothing is stored for the bad ones, and the good server answers", async () => {
    expect(readFileSync(goodFile, "utf8")).toBe(goodBefore);
    // The endless server's tokens were stored (they were issued), each under its own server's name only.
    const files = readdirSync(join(home, "auth")).sort();
    expect(files.filter((f) => f !== "good.tokens.json")).toEqual(["endless.tokens.json"]);
    const answer = await client!.request("tools/call", { name: "good__echo", arguments: { text: "still here" } });
    expect(answer.result?.content?.[0]?.text, JSON.stringify(answer)).toBe("still here");
    expect((await statusOf("good")).state).toBe("ready");
  });
});
