/**
 * Servers starting, crashing and failing, in memory: a crash fails the calls in flight to that server and
 * no other, state changes reach the connections that asked for them and change the aggregate view, a call
 * to a server still starting waits for it, and a failed server's tools are refused with its state.
 */
import { afterEach, describe, expect, it } from "vitest";
import { callText } from "./fake-answers.js";
import { memoryRouter, type MemoryRouter } from "./memory-router.js";

let r: MemoryRouter;
afterEach(() => r?.close());

const textOf = (m: { result?: { content?: Array<{ text?: string }> } }): string | undefined => m.result?.content?.[0]?.text;

describe("a server crashing mid-call", () => {
  it("fails its calls in flight (-32062 Transport closed); another server's call goes on", async () => {
    r = memoryRouter({ servers: { a: { tools: ["work"] }, b: { tools: ["work"] } } });
    const [a, b] = [r.upstream("a").hold("tools/call"), r.upstream("b").hold("tools/call")];
    const c = await r.connect();
    const [onA, onB] = [c.call("a__work", {}, 1), c.call("b__work", {}, 2)];
    a.crash("exit code 1");
    const failed = await onA;
    expect(failed.error).toMatchObject({ code: -32062, message: "Transport closed: exit code 1" });
    expect(b.pending.size).toBe(1);
    b.callsOf("tools/call")[0]?.answer({ content: [{ type: "text", text: "b's" }] });
    expect(textOf(await onB)).toBe("b's");
  });

  it("tells connections that asked for events, and the aggregate view loses and regains its tools", async () => {
    r = memoryRouter({ servers: { a: { tools: ["work"] } } });
    const a = r.upstream("a");
    const [events, plain] = [await r.connect({ select: { events: true } }), await r.connect()];
    a.crash("killed");
    await Promise.all([events.marker(), plain.marker()]);
    expect(events.notifications("notifications/mcpd/serverState").map((m) => m.params)).toEqual([
      { server: "a", state: "restarting", previous: "ready", reason: "session closed: killed" },
    ]);
    expect(plain.notifications("notifications/mcpd/serverState")).toEqual([]);
    for (const c of [events, plain]) expect(c.notifications("notifications/tools/list_changed")).toHaveLength(1);
    expect((await plain.request("tools/list")).result.tools).toEqual([]);
    a.setState("ready", "restarted");
    await plain.marker();
    expect(plain.notifications("notifications/tools/list_changed")).toHaveLength(2);
    expect(textOf(await plain.call("a__work"))).toBe(callText("a", "work"));
  });

  it("a call made while it restarts waits for it and is served once it is ready", async () => {
    r = memoryRouter({ servers: { a: { tools: ["work"], config: { timeout: 60_000 } } } });
    const a = r.upstream("a");
    const c = await r.connect({ select: { server: "a" } });
    a.crash();
    const answer = c.call("work", { after: "restart" });
    await c.marker();
    expect(c.answers(1)).toEqual([]);
    a.setState("ready", "restarted");
    expect(textOf(await answer)).toBe(callText("a", "work", { after: "restart" }));
  });
});

describe("servers that are not ready", () => {
  it("a failed server's tool is refused with its state (-32060), not as unknown", async () => {
    r = memoryRouter({ servers: { a: { tools: ["work"], cachedTools: ["work"] } } });
    const a = r.upstream("a");
    a.failsAtOnce = true;
    a.setState("failed", "start failed: command not found");
    const c = await r.connect();
    const answer = await c.call("a__work");
    expect(answer.error).toMatchObject({ code: -32060, data: { mcpdCode: "MCPD_SERVER_UNAVAILABLE" } });
    expect(answer.error.message).toContain('"a"');
  });

  it("tools/list in the aggregate view waits for a server starting without cached tools, then lists them", async () => {
    r = memoryRouter({ servers: { a: { tools: ["echo"] }, slow: { tools: ["late"], state: "starting" } } });
    const c = await r.connect();
    const listed = c.request("tools/list");
    await c.marker();
    expect(c.answers(1)).toEqual([]);
    r.upstream("slow").setState("ready", "started");
    expect((await listed).result.tools.map((t: { name: string }) => t.name)).toEqual(["a__echo", "slow__late"]);
  });

  it("a server starting with cached tools lists them at once", async () => {
    r = memoryRouter({ servers: { slow: { tools: ["late", "later"], cachedTools: ["late"], state: "starting" } } });
    const c = await r.connect();
    expect((await c.request("tools/list")).result.tools).toEqual([{ name: "slow__late" }]);
  });
});

describe("logging levels", () => {
  it("set the server to the most verbose level any viewer asked for, and filter messages per connection", async () => {
    r = memoryRouter({ servers: { a: {} } });
    const a = r.upstream("a");
    const [quiet, verbose] = [await r.connect(), await r.connect()];
    await quiet.request("logging/setLevel", { level: "error" });
    await verbose.request("logging/setLevel", { level: "debug" });
    expect(a.callsOf("logging/setLevel").map((x) => x.params)).toEqual([{ level: "error" }, { level: "debug" }]);
    a.sendNotification("notifications/message", { level: "info", data: "hello" });
    await Promise.all([quiet.marker(), verbose.marker()]);
    expect(verbose.notifications("notifications/message")).toHaveLength(1);
    expect(quiet.notifications("notifications/message")).toEqual([]);
    await verbose.disconnect();
    expect(a.callsOf("logging/setLevel").map((x) => x.params)).toEqual([{ level: "error" }, { level: "debug" }, { level: "error" }]);
  });
});
