/**
 * list_changed, in memory: a server's list change reaches every connection that views the server (tagged
 * with it in the aggregate view) and no other, and the aggregate catalog follows; a reload's profile change
 * tells exactly the connections whose view changed.
 */
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import type { MemoryClient } from "./memory-client.js";
import { configText, memoryRouter, type MemoryRouter } from "./memory-router.js";

let r: MemoryRouter;
afterEach(() => r?.close());

const toolNames = async (c: MemoryClient): Promise<string[]> =>
  (await c.request("tools/list")).result.tools.map((t: { name: string }) => t.name);

describe("a server's list_changed", () => {
  it("reaches the aggregate view tagged with its server, and the new list is served at once", async () => {
    r = memoryRouter({ servers: { a: { tools: ["echo"] }, b: { tools: ["echo"] } } });
    const c = await r.connect();
    expect(await toolNames(c)).toEqual(["a__echo", "b__echo"]);
    r.upstream("a").setList("tools", ["echo", "fresh"]);
    const note = await c.waitFor((m) => m.method === "notifications/tools/list_changed", "tools/list_changed");
    expect(note.params).toEqual({ _meta: { "mcpd/server": "a" } });
    expect(await toolNames(c)).toEqual(["a__echo", "a__fresh", "b__echo"]);
    expect((await c.call("a__fresh")).result).toBeDefined();
  });

  it("reaches the server's own view untagged, and not another server's view", async () => {
    r = memoryRouter({ servers: { a: { prompts: ["p"] }, b: {} } });
    const [viewA, viewB] = [await r.connect({ select: { server: "a" } }), await r.connect({ select: { server: "b" } })];
    r.upstream("a").setList("prompts", ["p", "q"]);
    await Promise.all([viewA.marker(), viewB.marker()]);
    expect(viewA.notifications("notifications/prompts/list_changed").map((m) => m.params)).toEqual([{}]);
    expect(viewB.notifications()).toEqual([]);
  });

  it("does not reach a profile that leaves the server out, nor a connection not initialized yet", async () => {
    r = memoryRouter({ servers: { a: { tools: ["echo"] }, b: { tools: ["echo"] } }, mcpd: { profiles: { onlyB: { servers: ["b"] } } } });
    const onlyB = await r.connect({ select: { profile: "onlyB" } });
    const fresh = r.attach();
    r.upstream("a").setList("tools", ["other"]);
    await Promise.all([onlyB.marker(), fresh.marker()]);
    expect(onlyB.notifications()).toEqual([]);
    expect(fresh.notifications()).toEqual([]);
    r.upstream("b").setList("tools", ["other"]);
    await onlyB.waitFor((m) => m.method === "notifications/tools/list_changed", "b's tools/list_changed");
  });
});

describe("servers coming and going", () => {
  it("a server added by a reload is listed, and one removed is not", async () => {
    r = memoryRouter({ servers: { a: { tools: ["echo"] } } });
    const c = await r.connect();
    const next = parseConfig(configText({ servers: { a: {}, b: {} } }), "/memory/config.json", {});
    r.directory.add(next.servers[1] as (typeof next.servers)[number], { tools: ["new"] });
    expect(await toolNames(c)).toEqual(["a__echo", "b__new"]);
    r.directory.remove("a");
    expect(await toolNames(c)).toEqual(["b__new"]);
    expect((await c.call("a__echo")).error).toMatchObject({ code: -32602 });
  });

  it("a reload changing a profile sends list_changed to exactly the connections using it, for the kinds that changed", async () => {
    const spec = {
      servers: { a: { tools: ["echo", "add"], prompts: ["p"] } },
      mcpd: { profiles: { p1: { tools: { include: ["a__echo"] } }, p2: {} } },
    };
    r = memoryRouter(spec);
    const [p1, p2, all] = [
      await r.connect({ select: { profile: "p1" } }),
      await r.connect({ select: { profile: "p2" } }),
      await r.connect(),
    ];
    expect(await toolNames(p1)).toEqual(["a__echo"]);
    const before = r.router.filtersSnapshot();
    const next = parseConfig(
      configText({ ...spec, mcpd: { profiles: { p1: { tools: { include: ["a__*"] } }, p2: {} } } }),
      "/memory/config.json",
      {},
    );
    r.router.applyFilters(next.settings, before);
    await Promise.all([p1.marker(), p2.marker(), all.marker()]);
    expect(p1.notifications().map((m) => m.method)).toEqual(["notifications/tools/list_changed"]);
    expect([...p2.notifications(), ...all.notifications()]).toEqual([]);
    expect(await toolNames(p1)).toEqual(["a__echo", "a__add"]);
  });
});
