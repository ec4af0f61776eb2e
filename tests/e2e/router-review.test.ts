/**
 * Regressions found reviewing the router with per-client servers and servers still coming up: a server's
 * cancellation reaches only the agent its request went to, a request cancelled (or whose agent left) while
 * it waits for servers is dropped, and each agent's own process of a per-client server has resource
 * subscriptions of its own.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type RawClient, type TestDaemon, fixture, startTestDaemon, until } from "./harness.js";

let d: TestDaemon | undefined;
afterEach(async () => {
  await d?.stop();
  d = undefined;
});

/** An agent that declared `capabilities` in its initialize. */
async function agent(daemon: TestDaemon, capabilities: Record<string, unknown> = {}): Promise<RawClient> {
  const c = await daemon.raw();
  await c.request("initialize", { protocolVersion: "2025-11-25", capabilities, clientInfo: { name: "review", version: "1" } });
  c.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  return c;
}

const text = (answer: any): string => answer.result?.content?.[0]?.text;

describe("the router, per agent", () => {
  it("regression: a per-client server's cancellation of its own request reaches only its agent (each process numbers its requests from 1: it reached another agent and ended that one's elicitation)", async () => {
    d = await startTestDaemon({ p: fixture("p", [], { sharing: "per-client" }) });
    const a = await agent(d, { elicitation: {} });
    const b = await agent(d);
    const aCall = a.request("tools/call", { name: "p__elicit", arguments: {} }, "a-call");
    const asked = await a.waitFor((m) => m.method === "elicitation/create", "A's process to ask A");
    // B's own process asks (its request 1, as A's was) and cancels that request at once.
    b.send({ jsonrpc: "2.0", id: "b-call", method: "tools/call", params: { name: "p__elicit_cancel", arguments: {} } });
    // B's process wrote the cancellation before this answer: once it is here, mcpd has handled the cancellation.
    expect(text(await b.request("tools/call", { name: "p__echo", arguments: { text: "after" } }))).toBe("after");
    expect(a.messages.filter((m) => m.method === "notifications/cancelled")).toEqual([]);
    a.send({ jsonrpc: "2.0", id: asked.id, result: { action: "accept", content: { name: "alice" } } });
    expect(text(await aCall)).toContain("alice");
  });

  it("regression: a request cancelled while it waits for a server to come up gets no answer and its id may be used again; a repeated id is refused meanwhile (the cancelled call ran and both were answered)", async () => {
    d = await startTestDaemon({ s: fixture("s", ["--init-delay", "1500"]) });
    const a = await agent(d);
    a.send({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "s__echo", arguments: { text: "first" } } });
    // While it waits, its id is in flight: the same id again is refused.
    const dup = await a.request("tools/call", { name: "s__echo", arguments: { text: "dup" } }, 7);
    expect(dup.error?.message).toContain("already in flight");
    a.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7, reason: "gave up" } });
    a.send({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "s__echo", arguments: { text: "second" } } });
    expect(text(await a.waitFor((m) => m.id === 7 && "result" in m, "the answer to the second id 7"))).toBe("second");
    // One more round trip to the same server: a late answer of the cancelled call would have come before it.
    expect(text(await a.request("tools/call", { name: "s__echo", arguments: { text: "after" } }, 8))).toBe("after");
    expect(a.messages.filter((m) => m.id === 7 && m.result !== undefined).map(text)).toEqual(["second"]);
  });

  it("regression: an agent that leaves while its call waits for servers to come up leaves no process of its own behind (a per-client session was made for it after it left, never ended)", async () => {
    d = await startTestDaemon({ p: fixture("p", ["--init-delay", "2500"], { sharing: "per-client" }) });
    const control = await d.control();
    const p = async (): Promise<any> => (await control.request("mcpd/status")).result.servers.find((s: any) => s.name === "p");
    const a = await agent(d);
    // p's tools are not known until it is up: the call waits for it in the aggregate view.
    a.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "p__slow", arguments: { ms: 60_000 } } });
    await a.request("ping"); // answered after the call was taken
    expect((await p()).state).not.toBe("ready");
    a.close();
    await until(async () => (await p()).state === "ready", "p to come up", 30_000);
    expect((await p()).sessions).toBe(0);
    // Another agent's call makes its own session, as before.
    const b = await agent(d);
    expect(text(await b.request("tools/call", { name: "p__echo", arguments: { text: "b" } }))).toBe("b");
    expect((await p()).sessions).toBe(1);
    control.close();
  });

  it("regression: each agent's process of a per-client server is subscribed for that agent, and its updates reach that agent only (the second subscribe was never sent, and updates went to every subscriber)", async () => {
    d = await startTestDaemon({ p: fixture("p", [], { sharing: "per-client" }) });
    const uri = "fixture://static/one";
    const a = await agent(d);
    const b = await agent(d);
    for (const c of [a, b]) expect((await c.request("resources/subscribe", { uri })).result).toEqual({});
    expect(text(await b.request("tools/call", { name: "p__touch", arguments: { uri } }))).toBe("touched");
    expect(text(await a.request("tools/call", { name: "p__touch", arguments: { uri } }))).toBe("touched");
    const updates = (c: RawClient) => c.waitFor((m) => m.method === "notifications/resources/updated", "an update");
    await Promise.all([updates(a), updates(b)]);
    // One more round trip each: an update of the other's process would have come before it.
    for (const c of [a, b]) await c.request("ping");
    for (const c of [a, b]) expect(c.messages.filter((m) => m.method === "notifications/resources/updated")).toHaveLength(1);
    // Unsubscribing one agent leaves the other's process subscribed.
    expect((await a.request("resources/unsubscribe", { uri })).result).toEqual({});
    expect(text(await a.request("tools/call", { name: "p__touch", arguments: { uri } }))).toBe("not subscribed");
    expect(text(await b.request("tools/call", { name: "p__touch", arguments: { uri } }))).toBe("touched");
  });
});
