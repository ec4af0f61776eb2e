/**
 * Progress and cancellation, in memory: a request's progress token rewritten to a daemon-unique one
 * upstream and its progress routed back under the client's own token (to that client alone); progress
 * the server was not given dropped; a client's cancel, its leaving and the daemon's deadline reaching
 * the server as `notifications/cancelled` with the upstream id.
 */
import { afterEach, describe, expect, it } from "vitest";
import { memoryRouter, type MemoryRouter } from "./memory-router.js";

let r: MemoryRouter;
afterEach(() => r?.close());

const cancelledIds = (received: Array<{ method: string; params: unknown }>): unknown[] =>
  received.filter((m) => m.method === "notifications/cancelled").map((m) => (m.params as { requestId: unknown }).requestId);

describe("progress", () => {
  it("rewrites the token upstream and routes progress back under the client's own token", async () => {
    r = memoryRouter({ servers: { a: { tools: ["work"] } } });
    const a = r.upstream("a").hold("tools/call");
    const c = await r.connect();
    const answer = c.call("a__work", {}, 1, { progressToken: "mine" });
    const call = a.callsOf("tools/call")[0];
    expect(call?.progressToken).toMatch(/^mcpd-p\d+$/);
    call?.progress(1, 2);
    const note = await c.waitFor((m) => m.method === "notifications/progress", "progress");
    expect(note.params).toEqual({ progressToken: "mine", progress: 1, total: 2 });
    call?.answer({ content: [] });
    await answer;
  });

  it("two clients using the same token each get only their own request's progress", async () => {
    r = memoryRouter({ servers: { a: { tools: ["work"] } } });
    const a = r.upstream("a").hold("tools/call");
    const [c1, c2] = [await r.connect(), await r.connect()];
    const answers = [c1.call("a__work", {}, 1, { progressToken: 0 }), c2.call("a__work", {}, 1, { progressToken: 0 })];
    const [first, second] = a.callsOf("tools/call");
    expect(first?.progressToken).not.toBe(second?.progressToken);
    second?.progress(20);
    first?.progress(10);
    await Promise.all([c1.marker(), c2.marker()]);
    expect(c1.notifications("notifications/progress").map((m) => m.params)).toEqual([{ progressToken: 0, progress: 10 }]);
    expect(c2.notifications("notifications/progress").map((m) => m.params)).toEqual([{ progressToken: 0, progress: 20 }]);
    first?.answer({ content: [] });
    second?.answer({ content: [] });
    await Promise.all(answers);
  });

  it("drops progress for a token never issued, one issued to another server, and one whose request ended", async () => {
    r = memoryRouter({ servers: { a: { tools: ["work"] }, b: {} } });
    const a = r.upstream("a").hold("tools/call");
    const c = await r.connect();
    const answer = c.call("a__work", {}, 1, { progressToken: "t" });
    const call = a.callsOf("tools/call")[0];
    const token = call?.progressToken as string;
    a.sendNotification("notifications/progress", { progressToken: "mcpd-p999", progress: 1 });
    a.sendNotification("notifications/progress", { progressToken: "t", progress: 1 });
    // Another server spoofing the token a's call was given: never reaches the caller, never extends a's call.
    r.upstream("b").sendNotification("notifications/progress", { progressToken: token, progress: 1 });
    call?.answer({ content: [] });
    await answer;
    a.sendNotification("notifications/progress", { progressToken: token, progress: 2 });
    await c.marker();
    expect(c.notifications("notifications/progress")).toEqual([]);
    expect(r.router.tables().progressDropped).toBe(4);
    expect(r.router.tables().progress).toBe(0);
  });

  it("a request without a token goes upstream unchanged", async () => {
    r = memoryRouter({ servers: { a: { tools: ["work"] } } });
    const c = await r.connect();
    await c.call("a__work", { x: 1 });
    expect(r.upstream("a").callsOf("tools/call")[0]?.params).toEqual({ name: "work", arguments: { x: 1 } });
  });
});

describe("cancellation", () => {
  it("a client's cancel sends the server notifications/cancelled with the upstream id, and the client gets no answer", async () => {
    r = memoryRouter({ servers: { a: { tools: ["work"] } } });
    const a = r.upstream("a").hold("tools/call");
    const c = await r.connect();
    const first = c.call("a__work", {}, "first");
    c.sendCall("a__work", "doomed");
    const call = a.callsOf("tools/call")[1];
    c.cancel("doomed", "changed my mind");
    await c.marker();
    expect(cancelledIds(a.received)).toEqual([call?.id]);
    expect(c.answers("doomed")).toEqual([]);
    expect(r.router.tables().inFlight).toBe(1);
    a.callsOf("tools/call")[0]?.answer({ content: [] });
    expect((await first).result).toEqual({ content: [] });
  });

  it("a cancel of an id not in flight (unknown, or answered already) is ignored", async () => {
    r = memoryRouter({ servers: { a: { tools: ["work"] } } });
    const c = await r.connect();
    await c.call("a__work", {}, 1);
    c.cancel(1);
    c.cancel("never-sent");
    await c.marker();
    expect(cancelledIds(r.upstream("a").received)).toEqual([]);
    expect(c.answers(1)).toHaveLength(1);
  });

  it("a client's leaving cancels each of its requests upstream by its upstream id", async () => {
    r = memoryRouter({ servers: { a: { tools: ["work"] }, b: { tools: ["work"] } } });
    const [a, b] = [r.upstream("a").hold("tools/call"), r.upstream("b").hold("tools/call")];
    const c = await r.connect();
    c.sendCall("a__work", 1);
    c.sendCall("b__work", 2);
    await c.disconnect();
    expect(cancelledIds(a.received)).toEqual([a.calls[0]?.id]);
    expect(cancelledIds(b.received)).toEqual([b.calls[0]?.id]);
  });

  it("the daemon's deadline (the server's timeout) gives the call up upstream and answers the client -32061", async () => {
    r = memoryRouter({ servers: { a: { tools: ["work"], config: { timeout: 20 } } } });
    const a = r.upstream("a").hold("tools/call");
    const c = await r.connect();
    const answer = await c.call("a__work");
    expect(answer.error).toMatchObject({ code: -32061, message: "Request timeout after 20ms" });
    expect(cancelledIds(a.received)).toEqual([a.calls[0]?.id]);
  });
});
