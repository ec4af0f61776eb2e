/**
 * OAuth for a server that speaks only MCP 2026-07-28 (issue 33): the official v2 SDK server
 * (`legacy: "reject"`) behind the bearer-token check of tests/fixtures/servers/oauth-mcp.mjs (`--modern`),
 * the real daemon and `mcpd` command, a stand-in browser following the authorization redirect, and an agent
 * (the official v1 SDK Client over McpdTransport). Such a server asks for authorization before mcpd knows
 * its era: mcpd learns that it needs auth without ever sending it `initialize`, and settles the era once a
 * token exists.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpdTransport } from "@mcpd/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliWorld, ROOT, until } from "./cli-harness.js";

const OAUTH_FIXTURE = join(ROOT, "tests/fixtures/servers/oauth-mcp.mjs");
const BROWSER = `${process.execPath} ${join(ROOT, "tests/fixtures/browser/follow-redirects.mjs")}`;

interface ServerStatus {
  name: string;
  state: string;
  stateReason: string | null;
  era: string | null;
}

let world: CliWorld;
let fixture: ChildProcess;
let issuer: string;
let url: string;

async function mcpMethods(): Promise<string[]> {
  return ((await (await fetch(`${issuer}/admin/state`)).json()) as { mcpMethods: string[] }).mcpMethods;
}

async function serverStatus(name = "modern"): Promise<ServerStatus> {
  const r = await world.run(["status", "--json"]);
  return (JSON.parse(r.stdout).servers as ServerStatus[]).find((s) => s.name === name) as ServerStatus;
}

async function callEcho(tool: string, text: string): Promise<string | undefined> {
  const agent = new Client({ name: "agent", version: "1.0.0" });
  await agent.connect(new McpdTransport({ env: world.env }));
  try {
    const result = await agent.callTool({ name: tool, arguments: { text } });
    return (result.content as Array<{ text?: string }>)[0]?.text;
  } finally {
    await agent.close();
  }
}

beforeAll(async () => {
  world = new CliWorld();
  fixture = spawn(process.execPath, [OAUTH_FIXTURE, "--modern"], { stdio: ["ignore", "pipe", "inherit"] });
  const first = await new Promise<string>((resolve, reject) => {
    createInterface({ input: fixture.stdout! }).once("line", resolve);
    fixture.once("exit", (code) => reject(new Error(`oauth fixture exited with ${code}`)));
  });
  ({ issuer, url } = JSON.parse(first) as { issuer: string; url: string });
  world.env.BROWSER = BROWSER;
  // `lazy` is not started before its first use: `mcpd auth lazy` finds no challenge its transport saw.
  world.writeConfig({ modern: { type: "http", url }, lazy: { type: "http", url, startup: "lazy" } });
  const r = await world.run(["start"]);
  if (r.code !== 0) throw new Error(`start failed: ${r.stderr}`);
});

afterAll(async () => {
  await world?.run(["stop"]);
  if (fixture && fixture.exitCode === null) {
    const gone = new Promise((resolve) => fixture.once("exit", resolve));
    fixture.kill("SIGKILL");
    await gone;
  }
  await world?.dispose();
});

describe("OAuth for a server that speaks only 2026-07-28", () => {
  it("is needs-auth without initialize ever sent to it; after mcpd auth it is ready in the 2026 era and a v1 client's call goes through", async () => {
    const before = await until(async () => {
      const s = await serverStatus();
      return s.state === "needs-auth" ? s : undefined;
    }, "modern needs-auth");
    expect(before.stateReason).toBe("no access token yet: run `mcpd auth modern`");
    expect(await mcpMethods()).not.toContain("initialize");

    const auth = await world.run(["auth", "modern"]);
    expect(auth.code, auth.stderr).toBe(0);
    expect(auth.stdout).toContain("authorized modern; scopes granted: mcp:read mcp:write");
    expect(auth.stdout).toMatch(/^modern: ready$/m);
    expect(await serverStatus()).toMatchObject({ state: "ready", era: "2026" });

    expect(await callEcho("modern__echo", "through")).toBe("through");
    const methods = await mcpMethods();
    expect(methods).toContain("server/discover");
    expect(methods).toContain("tools/call");
    expect(methods).not.toContain("initialize");
  });

  it("mcpd auth for a server never started asks the server what it wants without initialize; the server is then ready in the 2026 era", async () => {
    expect((await serverStatus("lazy")).state).not.toBe("ready");
    const auth = await world.run(["auth", "lazy"]);
    expect(auth.code, auth.stderr).toBe(0);
    expect(auth.stdout).toContain("authorized lazy; scopes granted: mcp:read mcp:write");
    expect(await callEcho("lazy__echo", "lazily")).toBe("lazily");
    expect(await serverStatus("lazy")).toMatchObject({ state: "ready", era: "2026" });
    expect(await mcpMethods()).not.toContain("initialize");
  });
});
