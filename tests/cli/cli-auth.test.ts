/**
 * OAuth end to end: the real daemon and `mcpd` command against an OAuth-protected MCP server written for
 * the tests (tests/fixtures/servers/oauth-mcp.mjs: an authorization server and a resource server on
 * 127.0.0.1), an agent (the official SDK Client over McpdTransport) calling through the daemon, and a
 * stand-in browser ($BROWSER = tests/fixtures/browser/follow-redirects.mjs) that follows the
 * authorization redirect. The tests run in order: each starts where the one before left the daemon.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpdTransport } from "@mcpd/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliWorld, ROOT, until, type CliRun } from "./cli-harness.js";

const OAUTH_FIXTURE = join(ROOT, "tests/fixtures/servers/oauth-mcp.mjs");
const BROWSER = `${process.execPath} ${join(ROOT, "tests/fixtures/browser/follow-redirects.mjs")}`;
/** Access token lifetime of the fixture, in s: short, so a refresh comes within the test. */
const TTL_S = 2;

interface FixtureState {
  registrations: number;
  authorizations: number;
  grants: { authorization_code: number; refresh_token: number };
  refused: number;
  tokens: string[];
  lastAccessExpiresAt: number;
  mcpRequests: number;
  unauthorized: number;
  mcpCalls: Array<{ method: string; token: string }>;
}

let world: CliWorld;
let fixture: ChildProcess;
let issuer: string;
let url: string;
let agent: Client;
/** Every text mcpd showed: command output, status, errors. No token may be in any of them. */
const shown: string[] = [];

async function mcpd(args: string[], env?: NodeJS.ProcessEnv): Promise<CliRun> {
  const r = await world.run(args, env ? { env } : {});
  shown.push(r.stdout, r.stderr);
  return r;
}

async function fixtureState(): Promise<FixtureState> {
  return (await (await fetch(`${issuer}/admin/state`)).json()) as FixtureState;
}

async function serverStatus(name: string): Promise<{ state: string; stateReason: string | null }> {
  const r = await mcpd(["status", "--json"]);
  const servers = JSON.parse(r.stdout).servers as Array<{ name: string; state: string; stateReason: string | null }>;
  return servers.find((s) => s.name === name) as { state: string; stateReason: string | null };
}

async function call(tool: string, args: Record<string, unknown> = {}): Promise<string> {
  const result = await agent.callTool({ name: tool, arguments: args });
  const text = (result.content as Array<{ text?: string }>)[0]?.text ?? "";
  shown.push(JSON.stringify(result));
  return text;
}

async function callError(tool: string): Promise<{ code: number; message: string }> {
  try {
    await agent.callTool({ name: tool, arguments: { text: "x" } });
  } catch (err) {
    const e = err as { code: number; message: string };
    shown.push(e.message);
    return e;
  }
  throw new Error(`${tool} did not fail`);
}

beforeAll(async () => {
  world = new CliWorld();
  fixture = spawn(process.execPath, [OAUTH_FIXTURE, "--ttl", String(TTL_S)], { stdio: ["ignore", "pipe", "inherit"] });
  const first = await new Promise<string>((resolve, reject) => {
    createInterface({ input: fixture.stdout! }).once("line", resolve);
    fixture.once("exit", (code) => reject(new Error(`oauth fixture exited with ${code}`)));
  });
  ({ issuer, url } = JSON.parse(first) as { issuer: string; url: string });
  world.env.MCPD_LOG_LEVEL = "trace";
  world.env.BROWSER = BROWSER;
  world.writeConfig({ oauthy: { type: "http", url }, fx: world.fixture("fx") });
  const r = await mcpd(["start"]);
  if (r.code !== 0) throw new Error(`start failed: ${r.stderr}`);
  agent = new Client({ name: "agent", version: "1.0.0" });
  await agent.connect(new McpdTransport({ env: world.env }));
});

afterAll(async () => {
  await agent?.close().catch(() => {});
  await world?.run(["stop"]);
  if (fixture && fixture.exitCode === null) {
    const gone = new Promise((resolve) => fixture.once("exit", resolve));
    fixture.kill("SIGKILL");
    await gone;
  }
  await world?.dispose();
});

describe("OAuth through the daemon", () => {
  it("before authorization: the server is needs-auth with the command in status; its calls fail at once with -32076 naming it; others work", async () => {
    const status = await until(async () => {
      const s = await serverStatus("oauthy");
      return s.state === "needs-auth" ? s : undefined;
    }, "oauthy needs-auth");
    expect(status.stateReason).toContain("run `mcpd auth oauthy`");
    const human = await mcpd(["status"]);
    expect(human.stdout).toMatch(/oauthy\s+needs-auth/);
    expect(human.stdout).toContain("oauthy: needs-auth: no access token yet: run `mcpd auth oauthy`");

    const before = (await fixtureState()).mcpRequests;
    const err = await callError("oauthy__echo");
    expect(err.code).toBe(-32076);
    expect(err.message).toContain('Server "oauthy" needs authorization');
    expect(err.message).toContain("`mcpd auth oauthy`");
    // At once: the daemon did not even ask the server.
    expect((await fixtureState()).mcpRequests).toBe(before);
    expect(await call("fx__echo", { text: "still here" })).toBe("still here");
  });

  it("mcpd auth: prints the URL, the browser follows the redirect, says the scopes granted; the agent's calls work; token files are 0600 in a 0700 directory", async () => {
    const r = await mcpd(["auth", "oauthy"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${issuer}/authorize?`);
    expect(r.stdout).toContain("Opened with $BROWSER.");
    expect(r.stdout).toContain("authorized oauthy; scopes granted: mcp:read mcp:write");
    expect(r.stdout).toMatch(/^oauthy: ready$/m);
    const state = await fixtureState();
    expect(state).toMatchObject({ registrations: 1, authorizations: 1, grants: { authorization_code: 1 } });

    expect(await call("oauthy__whoami")).toBe("scopes: mcp:read mcp:write");
    expect(await call("oauthy__echo", { text: "authorized" })).toBe("authorized");

    const dir = join(world.mcpdHome, "auth");
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readdirSync(dir).sort()).toEqual(["oauthy.client.json", "oauthy.tokens.json"]);
    for (const f of readdirSync(dir)) expect(statSync(join(dir, f)).mode & 0o777, f).toBe(0o600);
  });

  it("refreshes an expiring token, and a token the server stopped accepting, without the agent noticing", async () => {
    const before = await fixtureState();
    // Tokens issued from now on live long: the 401 below must not race a refresh that comes first.
    await fetch(`${issuer}/admin/ttl?s=3600`, { method: "POST" });
    await until(async () => Date.now() > (await fixtureState()).lastAccessExpiresAt, "the access token to expire", 20_000, 100);
    expect(await call("oauthy__echo", { text: "after expiry" })).toBe("after expiry");
    const afterExpiry = await fixtureState();
    expect(afterExpiry.grants.refresh_token).toBeGreaterThan(before.grants.refresh_token);
    // The call went out with the new token, not the expired one.
    expect(afterExpiry.mcpCalls.at(-1)?.token).toBe(afterExpiry.tokens.at(-2));

    // The server forgets its access tokens (the client still thinks they are good): 401, one refresh, retry.
    await fetch(`${issuer}/admin/expire`, { method: "POST" });
    expect(await call("oauthy__echo", { text: "after 401" })).toBe("after 401");
    const after401 = await fixtureState();
    expect(after401.unauthorized).toBe(afterExpiry.unauthorized + 1);
    expect(after401.grants.refresh_token).toBe(afterExpiry.grants.refresh_token + 1);
    expect((await serverStatus("oauthy")).state).toBe("ready");
  });

  it("a call that needs more scopes (403 insufficient_scope) fails with -32076 naming `mcpd auth`; the server stays ready; mcpd auth asks for them", async () => {
    const err = await callError("oauthy__admin");
    expect(err.code).toBe(-32076);
    expect(err.message).toContain("more scopes needed: mcp:read mcp:write mcp:admin");
    expect(err.message).toContain("run `mcpd auth oauthy`");
    expect((await serverStatus("oauthy")).state).toBe("ready");
    expect(await call("oauthy__echo", { text: "other calls work" })).toBe("other calls work");

    const r = await mcpd(["auth", "oauthy"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("authorized oauthy; scopes granted: mcp:read mcp:write mcp:admin");
    expect(await call("oauthy__admin")).toBe("admin ok");
  });

  it("a revoked refresh token puts the server in needs-auth with a clear error; other servers are unaffected; mcpd auth recovers", async () => {
    await fetch(`${issuer}/admin/revoke`, { method: "POST" });
    const err = await callError("oauthy__echo");
    expect(err.code).toBe(-32076);
    expect(err.message).toContain("the refresh token was refused (invalid_grant)");
    expect(err.message).toContain("run `mcpd auth oauthy`");
    const status = await until(async () => {
      const s = await serverStatus("oauthy");
      return s.state === "needs-auth" ? s : undefined;
    }, "oauthy needs-auth after the revocation");
    expect(status.stateReason).toBe("the refresh token was refused (invalid_grant): run `mcpd auth oauthy`");
    const before = (await fixtureState()).mcpRequests;
    expect((await callError("oauthy__echo")).code).toBe(-32076);
    expect((await fixtureState()).mcpRequests).toBe(before);
    expect(await call("fx__echo", { text: "unaffected" })).toBe("unaffected");
    expect(existsSync(join(world.mcpdHome, "auth", "oauthy.tokens.json"))).toBe(false);

    const again = await mcpd(["auth", "oauthy"]);
    expect(again.code, again.stderr).toBe(0);
    expect(await call("oauthy__echo", { text: "back" })).toBe("back");
  });

  it("mcpd auth --logout forgets the tokens and the registration; the server needs auth again", async () => {
    const r = await mcpd(["auth", "--logout", "oauthy"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("forgot the tokens and client registration of oauthy");
    expect(r.stdout).toMatch(/^oauthy: needs-auth$/m);
    expect(readdirSync(join(world.mcpdHome, "auth"))).toEqual([]);
    expect((await callError("oauthy__echo")).code).toBe(-32076);
  });

  it("no token ever appears in a log line, the status, an error or the command's output", async () => {
    const tokens = (await fixtureState()).tokens;
    expect(tokens.length).toBeGreaterThanOrEqual(8);
    await mcpd(["logs", "oauthy"]);
    await mcpd(["status", "--json"]);
    const log = readFileSync(join(world.mcpdHome, "mcpd.log"), "utf8");
    // The log is at trace level: every message through the daemon is in it.
    expect(log).toContain("authorization granted");
    for (const text of [log, ...shown])
      for (const token of tokens) expect(text.includes(token), `token in: ${text.slice(0, 200)}`).toBe(false);
  });
});
