/**
 * What a call to a tool that cannot be served answers. In the aggregate view: a tool of a disabled or
 * failed server gets -32060 with the server's state and reason (who disabled it, how to enable it), an
 * unknown name gets -32602 with at most a few close matches. In a server's transparent view (and with
 * per-request routing) mcpd does not judge tool names: the server's own answer comes back.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { EVERYTHING, MCPD_BIN, fixture, startTestDaemon, until, type RawClient, type TestDaemon } from "./harness.js";

let daemon: TestDaemon | undefined;
const sdkClients: Client[] = [];

afterEach(async () => {
  for (const c of sdkClients.splice(0)) await c.close().catch(() => {});
  await daemon?.stop();
  daemon = undefined;
});

async function agent(d: TestDaemon, server?: string): Promise<RawClient> {
  const c = await d.raw();
  if (server !== undefined) await c.request("mcpd/select", { server });
  await c.initialize();
  return c;
}

const stateOf = async (c: RawClient, name: string): Promise<string> =>
  (await c.request("mcpd/servers")).result.servers.find((s: any) => s.name === name)?.state;

/** Exposed tool names an unknown-tool error suggests (after the quoted unknown name). */
const namesIn = (message: string, server: string): string[] =>
  message.slice(message.indexOf(";")).match(new RegExp(`${server}__[A-Za-z0-9_-]+`, "g")) ?? [];

describe("tool errors in the aggregate view", () => {
  it("a tool of a disabled server answers -32060 with its state and who disabled it (bug: -32602 Unknown tool followed by every name)", async () => {
    const d = (daemon = await startTestDaemon({ fx: fixture("fx"), off: fixture("off", [], { enabled: false }), other: fixture("other") }));
    const a = await agent(d);
    await until(async () => (await stateOf(a, "fx")) === "ready" && (await stateOf(a, "other")) === "ready", "fx and other ready");
    const ctl = await d.control();
    expect((await ctl.request("mcpd/disable", { server: "fx" })).result).toEqual({ server: "fx", state: "disabled" });

    const r = await a.request("tools/call", { name: "fx__echo", arguments: { text: "x" } });
    expect(r.error?.code, JSON.stringify(r)).toBe(-32060);
    expect(r.error.data).toMatchObject({ mcpdCode: "MCPD_SERVER_UNAVAILABLE", server: "fx", state: "disabled" });
    expect(r.error.message).toMatch(/^Server "fx" is disabled: disabled by mcpd disable at \d{4}-\d\d-\d\dT[\d:.]+Z; run `mcpd enable fx`/);
    // Even a name the server never had: the server is what is missing, not the tool.
    const never = await a.request("tools/call", { name: "fx__no_such_tool", arguments: {} });
    expect(never.error?.code).toBe(-32060);

    // Disabled in the config file: the reason says so, and how to turn it on.
    const off = await a.request("tools/call", { name: "off__echo", arguments: { text: "x" } });
    expect(off.error?.code, JSON.stringify(off)).toBe(-32060);
    expect(off.error.data).toMatchObject({ server: "off", state: "disabled" });
    expect(off.error.message).toContain('"enabled": false');
    expect(off.error.message).toContain("mcpd enable off");

    // The same reason in mcpd status.
    const servers = (await ctl.request("mcpd/status")).result.servers;
    expect(servers.find((s: any) => s.name === "fx").stateReason).toMatch(/disabled by mcpd disable at .*; run `mcpd enable fx`/);
    expect(servers.find((s: any) => s.name === "off").stateReason).toContain('"enabled": false');
    // Other servers are served as before.
    expect((await a.request("tools/call", { name: "other__echo", arguments: { text: "fine" } })).result.content[0].text).toBe("fine");
  });

  it("regression: a tool of a server in a crash loop answers -32060 with its state, exit code and next retry, in both views (bug: -32602 Unknown tool, no close name)", async () => {
    // Restarts far apart: the server is `restarting` (its start failed) for the whole test.
    const policy = { restart: { maxRestarts: 5, initialDelayMs: 30_000, maxDelayMs: 60_000 } };
    const d = (daemon = await startTestDaemon({
      dies: fixture("dies", ["--exit-at-start", "7"], policy),
      ok: fixture("ok"),
      off: fixture("off", [], { enabled: false }),
    }));
    const a = await agent(d);
    await until(
      async () => (await stateOf(a, "dies")) === "restarting" && (await stateOf(a, "ok")) === "ready",
      "dies restarting, ok ready",
    );
    const expectCrashLoop = (r: any): void => {
      expect(r.error?.code, JSON.stringify(r)).toBe(-32060);
      expect(r.error.data).toMatchObject({ mcpdCode: "MCPD_SERVER_UNAVAILABLE", server: "dies", state: "restarting" });
      expect(r.error.message).toMatch(/^Server "dies" is restarting: start failed: .*code 7/);
      expect(r.error.message).toMatch(/next retry in \d+ ms \(at \d{4}-\d\d-\d\dT[\d:.]+Z\)/);
    };
    // Aggregate view: the server's prefix names it, whatever the tool (its tools were never listed).
    expectCrashLoop(await a.request("tools/call", { name: "dies__x", arguments: {} }));
    expectCrashLoop(await a.request("prompts/get", { name: "dies__greet", arguments: {} }));
    // Its transparent view: the same words.
    const t = await d.raw();
    await t.request("mcpd/select", { server: "dies" });
    expectCrashLoop(await t.initialize());
    expectCrashLoop(await t.request("tools/call", { name: "x", arguments: {} }));
    // A disabled server says so in both views.
    const off = await a.request("tools/call", { name: "off__x", arguments: {} });
    expect(off.error?.code, JSON.stringify(off)).toBe(-32060);
    expect(off.error.message).toMatch(/^Server "off" is disabled: /);
    const o = await d.raw();
    await o.request("mcpd/select", { server: "off" });
    await o.initialize();
    expect((await o.request("tools/call", { name: "x", arguments: {} })).error.message).toMatch(/^Server "off" is disabled: /);
    // A name with no configured server's prefix is still unknown.
    const unknown = await a.request("tools/call", { name: "nosuch__x", arguments: {} });
    expect(unknown.error?.data?.mcpdCode).toBe("MCPD_UNKNOWN_TOOL");
  });

  it("a tool of a failed server answers -32060 with the failure's reason", async () => {
    const d = (daemon = await startTestDaemon({
      bad: fixture("bad", ["--exit-at-start", "7"], { restart: { maxRestarts: 0 } }),
      ok: fixture("ok"),
    }));
    const a = await agent(d);
    await until(async () => (await stateOf(a, "bad")) === "failed", "bad failed");
    const r = await a.request("tools/call", { name: "bad__echo", arguments: { text: "x" } });
    expect(r.error?.code, JSON.stringify(r)).toBe(-32060);
    expect(r.error.data).toMatchObject({ mcpdCode: "MCPD_SERVER_UNAVAILABLE", server: "bad", state: "failed" });
    expect(r.error.message).toMatch(/^Server "bad" is failed: .*code 7/);
  });

  it("an unknown tool names at most five close matches, never every tool (bug: 75 names in the message)", async () => {
    const extra = Array.from({ length: 60 }, (_, i) => ["--tool", `extra_${String(i).padStart(2, "0")}`]).flat();
    const d = (daemon = await startTestDaemon({ fx: fixture("fx", extra), gx: fixture("gx") }));
    const a = await agent(d);
    const all = await until(async () => {
      const tools = (await a.request("tools/list")).result.tools;
      return tools.length >= 100 ? tools : undefined;
    }, "both servers' tools listed");
    expect(all.length).toBeGreaterThan(100);

    const typo = await a.request("tools/call", { name: "fx__ecoh", arguments: {} });
    expect(typo.error?.code).toBe(-32602);
    expect(typo.error.data?.mcpdCode).toBe("MCPD_UNKNOWN_TOOL");
    expect(typo.error.message).toMatch(/^Unknown tool "fx__ecoh"/);
    expect(namesIn(typo.error.message, "fx")[0]).toBe("fx__echo");
    expect(namesIn(typo.error.message, "fx").length + namesIn(typo.error.message, "gx").length).toBeLessThanOrEqual(5);

    // The server's own name without the prefix finds the exposed names that end with it.
    const bare = await a.request("tools/call", { name: "add", arguments: {} });
    expect(bare.error?.code).toBe(-32602);
    expect(bare.error.message).toContain("fx__add");
    expect(bare.error.message).toContain("gx__add");

    const far = await a.request("tools/call", { name: "zzzzzzzzzzzzzzzzzzzz", arguments: {} });
    expect(far.error?.code).toBe(-32602);
    expect(namesIn(far.error.message, "fx")).toEqual([]);
    expect(far.error.message).toContain("tools/list");
    expect(far.error.message.length).toBeLessThan(300);
  });
});

describe("tool calls in the transparent view", () => {
  it("passes a call to a tool the server does not list through to the server and returns its own answer (bug: mcpd answered Unknown tool itself)", async () => {
    const d = (daemon = await startTestDaemon({ fx: fixture("fx") }));
    const t = await agent(d, "fx");
    const r = await t.request("tools/call", { name: "nope", arguments: {} });
    // The fixture's own words, with nothing of mcpd's added.
    expect(r.error).toEqual({ code: -32602, message: 'Invalid params: unknown tool "nope"' });
    // Per-request routing is the transparent view of one request: the same.
    const a = await agent(d);
    const routed = await a.request("tools/call", { name: "nope", arguments: {}, _meta: { "mcpd/server": "fx" } });
    expect(routed.error).toEqual({ code: -32602, message: 'Invalid params: unknown tool "nope"' });
  });

  it("gives the official SDK Client behind `mcpd connect everything` server-everything's own answer for an unknown tool", async () => {
    const d = (daemon = await startTestDaemon({ everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } }));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MCPD_BIN, "connect", "everything", "--no-autostart"],
      env: { ...(process.env as Record<string, string>), MCPD_HOME: d.home, MCPD_CONFIG: d.configFile },
      stderr: "pipe",
    });
    const client = new Client({ name: "e2e", version: "1.0.0" });
    sdkClients.push(client);
    await client.connect(transport);
    // server-everything (the SDK's McpServer) answers an unknown tool with an error result, not a JSON-RPC error.
    const r = await client.callTool({ name: "nope", arguments: {} });
    expect(r.isError).toBe(true);
    expect(JSON.stringify(r.content)).toContain("Tool nope not found");
  });
});
