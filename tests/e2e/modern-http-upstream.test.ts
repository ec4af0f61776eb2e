/**
 * mcpd as a 2026-07-28 client over Streamable HTTP (issue 32): the headers it mirrors from each request's
 * body (`Mcp-Method`, `Mcp-Name`, and the `Mcp-Param-{Name}` ones its tools' `x-mcp-header` annotations
 * ask for, encoded as the spec says), the tools it leaves out for invalid annotations (in `mcpd status`
 * and the log), and HeaderMismatch (-32020) followed as the spec advises: list the tools again, retry once.
 * The upstream is a test server that checks the headers against the body with its own code; the client is
 * the official v1 SDK Client through `mcpd connect`.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { MCPD_BIN, ROOT, connectCommand, startTestDaemon, until, type TestDaemon } from "./harness.js";

const FIXTURE = join(ROOT, "tests/fixtures/http/param-headers-fixture.mjs");

let daemon: TestDaemon | undefined;
let client: Client | undefined;
let server: ChildProcess | undefined;

afterEach(async () => {
  await client?.close().catch(() => {});
  client = undefined;
  await daemon?.stop();
  daemon = undefined;
  const s = server;
  server = undefined;
  if (s && s.exitCode === null && s.signalCode === null) {
    s.kill("SIGTERM");
    await until(() => s.exitCode !== null || s.signalCode !== null, "fixture exit").catch(() => s.kill("SIGKILL"));
  }
});

/** Starts the fixture and a daemon with it as server `hx`, ready; returns the daemon and a v1 client through `mcpd connect`. */
async function setUp(): Promise<{ d: TestDaemon; c: Client }> {
  const child = (server = spawn(process.execPath, [FIXTURE], { stdio: ["ignore", "pipe", "inherit"] }));
  let out = "";
  child.stdout?.on("data", (b: Buffer) => (out += b.toString()));
  const url = await until(() => /LISTENING (\S+)/.exec(out)?.[1], "fixture listening");
  const d = (daemon = await startTestDaemon({ hx: { type: "http", url } }));
  await until(async () => (await status(d))?.state === "ready", "hx ready");
  const c = (client = new Client({ name: "headers-e2e", version: "1.0.0" }));
  await c.connect(new StdioClientTransport(connectCommand(d)));
  return { d, c };
}

async function status(d: TestDaemon): Promise<any> {
  const ctl = await d.control();
  const servers = (await ctl.request("mcpd/status")).result.servers;
  ctl.close();
  return servers.find((s: any) => s.name === "hx");
}

const textOf = (r: any): string => r.content?.[0]?.text ?? "";

describe("mcpd as a 2026 client over Streamable HTTP", () => {
  it("mirrors Mcp-Method, Mcp-Name and the x-mcp-header arguments (nested, integer, boolean, base64 when not plain ASCII); an absent argument gets no header", async () => {
    const { c } = await setUp();
    const seen = JSON.parse(
      textOf(
        await c.callTool({ name: "hx__route", arguments: { region: "eu-west-1", opts: { shard: 42, dry: true }, query: "select 1" } }),
      ),
    );
    expect(seen).toMatchObject({
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": "route",
      "mcp-param-region": "eu-west-1",
      "mcp-param-shard": "42",
      "mcp-param-dry-run": "true",
    });
    const encoded = JSON.parse(textOf(await c.callTool({ name: "hx__route", arguments: { region: " Zürich\n", query: "q" } })));
    expect(encoded["mcp-param-region"]).toBe(`=?base64?${Buffer.from(" Zürich\n").toString("base64")}?=`);
    expect(encoded["mcp-param-shard"]).toBeUndefined();
    expect(encoded["mcp-param-dry-run"]).toBeUndefined();
    const literal = JSON.parse(textOf(await c.callTool({ name: "hx__route", arguments: { region: "=?base64?abc?=" } })));
    expect(literal["mcp-param-region"]).toBe(`=?base64?${Buffer.from("=?base64?abc?=").toString("base64")}?=`);
  });

  it("leaves out the tools whose x-mcp-header annotations are invalid, saying which and why in status and the log", async () => {
    const { d, c } = await setUp();
    const names = (await c.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual(["hx__plain", "hx__rename", "hx__route", "hx__stats"]);
    const rejected = (await status(d)).rejectedTools;
    expect(rejected.map((r: any) => r.name).sort()).toEqual(["bad_dup", "bad_items", "bad_number", "bad_root", "bad_token"]);
    const reason = (name: string) => rejected.find((r: any) => r.name === name).reason;
    expect(reason("bad_number")).toMatch(/not string, integer or boolean/);
    expect(reason("bad_items")).toMatch(/not reachable/);
    expect(reason("bad_dup")).toMatch(/twice/);
    expect(reason("bad_token")).toMatch(/not an HTTP header token/);
    const warnings = d
      .stderr()
      .split("\n")
      .filter((l) => l.includes("x-mcp-header annotation is invalid"));
    for (const name of ["bad_dup", "bad_items", "bad_number", "bad_root", "bad_token"])
      expect(warnings.some((l) => l.includes(`"${name}"`))).toBe(true);
    const { stdout } = await promisify(execFile)(process.execPath, [MCPD_BIN, "status"], {
      env: { ...process.env, MCPD_HOME: d.home, MCPD_CONFIG: d.configFile, NO_COLOR: "1" },
    });
    expect(stdout).toContain('hx: tool "bad_number" left out: ');
  });

  it("refuses a call of a tool left out for its annotation (-32602) without sending it, in the server's transparent view", async () => {
    const { d } = await setUp();
    const r = await d.raw();
    try {
      expect((await r.request("mcpd/select", { server: "hx" })).error).toBeUndefined();
      await r.initialize();
      // The fixture answers a call of any other tool with the tool's name: this answer is mcpd's.
      const refused = await r.request("tools/call", { name: "bad_number", arguments: { n: 1 } });
      expect(refused.error?.code).toBe(-32602);
      expect(refused.error?.message).toMatch(/Tool "bad_number" is not available: its x-mcp-header annotation is invalid/);
      expect((await r.request("tools/call", { name: "plain", arguments: {} })).result?.content?.[0]?.text).toBe("plain");
    } finally {
      r.close();
    }
  });

  it("a HeaderMismatch (-32020) after the tool's annotation changed: lists the tools again and retries once with the new headers", async () => {
    const { c } = await setUp();
    const stats = async () => JSON.parse(textOf(await c.callTool({ name: "hx__stats", arguments: {} })));
    const before = await stats();
    expect(textOf(await c.callTool({ name: "hx__rename", arguments: {} }))).toBe("renamed");
    const seen = JSON.parse(textOf(await c.callTool({ name: "hx__route", arguments: { region: "us-east" } })));
    expect(seen["mcp-param-zone"]).toBe("us-east");
    expect(seen["mcp-param-region"]).toBeUndefined();
    const after = await stats();
    expect(after.mismatches).toBe(before.mismatches + 1);
    expect(after.lists).toBeGreaterThan(before.lists);
  });
});
