/**
 * Never log in twice: a daemon in this process, with an injected clock, against an authorization server
 * and an MCP server written for this test (one HTTP server on 127.0.0.1, the same clock). Access tokens
 * live 60 s; refresh tokens rotate. A simulated day passes in steps shorter than a token's life, with
 * several calls at once at every step and one refresh answered 503 on the way: every call succeeds, the
 * tokens are refreshed and never obtained again from the user (no authorization code grant), and one
 * refresh runs per expiry (a second refresh of the same rotated token would be refused and counted).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startDaemon, type DaemonHandle } from "../../daemon/src/daemon.js";
import { RawClient } from "./harness.js";

const TTL_MS = 60_000;
const DAY_MS = 24 * 3_600_000;
const STEP_MS = 50_000;
const CALLS_PER_STEP = 4;

/** The fake clock: the daemon's token lifetimes and refresh backoff, and the servers' token expiry. */
let now = Date.UTC(2026, 0, 1);
const clock = { now: () => now, sleep: async (ms: number) => void (now += ms) };

interface World {
  server: Server;
  base: string;
  counts: { refreshes: number; refused: number; codeGrants: number; unauthorized: number; transient: number };
  failNextRefresh: boolean;
}

let world: World | undefined;
let daemon: DaemonHandle | undefined;
let home: string | undefined;
let client: RawClient | undefined;
afterEach(async () => {
  client?.close();
  await daemon?.shutdown("test over");
  await new Promise((r) => (world ? world.server.close(r) : r(undefined)));
  if (home) rmSync(home, { recursive: true, force: true });
  world = daemon = home = client = undefined;
});

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    req.on("data", (d: Buffer) => (text += d.toString()));
    req.on("end", () => resolve(text));
  });
}

function json(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(value));
}

/** The authorization server and the MCP server: one process, one port, the fake clock. */
async function startWorld(): Promise<World> {
  const access = new Map<string, number>([["at-0", now + TTL_MS]]);
  let refreshToken = "rt-0";
  const w = { counts: { refreshes: 0, refused: 0, codeGrants: 0, unauthorized: 0, transient: 0 }, failNextRefresh: false } as World;
  const issue = (res: ServerResponse): void => {
    const n = ++w.counts.refreshes;
    access.set(`at-${n}`, now + TTL_MS);
    refreshToken = `rt-${n}`;
    json(res, 200, { access_token: `at-${n}`, token_type: "Bearer", expires_in: TTL_MS / 1000, refresh_token: refreshToken });
  };
  const token = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const form = new URLSearchParams(await body(req));
    if (form.get("grant_type") === "authorization_code") w.counts.codeGrants++;
    if (form.get("grant_type") !== "refresh_token") return json(res, 400, { error: "unsupported_grant_type" });
    if (w.failNextRefresh) {
      w.failNextRefresh = false;
      w.counts.transient++;
      return json(res, 503, { error: "temporarily_unavailable" });
    }
    if (form.get("refresh_token") !== refreshToken) {
      w.counts.refused++;
      return json(res, 400, { error: "invalid_grant" });
    }
    issue(res);
  };
  const mcp = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== "POST") return void res.writeHead(req.method === "DELETE" ? 200 : 405).end();
    const message = JSON.parse(await body(req)) as { id?: number; method: string; params?: { arguments?: { text?: string } } };
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
    if ((access.get(bearer) ?? 0) <= now) {
      w.counts.unauthorized++;
      return json(
        res,
        401,
        { error: "invalid_token" },
        { "www-authenticate": `Bearer resource_metadata="${w.base}/.well-known/oauth-protected-resource/mcp"` },
      );
    }
    if (message.id === undefined) return void res.writeHead(202).end();
    const result =
      message.method === "initialize"
        ? { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "day", version: "1" } }
        : message.method === "tools/list"
          ? { tools: [{ name: "echo", inputSchema: { type: "object" } }] }
          : message.method === "tools/call"
            ? { content: [{ type: "text", text: message.params?.arguments?.text ?? "" }] }
            : undefined;
    if (result) return json(res, 200, { jsonrpc: "2.0", id: message.id, result });
    json(res, 200, { jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } });
  };
  w.server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path === "/.well-known/oauth-protected-resource/mcp") {
      return json(res, 200, { resource: `${w.base}/mcp`, authorization_servers: [w.base] });
    }
    if (path === "/.well-known/oauth-authorization-server") {
      const endpoints = { authorization_endpoint: `${w.base}/authorize`, token_endpoint: `${w.base}/token` };
      return json(res, 200, {
        issuer: w.base,
        ...endpoints,
        code_challenge_methods_supported: ["S256"],
        token_endpoint_auth_methods_supported: ["none"],
      });
    }
    if (path === "/token") return void token(req, res);
    if (path === "/mcp") return void mcp(req, res);
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => w.server.listen(0, "127.0.0.1", r));
  w.base = `http://127.0.0.1:${(w.server.address() as { port: number }).port}`;
  return w;
}

/** The tokens and registration an earlier `mcpd auth` left, in the store's layout. */
function seedStore(stateDir: string, w: World): void {
  const dir = join(stateDir, "auth");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tokens = {
    accessToken: "at-0",
    tokenType: "bearer",
    refreshToken: "rt-0",
    obtainedAt: now,
    expiresAt: now + TTL_MS,
    scopes: [],
    resource: `${w.base}/mcp`,
    issuer: w.base,
    tokenEndpoint: `${w.base}/token`,
    grant: "authorization_code",
    clientAuthMethod: "none",
  };
  const key = `${w.base} ${w.base}/mcp`;
  writeFileSync(join(dir, "day.tokens.json"), JSON.stringify({ version: 2, current: key, tokens: { [key]: tokens } }), { mode: 0o600 });
  const registration = {
    issuer: w.base,
    clientId: "mcpd-test",
    redirectUris: ["http://127.0.0.1:1/callback"],
    tokenEndpointAuthMethod: "none",
  };
  writeFileSync(join(dir, "day.client.json"), JSON.stringify({ version: 2, clients: { [w.base]: registration } }), { mode: 0o600 });
}

describe("tokens that never make the user log in again", () => {
  it("a simulated day of 60 s tokens with calls in parallel and a transient refresh failure: every call succeeds, refreshed, never re-authorized, one refresh per expiry", {
    timeout: 600_000,
  }, async () => {
    world = await startWorld();
    home = mkdtempSync(join(tmpdir(), "mcpd-day-"));
    const configFile = join(home, "config.json");
    writeFileSync(configFile, JSON.stringify({ mcpServers: { day: { type: "http", url: `${world.base}/mcp` } } }));
    seedStore(home, world);
    const env: NodeJS.ProcessEnv = { ...process.env, MCPD_HOME: home, MCPD_CONFIG: configFile, MCPD_HTTP_PORT: "0" };
    for (const k of ["MCPD_SOCKET", "XDG_RUNTIME_DIR", "XDG_STATE_HOME"]) delete env[k];
    daemon = await startDaemon({ configFile, foreground: false, env, handleSignals: false, oauthClock: clock });
    client = await RawClient.open(daemon.paths.socketPath);
    await client.initialize();
    const steps = DAY_MS / STEP_MS;
    const start = now;
    let calls = 0;
    for (let step = 0; step < steps; step++) {
      // Half way, the daemon comes back to a token that has expired, and its refresh first meets a 503:
      // without a retry, the calls waiting for it would fail.
      const failing = step === Math.floor(steps / 2);
      now += failing ? TTL_MS + 10_000 : STEP_MS;
      world.failNextRefresh = failing;
      const answers = await Promise.all(
        Array.from({ length: CALLS_PER_STEP }, (_, i) =>
          client!.request("tools/call", { name: "day__echo", arguments: { text: `${step}.${i}` } }),
        ),
      );
      for (const [i, a] of answers.entries()) expect(a.result?.content?.[0]?.text, JSON.stringify(a)).toBe(`${step}.${i}`);
      calls += answers.length;
    }
    expect(calls).toBe(steps * CALLS_PER_STEP);
    expect(now - start).toBeGreaterThanOrEqual(DAY_MS);
    expect(world.counts.codeGrants).toBe(0);
    expect(world.counts.transient).toBe(1);
    // Each step passes the refresh margin of the token before: one refresh each, never two of one token.
    expect(world.counts.refused).toBe(0);
    expect(world.counts.refreshes).toBe(steps);
    expect(world.counts.unauthorized).toBe(0);
  });
});
