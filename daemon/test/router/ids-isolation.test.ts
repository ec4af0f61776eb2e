/**
 * Request ids and isolation, in memory: each client's own ids mapped onto the upstream's and back (two
 * clients using the same ids at once), and nothing one client does (a duplicate id, a cancel, leaving)
 * touching another's requests.
 */
import { afterEach, describe, expect, it } from "vitest";
import { callText } from "./fake-answers.js";
import { memoryRouter, type MemoryRouter } from "./memory-router.js";

let r: MemoryRouter;
afterEach(() => r?.close());

const textOf = (m: { result?: { content?: Array<{ text?: string }> } }): string | undefined => m.result?.content?.[0]?.text;

describe("request ids", () => {
  it("two clients using the same ids at once each get their own answers, under their own ids", async () => {
    r = memoryRouter({ servers: { a: { tools: ["echo"] } } });
    const a = r.upstream("a").hold("tools/call");
    const [c1, c2] = [await r.connect(), await r.connect()];
    const p1 = c1.call("a__echo", { who: "c1" }, 7);
    const p2 = c2.call("a__echo", { who: "c2" }, 7);
    const [first, second] = a.callsOf("tools/call");
    // Two distinct upstream ids for the one downstream id 7.
    expect(first?.id).not.toBe(second?.id);
    // Answered in the other order: each answer still finds its own client.
    second?.answer({ content: [{ type: "text", text: "for c2" }] });
    first?.answer({ content: [{ type: "text", text: "for c1" }] });
    expect(textOf(await p1)).toBe("for c1");
    expect(textOf(await p2)).toBe("for c2");
    expect(c1.answers(7)).toHaveLength(1);
    expect(c2.answers(7)).toHaveLength(1);
  });

  it('keeps 1 and "1" apart: they are two ids', async () => {
    r = memoryRouter({ servers: { a: { tools: ["echo"] } } });
    const c = await r.connect();
    const [n, s] = await Promise.all([c.call("a__echo", { v: "number" }, 1), c.call("a__echo", { v: "string" }, "1")]);
    expect(textOf(n)).toBe(callText("a", "echo", { v: "number" }));
    expect(textOf(s)).toBe(callText("a", "echo", { v: "string" }));
  });

  it("refuses an id already in flight on the connection (-32600), and the first request still gets its answer", async () => {
    r = memoryRouter({ servers: { a: { tools: ["echo"] } } });
    const a = r.upstream("a").hold("tools/call");
    const c = await r.connect();
    c.sendCall("a__echo", "x");
    const refused = c.next((m) => m.id === "x", "the duplicate's refusal");
    const answered = c.next((m) => m.id === "x" && m.result !== undefined, "the first request's answer");
    c.send({ jsonrpc: "2.0", id: "x", method: "tools/call", params: { name: "a__echo", arguments: {} } });
    const refusal = await refused;
    expect(refusal.error).toMatchObject({ code: -32600 });
    expect(refusal.error.message).toContain("already in flight");
    expect(a.pending.size).toBe(1);
    a.callsOf("tools/call")[0]?.answer({ content: [] });
    expect((await answered).result).toEqual({ content: [] });
    expect(c.answers("x")).toHaveLength(2);
  });

  it("refuses a request over the connection's bound of requests in flight (-32063), and takes it again once one settles", async () => {
    r = memoryRouter({ servers: { a: { tools: ["echo"] } }, maxInFlightPerConnection: 2 });
    const a = r.upstream("a").hold("tools/call");
    const c = await r.connect();
    const held = [c.call("a__echo", {}, 1), c.call("a__echo", {}, 2)];
    expect((await c.call("a__echo", {}, 3)).error).toMatchObject({ code: -32063 });
    a.callsOf("tools/call")[0]?.answer({ content: [] });
    await held[0];
    a.on("tools/call", (call) => call.answer({ content: [] }));
    expect((await c.call("a__echo", {}, 4)).result).toEqual({ content: [] });
    a.callsOf("tools/call")[1]?.answer({ content: [] });
    await held[1];
  });
});

describe("isolation between clients", () => {
  it("one client's cancel of id 1 leaves another client's id 1 in flight, and answered", async () => {
    r = memoryRouter({ servers: { a: { tools: ["echo"] } } });
    const a = r.upstream("a").hold("tools/call");
    const [c1, c2] = [await r.connect(), await r.connect()];
    c1.sendCall("a__echo", 1);
    const other = c2.call("a__echo", {}, 1);
    c1.cancel(1);
    await c1.marker();
    expect(c1.answers(1)).toEqual([]);
    expect(a.pending.size).toBe(1);
    const [cancelled, live] = a.callsOf("tools/call");
    expect(cancelled?.cancelled).toBeDefined();
    expect(live?.cancelled).toBeUndefined();
    live?.answer({ content: [{ type: "text", text: "c2's" }] });
    expect(textOf(await other)).toBe("c2's");
  });

  it("a client that leaves has its requests cancelled upstream; another client's requests to the same server go on", async () => {
    r = memoryRouter({ servers: { a: { tools: ["echo"] } } });
    const a = r.upstream("a").hold("tools/call");
    const [c1, c2] = [await r.connect(), await r.connect()];
    c1.sendCall("a__echo", 1);
    c1.sendCall("a__echo", 2);
    const other = c2.call("a__echo", {}, 1);
    await c1.disconnect();
    expect(a.received.filter((m) => m.method === "notifications/cancelled")).toHaveLength(2);
    expect(a.pending.size).toBe(1);
    [...a.pending][0]?.answer({ content: [] });
    expect((await other).result).toEqual({ content: [] });
    expect(c1.afterClose).toBe(0);
  });

  it("a client's roots/list_changed reaches its own private session of a per-client server, and no shared or other one", async () => {
    r = memoryRouter({ servers: { p: { tools: ["work"], config: { sharing: "per-client" } }, s: { tools: ["work"] } } });
    const [c1, c2] = [await r.connect(), await r.connect()];
    await Promise.all([c1.call("p__work"), c2.call("p__work"), c1.call("s__work")]);
    c1.notify("notifications/roots/list_changed");
    await c1.marker();
    const roots = (name: string, id: string) => r.directory.privateOf(name, id)?.received.map((m) => m.method);
    expect(roots("p", c1.session.id)).toEqual(["notifications/roots/list_changed"]);
    expect(roots("p", c2.session.id)).toEqual([]);
    expect(r.upstream("p").received).toEqual([]);
    expect(r.upstream("s").received).toEqual([]);
  });

  it("a client's malformed message costs it an error answer, and the connection and others go on", async () => {
    r = memoryRouter({ servers: { a: { tools: ["echo"] } } });
    const [c1, c2] = [await r.connect(), await r.connect()];
    const refused = c1.next((m) => m.id === 5, "the refusal of a bad message");
    c1.send({ jsonrpc: "2.0", id: 5, method: 42 });
    const bad = await refused;
    expect(bad.error).toMatchObject({ code: -32600 });
    expect(textOf(await c1.call("a__echo", {}, 6))).toBe(callText("a", "echo"));
    expect(textOf(await c2.call("a__echo", {}, 5))).toBe(callText("a", "echo"));
  });
});
