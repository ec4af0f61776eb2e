import { afterEach, describe, expect, it } from "vitest";
import { SOCKET_PROTOCOL_VERSIONS } from "@mcpd/protocol";
import { join } from "node:path";
import { alive, fixture, readLog, startTestDaemon, until, type RawClient, type TestDaemon } from "./harness.js";

let daemon: TestDaemon | undefined;

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
});

async function session(d: TestDaemon, server?: string): Promise<RawClient> {
  const c = await d.raw();
  if (server)
    expect((await c.request("mcpd/select", { server })).result).toEqual({
      view: "server",
      server,
      protocolVersions: SOCKET_PROTOCOL_VERSIONS,
    });
  await c.initialize();
  return c;
}

const textOf = (m: any): string => m.result?.content?.[0]?.text;

/** A daemon whose fixture server logs what it receives to `<home>/<name>.log`. */
async function loggedDaemon(servers: Record<string, { args?: string[]; extra?: Record<string, unknown> }>) {
  const d = (daemon = await startTestDaemon({}));
  const cfg: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(servers))
    cfg[name] = fixture(name, [...(s.args ?? []), "--log", join(d.home, `${name}.log`)], s.extra ?? {});
  d.writeConfig(cfg);
  const ctl = await d.control();
  await ctl.request("mcpd/reload");
  const log = (name: string) => readLog(join(d.home, `${name}.log`));
  return { d, ctl, log };
}

describe("daemon: per-connection session state", () => {
  it("regression: refuses an MCP request before initialize (-32600 Not initialized, as documented), serves ping and mcpd/* then, and everything after it", async () => {
    const { d } = await loggedDaemon({ a: {} });
    const c = await d.raw();
    const early = await c.request("tools/list");
    expect(early.error).toMatchObject({ code: -32600, data: { mcpdCode: "MCPD_PROTOCOL_VIOLATION" } });
    expect(early.error.message).toMatch(/^Not initialized: send initialize/);
    const routed = await c.request("tools/call", { name: "echo", arguments: { text: "x" }, _meta: { "mcpd/server": "a" } });
    expect(routed.error?.message).toMatch(/^Not initialized/);
    expect((await c.request("ping")).result).toEqual({});
    expect((await c.request("mcpd/servers")).result.servers.map((s: { name: string }) => s.name)).toEqual(["a"]);
    await c.initialize();
    expect(textOf(await c.request("tools/call", { name: "a__echo", arguments: { text: "after" } }))).toBe("after");
    c.close();
  });

  it("keeps logging levels per connection and sets the upstream to the most verbose one", async () => {
    const { d, log } = await loggedDaemon({ a: {} });
    const quiet = await session(d, "a");
    const chatty = await session(d, "a");
    expect((await quiet.request("logging/setLevel", { level: "error" })).result).toEqual({});
    expect((await chatty.request("logging/setLevel", { level: "debug" })).result).toEqual({});
    await until(() => log("a").some((m) => m.method === "logging/setLevel" && m.params.level === "debug"), "upstream set to debug");
    await quiet.request("tools/call", { name: "log", arguments: { level: "info", message: "for chatty" } });
    await quiet.request("tools/call", { name: "log", arguments: { level: "error", message: "for both" } });
    await chatty.waitFor((m) => m.method === "notifications/message" && m.params.data === "for both", "error log to chatty");
    await quiet.waitFor((m) => m.method === "notifications/message" && m.params.data === "for both", "error log to quiet");
    expect(chatty.messages.some((m) => m.method === "notifications/message" && m.params.data === "for chatty")).toBe(true);
    expect(quiet.messages.some((m) => m.method === "notifications/message" && m.params.data === "for chatty")).toBe(false);
  });

  it("never forwards notifications/initialized again, and relays list_changed to every view of the server", async () => {
    const { d, log } = await loggedDaemon({ a: {} });
    const t1 = await session(d, "a");
    const t2 = await session(d, "a");
    const agg = await session(d);
    expect(log("a").filter((m) => m.method === "notifications/initialized")).toHaveLength(1);
    await t1.request("tools/call", { name: "change_tools", arguments: {} });
    for (const c of [t1, t2]) await c.waitFor((m) => m.method === "notifications/tools/list_changed", "list_changed (transparent)");
    await agg.waitFor(
      (m) => m.method === "notifications/tools/list_changed" && m.params?._meta?.["mcpd/server"] === "a",
      "list_changed (aggregate)",
    );
    const tools = (await agg.request("tools/list")).result.tools.map((t: any) => t.name);
    expect(tools).toContain("a__added_1");
  });

  it("gives each connection its own session of a per-client server and ends it when the client leaves", async () => {
    const { d } = await loggedDaemon({ p: { extra: { sharing: "per-client" } } });
    const one = await session(d, "p");
    const two = await session(d, "p");
    const pid1 = Number(textOf(await one.request("tools/call", { name: "pid", arguments: {} })));
    const pid2 = Number(textOf(await two.request("tools/call", { name: "pid", arguments: {} })));
    expect(pid1).not.toBe(pid2);
    expect(Number(textOf(await one.request("tools/call", { name: "pid", arguments: {} })))).toBe(pid1);
    // What one private session says reaches only its owner.
    await one.request("tools/call", { name: "log", arguments: { level: "error", message: "private to one" } });
    await one.waitFor((m) => m.method === "notifications/message" && m.params.data === "private to one", "owner gets its log");
    await two.request("tools/call", { name: "log", arguments: { level: "error", message: "private to two" } });
    await two.waitFor((m) => m.method === "notifications/message" && m.params.data === "private to two", "two gets its log");
    expect(two.messages.some((m) => m.params?.data === "private to one")).toBe(false);
    expect(one.messages.some((m) => m.params?.data === "private to two")).toBe(false);
    one.close();
    await until(() => !alive(pid1), "private session ended with its client");
    expect(alive(pid2)).toBe(true);
  });

  it("fails calls to a disabled server at once with its state, and serves again once enabled", async () => {
    const { d, ctl } = await loggedDaemon({ a: {}, b: {} });
    const c = await session(d);
    await until(async () => (await c.request("mcpd/servers")).result.servers.every((s: any) => s.state === "ready"), "ready");
    expect((await ctl.request("mcpd/disable", { server: "a" })).result).toEqual({ server: "a", state: "disabled" });
    const r = await c.request("tools/call", { name: "echo", arguments: { text: "x" }, _meta: { "mcpd/server": "a" } });
    expect(r.error.code).toBe(-32060);
    expect(r.error.message).toContain("disabled");
    expect(textOf(await c.request("tools/call", { name: "b__echo", arguments: { text: "b ok" } }))).toBe("b ok");
    await ctl.request("mcpd/enable", { server: "a" });
    const back = await c.request("tools/call", { name: "echo", arguments: { text: "a ok" }, _meta: { "mcpd/server": "a" } });
    expect(textOf(back)).toBe("a ok");
  });

  it("holds a request to a server that is still starting until it is ready", async () => {
    const d = (daemon = await startTestDaemon({ late: fixture("late", ["--init-delay", "1500"]) }));
    const c = await d.raw();
    await c.request("mcpd/select", { server: "late" });
    c.send({
      jsonrpc: "2.0",
      id: "init",
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "x", version: "1" } },
    });
    const status = (await c.request("mcpd/status")).result;
    expect(status.servers[0].state).toBe("starting");
    const init = await c.waitFor((m) => m.id === "init", "initialize answer");
    expect(init.result.serverInfo.name).toBe("late");
    expect(textOf(await c.request("tools/call", { name: "echo", arguments: { text: "waited" } }))).toBe("waited");
  });

  it("lists a server's tools for mcpd/tools even when asked while it is still starting", async () => {
    const d = (daemon = await startTestDaemon({ late: fixture("late", ["--init-delay", "1500"]) }));
    const c = await d.raw();
    const tools = (await c.request("mcpd/tools")).result.tools.map((t: any) => t.exposedName);
    expect(tools).toContain("late__echo");
  });

  it("restarts a server that stops answering health pings", async () => {
    const d = (daemon = await startTestDaemon({ h: fixture("h", [], { healthCheckIntervalMs: 200, restart: { initialDelayMs: 50 } }) }));
    const c = await session(d, "h");
    const pid = Number(textOf(await c.request("tools/call", { name: "pid", arguments: {} })));
    process.kill(pid, "SIGSTOP"); // alive but silent
    try {
      const s = await until(
        async () => {
          const st = (await c.request("mcpd/status")).result.servers[0];
          return st.state === "ready" && st.pid !== pid ? st : undefined;
        },
        "restart after missed pings",
        30_000,
      );
      expect(s.restarts).toBeGreaterThanOrEqual(1);
      expect(s.stateReason).toBeDefined();
    } finally {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        /* already ended by the restart */
      }
    }
    expect(textOf(await c.request("tools/call", { name: "echo", arguments: { text: "healthy" } }))).toBe("healthy");
  });

  it("times out upstream calls daemon-side, resets the clock on progress, and caps the total", async () => {
    const { d, log } = await loggedDaemon({ t: { extra: { timeout: 1500, maxTotalTimeout: 5000 } } });
    const c = await session(d, "t");
    const slow = await c.request("tools/call", { name: "slow", arguments: { ms: 5000 } });
    expect(slow.error.code).toBe(-32061);
    expect(slow.error.message).toBe("Request timeout after 1500ms");
    const slowId = log("t").find((m) => m.method === "tools/call" && m.params.name === "slow").id;
    await until(
      () => log("t").some((m) => m.method === "notifications/cancelled" && m.params.requestId === slowId),
      "cancel sent upstream",
    );
    // 5 progress steps 500 ms apart: longer in all than the 1500 ms timeout, but each gap is far under it.
    const kept = await c.request("tools/call", { name: "progress", arguments: { steps: 5, intervalMs: 500 }, _meta: { progressToken: 7 } });
    expect(kept.result.content[0].text).toBe("done");
    expect(c.messages.filter((m) => m.method === "notifications/progress" && m.params.progressToken === 7).length).toBe(5);
    // Progress keeps coming, but the total passes maxTotalTimeout.
    const capped = await c.request("tools/call", {
      name: "progress",
      arguments: { steps: 14, intervalMs: 500 },
      _meta: { progressToken: 8 },
    });
    expect(capped.error.code).toBe(-32061);
  });
});
