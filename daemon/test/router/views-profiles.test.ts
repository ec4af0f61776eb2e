/**
 * Views and profiles, in memory: a profile's client sees only its servers and the tools its globs
 * select, and is refused the rest (-32075) without ever hearing of a server outside it; a server's own
 * filter hides from every view. The real-process counterparts are in tests/e2e/profiles.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Message } from "./memory-client.js";
import { memoryRouter, type MemoryRouter } from "./memory-router.js";

let r: MemoryRouter;
afterEach(() => r?.close());

const PROFILES = {
  coding: { servers: ["a"], tools: { include: ["a__*"], exclude: ["a__rm"] } },
  echoes: { tools: { include: ["*__echo"] } },
};

function router(): MemoryRouter {
  return memoryRouter({
    servers: {
      a: { tools: ["echo", "add", "rm"], prompts: ["greet"], resources: ["file:///a", "file:///shared"] },
      secret: { tools: ["echo", "leak"], prompts: ["gree"], resources: ["file:///shared", "file:///secret"] },
    },
    mcpd: { profiles: PROFILES },
  });
}

const names = (m: Message, key: string): Array<string | undefined> =>
  ((m.result?.[key] ?? []) as Array<{ name?: string; uri?: string }>).map((x) => x.name ?? x.uri);

/** Whether an error answer names the server the profile does not show. */
const leaks = (m: object): boolean => /secret/.test(JSON.stringify(m));

describe("a profile", () => {
  it("lists only its servers' tools that its globs select", async () => {
    r = router();
    const c = await r.connect({ select: { profile: "coding" } });
    expect(names(await c.request("tools/list"), "tools")).toEqual(["a__echo", "a__add"]);
    const echoes = await r.connect({ select: { profile: "echoes" } });
    expect(names(await echoes.request("tools/list"), "tools")).toEqual(["a__echo", "secret__echo"]);
  });

  it("refuses a tool it hides (-32075, naming the profile), and its server is never asked", async () => {
    r = router();
    const c = await r.connect({ select: { profile: "coding" } });
    const answer = await c.call("a__rm");
    expect(answer.error).toMatchObject({ code: -32075, data: { mcpdCode: "MCPD_HIDDEN", profile: "coding" } });
    expect(r.upstream("a").callsOf("tools/call")).toEqual([]);
  });

  it("never names a server outside it: not in a refusal, a suggestion, or a resource it shares", async () => {
    r = router();
    const c = await r.connect({ select: { profile: "coding" } });
    // Unprofiled, `a__leak` would suggest secret__leak (the right tool on another server).
    const unknown = await c.call("a__leak");
    expect(unknown.error).toMatchObject({ code: -32602, data: { mcpdCode: "MCPD_UNKNOWN_TOOL" } });
    expect(leaks(unknown)).toBe(false);
    const prompt = await c.request("prompts/get", { name: "a__gree" });
    expect(prompt.error.message).toContain("a__greet");
    expect(leaks(prompt)).toBe(false);
    // Another server lists it too, but this view shows one copy: read from a, in a's own form.
    const read = await c.request("resources/read", { uri: "file:///shared" });
    expect(read.result.contents[0].text).toBe("a:file:///shared");
    const listed = await c.request("resources/list");
    expect(names(listed, "resources")).toEqual(["file:///a", "file:///shared"]);
    const notThere = await c.request("resources/read", { uri: "file:///secre" });
    expect(notThere.error).toMatchObject({ data: { mcpdCode: "MCPD_UNKNOWN_RESOURCE" } });
    expect(leaks(notThere)).toBe(false);
    expect(r.upstream("secret").calls).toEqual([]);
    // The same questions without the profile do name it: the checks above can see a leak.
    const all = await r.connect();
    expect((await all.call("a__leak")).error.message).toContain("secret__leak");
    expect((await all.request("resources/read", { uri: "file:///shared" })).error.message).toContain("mcpd://secret/");
  });

  it("refuses a call routed to a server outside it, and a select of that server's view", async () => {
    r = router();
    const routed = await r.connect({ select: { profile: "coding" } });
    const answer = await routed.call("leak", {}, undefined, { "mcpd/server": "secret" });
    expect(answer.error).toMatchObject({ code: -32075, data: { profile: "coding" } });
    expect(r.upstream("secret").calls).toEqual([]);
    const c = r.attach();
    const select = await c.request("mcpd/select", { profile: "coding", server: "secret" });
    expect(select.error).toMatchObject({ code: -32602 });
    expect(select.error.message).toContain('does not include server "secret"');
  });

  it("cannot be undone by a second select before initialize", async () => {
    r = router();
    const c = r.attach();
    await c.request("mcpd/select", { profile: "coding" });
    expect((await c.request("mcpd/select", {})).error).toMatchObject({ code: -32600 });
  });

  it("one-off tool globs narrow the aggregate view alone", async () => {
    r = router();
    const c = await r.connect({ select: { tools: ["*__add"] } });
    expect(names(await c.request("tools/list"), "tools")).toEqual(["a__add"]);
    expect((await c.call("a__echo")).error).toMatchObject({ code: -32075 });
  });
});

describe("a server's own filter", () => {
  it("hides its tools from the aggregate and the transparent view, refused as hidden", async () => {
    r = memoryRouter({ servers: { a: { tools: ["echo", "rm"], config: { tools: { exclude: ["rm"] } } } } });
    const all = await r.connect();
    expect(names(await all.request("tools/list"), "tools")).toEqual(["a__echo"]);
    expect((await all.call("a__rm")).error).toMatchObject({ code: -32075, data: { by: "server" } });
    const own = await r.connect({ select: { server: "a" } });
    expect(names(await own.request("tools/list"), "tools")).toEqual(["echo"]);
    expect((await own.call("rm")).error).toMatchObject({ code: -32075 });
    expect(r.upstream("a").callsOf("tools/call")).toEqual([]);
  });
});

describe("a view its face chose (an HTTP endpoint's: Session.chooseView)", () => {
  it("serves that view and refuses any mcpd/select after it, the client's own first message included", async () => {
    r = router();
    const c = r.attach();
    expect(c.session.chooseView({ server: "a" })).toBeUndefined();
    const select = await c.request("mcpd/select", { server: "secret" });
    expect(select.error?.code).toBe(-32600);
    expect(select.error?.message).toMatch(/its endpoint serves and cannot be changed/);
    const init = await c.request("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "h", version: "1" },
    });
    expect(init.error).toBeUndefined();
    expect(names(await c.request("tools/list"), "tools")).toEqual(["echo", "add", "rm"]);
  });

  it("takes a profile, and answers an unknown server or profile with the error naming what is configured, changing nothing", async () => {
    r = router();
    const p = r.attach();
    expect(p.session.chooseView({ profile: "coding" })).toBeUndefined();
    await p.request("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "h", version: "1" } });
    expect(names(await p.request("tools/list"), "tools")).toEqual(["a__echo", "a__add"]);
    const u = r.attach();
    expect(u.session.chooseView({ server: "nope" })?.message).toMatch(/Unknown server "nope"; configured: a, secret/);
    expect(u.session.chooseView({ profile: "nope" })?.data).toMatchObject({ mcpdCode: "MCPD_UNKNOWN_PROFILE" });
    expect(u.session.view).toEqual({ kind: "aggregate" });
    expect(u.session.viewChosenByFace).toBe(false);
  });
});
