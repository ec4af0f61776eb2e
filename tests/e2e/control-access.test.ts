/**
 * Who may use mcpd's privileged control methods. An agent's MCP session (a connection that sent
 * `initialize`, e.g. an MCP client behind `mcpd connect`) must not stop the daemon, disable, enable,
 * restart or reload servers, read their stderr, or see other clients' identities; the CLI and a connection
 * that declared itself a control connection (`mcpd/select {control: true}` as its first message) can.
 */
import { execFile } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { EmptyResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { connect as connectMcpd, type McpdClient, type McpdError } from "@mcpd/client";
import { MCPD_BIN, fixture, startTestDaemon, until, type RawClient, type TestDaemon } from "./harness.js";

let daemon: TestDaemon | undefined;
const sdkClients: Client[] = [];
const mcpdClients: McpdClient[] = [];

afterEach(async () => {
  for (const c of sdkClients.splice(0)) await c.close().catch(() => {});
  for (const c of mcpdClients.splice(0)) await c.close().catch(() => {});
  await daemon?.stop();
  daemon = undefined;
});

const FORBIDDEN = -32071;

/** Every privileged method, with params that would work on a control connection. */
const PRIVILEGED: Array<[string, Record<string, unknown> | undefined]> = [
  ["mcpd/disable", { server: "fx" }],
  ["mcpd/enable", { server: "fx" }],
  ["mcpd/restart", { server: "fx" }],
  ["mcpd/restart", {}],
  ["mcpd/reload", undefined],
  ["mcpd/logs", { server: "fx" }],
  ["mcpd/logs", {}],
  ["mcpd/shutdown", undefined],
];

async function agent(d: TestDaemon, name: string, server?: string): Promise<RawClient> {
  const c = await d.raw();
  if (server !== undefined) await c.request("mcpd/select", { server });
  await c.request("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name, version: "1" } });
  c.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  return c;
}

const pidOf = async (c: RawClient): Promise<number> =>
  Number((await c.request("tools/call", { name: "fx__pid", arguments: {} })).result.content[0].text);

function expectForbidden(response: any, method: string): void {
  expect(response.error, `${method}: ${JSON.stringify(response)}`).toBeDefined();
  expect(response.error.code).toBe(FORBIDDEN);
  expect(response.error.data?.mcpdCode).toBe("MCPD_FORBIDDEN");
  expect(response.error.message).toContain(method);
  expect(response.error.message).toContain("control connection");
}

function sdkThroughConnect(d: TestDaemon, server?: string): { client: Client; transport: StdioClientTransport } {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MCPD_BIN, "connect", ...(server ? [server] : []), "--no-autostart"],
    env: { ...(process.env as Record<string, string>), MCPD_HOME: d.home, MCPD_CONFIG: d.configFile },
    stderr: "pipe",
  });
  const client = new Client({ name: "sdk-agent", version: "1.0.0" }, { capabilities: {} });
  sdkClients.push(client);
  return { client, transport };
}

function cli(d: TestDaemon, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MCPD_BIN, ...args],
      { env: { ...process.env, MCPD_HOME: d.home, MCPD_CONFIG: d.configFile }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe("control access: an agent's MCP session cannot stop or reconfigure anything", () => {
  it("refuses every privileged mcpd/* method on an initialized session, and on a connection that never declared control (bug: any agent could shut the daemon down)", async () => {
    const d = (daemon = await startTestDaemon({ fx: fixture("fx") }));
    const a = await agent(d, "agent-a");
    const before = await until(() => pidOf(a).catch(() => 0), "fx serving");
    for (const [method, params] of PRIVILEGED) expectForbidden(await a.request(method, params), method);
    // A connection that sent nothing else is no control connection either: control is declared, never assumed.
    const bare = await d.raw();
    for (const [method, params] of PRIVILEGED) expectForbidden(await bare.request(method, params), method);
    // Nothing happened: the daemon runs, the server was neither restarted nor disabled.
    expect(d.proc.exitCode).toBeNull();
    expect(await pidOf(a)).toBe(before);
    const ctl = await d.control();
    const fx = (await ctl.request("mcpd/status")).result.servers.find((s: any) => s.name === "fx");
    expect([fx.state, fx.restarts]).toEqual(["ready", 0]);
  });

  it("never lets a session become a control connection after it started (bug: mcpd/select could be sent at any point)", async () => {
    const d = (daemon = await startTestDaemon({ fx: fixture("fx") }));
    const a = await agent(d, "agent-a");
    const late = await a.request("mcpd/select", { control: true });
    expect(late.error?.code).toBe(FORBIDDEN);
    expect(late.error?.message).toContain("first message");
    expectForbidden(await a.request("mcpd/shutdown"), "mcpd/shutdown");
    // Not the first message: a ping (or a view selection) came first.
    const pinged = await d.raw();
    await pinged.request("ping");
    expect((await pinged.request("mcpd/select", { control: true })).error?.code).toBe(FORBIDDEN);
    const viewed = await d.raw();
    await viewed.request("mcpd/select", { server: "fx" });
    expect((await viewed.request("mcpd/select", { control: true })).error?.code).toBe(FORBIDDEN);
    expectForbidden(await viewed.request("mcpd/reload"), "mcpd/reload");
    const bad = await d.raw();
    expect((await bad.request("mcpd/select", { control: "yes" })).error?.code).toBe(-32602);
    expect(d.proc.exitCode).toBeNull();
  });

  it("gives an agent a status of its own session and the servers' states, without other clients' identities or stderr", async () => {
    const d = (daemon = await startTestDaemon({ fx: fixture("fx") }));
    const other = await agent(d, "other-agent-identity-7f3a");
    const a = await agent(d, "agent-a");
    await until(() => pidOf(a).catch(() => 0), "fx serving");
    await a.request("tools/call", { name: "fx__stderr", arguments: { text: "stderr-only-for-operators-91c2" } });
    const ctl = await d.control();
    // The operator sees everything: every client, the server's stderr.
    await until(
      async () => JSON.stringify((await ctl.request("mcpd/logs", { server: "fx" })).result).includes("stderr-only-for-operators-91c2"),
      "stderr in logs",
    );
    const full = (await ctl.request("mcpd/status")).result;
    expect(full.clients.map((c: any) => c.clientInfo?.name)).toEqual(expect.arrayContaining(["other-agent-identity-7f3a", "agent-a"]));
    const reduced = (await a.request("mcpd/status")).result;
    expect(reduced.restricted).toBe(true);
    expect(reduced.clients).toHaveLength(1);
    expect(reduced.clients[0].clientInfo.name).toBe("agent-a");
    expect(reduced.servers.map((s: any) => [s.name, s.state])).toEqual([["fx", "ready"]]);
    const text = JSON.stringify(reduced);
    expect(text).not.toContain("other-agent-identity-7f3a");
    expect(text).not.toContain("stderr-only-for-operators-91c2");
    for (const s of reduced.servers) expect([s.lastStderr, s.lastError]).toEqual([null, null]);
    // Read-only listings stay open to agents.
    expect((await a.request("mcpd/servers")).result.servers[0].name).toBe("fx");
    expect((await a.request("mcpd/tools")).result.tools.some((t: any) => t.exposedName === "fx__echo")).toBe(true);
    other.close();
  });

  it("refuses mcpd/shutdown and a late mcpd/select {control} from the official SDK Client through mcpd connect, aggregate and transparent", async () => {
    const d = (daemon = await startTestDaemon({ fx: fixture("fx") }));
    for (const server of [undefined, "fx"]) {
      const { client, transport } = sdkThroughConnect(d, server);
      await client.connect(transport);
      for (const [method, params] of [["mcpd/select", { control: true }], ...PRIVILEGED] as Array<
        [string, Record<string, unknown> | undefined]
      >) {
        const err = await client.request({ method, ...(params ? { params } : {}) }, EmptyResultSchema).then(
          () => undefined,
          (e: { code?: number; message?: string }) => e,
        );
        expect(err?.code, `${method} through mcpd connect ${server ?? ""}`).toBe(FORBIDDEN);
      }
      expect(d.proc.exitCode).toBeNull();
      const r = await client.callTool({ name: server ? "echo" : "fx__echo", arguments: { text: "still here" } });
      expect((r.content as Array<{ text: string }>)[0]!.text).toBe("still here");
    }
  });

  it("lets the CLI and an explicit control connection of @mcpd/client do what an agent cannot", async () => {
    const d = (daemon = await startTestDaemon({ fx: fixture("fx") }));
    const socketPath = d.socketPath;
    const plain = await connectMcpd({ socketPath, reconnect: false });
    mcpdClients.push(plain);
    const refused = await plain.disable("fx").then(
      () => undefined,
      (e: McpdError) => e,
    );
    expect([refused?.code, refused?.wireCode]).toEqual(["MCPD_FORBIDDEN", FORBIDDEN]);
    const operator = await connectMcpd({ socketPath, reconnect: false, control: true });
    mcpdClients.push(operator);
    expect(await operator.disable("fx")).toEqual({ server: "fx", state: "disabled" });
    // The operator asking is not listed: only `plain` is.
    expect((await operator.status()).clients.length).toBe(1);
    const enabled = await cli(d, ["enable", "fx"]);
    expect(enabled.code, enabled.stderr).toBe(0);
    await until(async () => (await plain.servers()).find((s) => s.name === "fx")?.state === "ready", "fx enabled again");
    const status = await cli(d, ["status", "--json"]);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout).servers[0].name).toBe("fx");
    const stopped = await cli(d, ["stop"]);
    expect(stopped.code, stopped.stderr).toBe(0);
    await until(() => d.proc.exitCode !== null, "daemon stopped by mcpd stop");
  });
});
