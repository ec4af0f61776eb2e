/**
 * Resource subscriptions, in memory: fan-in (one upstream subscription however many clients subscribe,
 * ended with the last) and fan-out (an update to every subscriber, in the form each subscribed with, and
 * to no one else), restored when the server comes back.
 */
import { afterEach, describe, expect, it } from "vitest";
import { memoryRouter, type MemoryRouter } from "./memory-router.js";

let r: MemoryRouter;
afterEach(() => r?.close());

const URI = "file:///notes";

describe("resource subscriptions", () => {
  it("subscribe the server once for every client, and unsubscribe it with the last", async () => {
    r = memoryRouter({ servers: { a: { resources: [URI] } } });
    const a = r.upstream("a");
    const [c1, c2] = [await r.connect(), await r.connect()];
    expect((await c1.request("resources/subscribe", { uri: URI })).result).toEqual({});
    expect((await c2.request("resources/subscribe", { uri: URI })).result).toEqual({});
    expect(a.callsOf("resources/subscribe").map((c) => c.params)).toEqual([{ uri: URI }]);
    await c1.request("resources/unsubscribe", { uri: URI });
    expect(a.callsOf("resources/unsubscribe")).toEqual([]);
    await c2.request("resources/unsubscribe", { uri: URI });
    expect(a.callsOf("resources/unsubscribe").map((c) => c.params)).toEqual([{ uri: URI }]);
    expect(r.router.tables().subscriptions).toBe(0);
  });

  it("send an update to every subscriber and to no other client", async () => {
    r = memoryRouter({ servers: { a: { resources: [URI, "file:///other"] } } });
    const [c1, c2, idle] = [await r.connect(), await r.connect(), await r.connect()];
    await c1.request("resources/subscribe", { uri: URI });
    await c2.request("resources/subscribe", { uri: URI });
    await idle.request("resources/subscribe", { uri: "file:///other" });
    r.upstream("a").sendNotification("notifications/resources/updated", { uri: URI });
    await Promise.all([c1.marker(), c2.marker(), idle.marker()]);
    for (const c of [c1, c2])
      expect(c.notifications("notifications/resources/updated").map((m) => m.params)).toEqual([
        { uri: URI, _meta: { "mcpd/server": "a" } },
      ]);
    expect(idle.notifications("notifications/resources/updated")).toEqual([]);
  });

  it("a subscription by a namespaced URI subscribes that server alone, and its updates come back in that form", async () => {
    r = memoryRouter({ servers: { a: { resources: [URI] }, b: { resources: [URI] } } });
    const c = await r.connect();
    await c.request("resources/subscribe", { uri: `mcpd://b/${URI}` });
    expect(r.upstream("a").callsOf("resources/subscribe")).toEqual([]);
    expect(
      r
        .upstream("b")
        .callsOf("resources/subscribe")
        .map((x) => x.params),
    ).toEqual([{ uri: URI }]);
    r.upstream("b").sendNotification("notifications/resources/updated", { uri: URI });
    const note = await c.waitFor((m) => m.method === "notifications/resources/updated", "the update");
    expect(note.params.uri).toBe(`mcpd://b/${URI}`);
  });

  it("a client that leaves drops its subscriptions: the server is unsubscribed with the last", async () => {
    r = memoryRouter({ servers: { a: { resources: [URI] } } });
    const c = await r.connect();
    await c.request("resources/subscribe", { uri: URI });
    await c.disconnect();
    expect(
      r
        .upstream("a")
        .callsOf("resources/unsubscribe")
        .map((x) => x.params),
    ).toEqual([{ uri: URI }]);
    expect(r.router.tables().subscriptions).toBe(0);
  });

  it("a restarted server is subscribed again to every URI a client holds", async () => {
    r = memoryRouter({ servers: { a: { resources: [URI] } } });
    const a = r.upstream("a");
    const c = await r.connect();
    await c.request("resources/subscribe", { uri: URI });
    a.crash();
    a.setState("ready", "restarted");
    await c.marker();
    expect(a.callsOf("resources/subscribe").map((x) => x.params)).toEqual([{ uri: URI }, { uri: URI }]);
  });

  it("a subscribe the server refuses is answered with its error and leaves nothing subscribed", async () => {
    r = memoryRouter({ servers: { a: { resources: [URI] } } });
    r.upstream("a").on("resources/subscribe", (call) => call.fail({ code: -32002, message: "no such resource" }));
    const c = await r.connect();
    const answer = await c.request("resources/subscribe", { uri: URI });
    expect(answer.error).toEqual({ code: -32002, message: "no such resource" });
    expect(r.router.tables().subscriptions).toBe(0);
  });
});
