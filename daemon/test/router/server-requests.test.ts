/**
 * Server-to-client requests (sampling, elicitation, roots), in memory: each goes to the one client that
 * caused it and declared the capability, or mcpd answers itself (the configured roots, or -32066 saying
 * why); a server's cancellation of one reaches the client. The real-process counterparts are in
 * tests/e2e/daemon-server-requests.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { JsonObject } from "@mcpd/protocol";
import type { MemoryClient, RequestAnswer } from "./memory-client.js";
import { memoryRouter, type MemoryRouter } from "./memory-router.js";

let r: MemoryRouter;
afterEach(() => r?.close());

const SAMPLING = { sampling: {} };
const sampled =
  (text: string): (() => RequestAnswer) =>
  () => ({ result: { role: "assistant", content: { type: "text", text } } });

/** A client with a call in flight to `a__work` (held by the fake). */
async function calling(name: string, capabilities: JsonObject = SAMPLING, answer = sampled(name)): Promise<MemoryClient> {
  const c = await r.connect({ name, capabilities, onRequest: answer });
  c.sendCall("a__work", `${name}-call`);
  return c;
}

describe("server-to-client requests of a shared server", () => {
  it("go to the one client calling the server, tagged with the server, and its answer goes back", async () => {
    r = memoryRouter({ servers: { a: { tools: ["work"] } } });
    const a = r.upstream("a").hold("tools/call");
    const bystander = await r.connect({ name: "bystander", capabilities: SAMPLING, onRequest: sampled("wrong") });
    const caller = await calling("caller");
    const answer = await a.sendRequest("sampling/createMessage", { messages: [] });
    expect(answer).toEqual({ role: "assistant", content: { type: "text", text: "caller" } });
    expect(caller.requests()[0]?.params).toEqual({ messages: [], _meta: { "mcpd/server": "a" } });
    expect(bystander.requests()).toEqual([]);
    for (const call of [...a.pending]) call.answer({ content: [] });
  });

  it("are refused with -32066 when the only client calling did not declare the capability", async () => {
    r = memoryRouter({ servers: { a: { tools: ["work"] } } });
    const a = r.upstream("a").hold("tools/call");
    const c = await calling("no-sampling", {});
    await expect(a.sendRequest("sampling/createMessage", {})).rejects.toMatchObject({
      rpcCode: -32066,
      message: expect.stringMatching(/only client .*"no-sampling".* did not declare the "sampling" capability/),
    });
    expect(c.requests()).toEqual([]);
    for (const call of [...a.pending]) call.answer({ content: [] });
  });

  it("are refused with -32066 naming both clients when two are calling, and leave a hint for status", async () => {
    r = memoryRouter({ servers: { a: { tools: ["work"] } } });
    const a = r.upstream("a").hold("tools/call");
    const [c1, c2] = [await calling("one"), await calling("two")];
    await expect(a.sendRequest("elicitation/create", {})).rejects.toMatchObject({
      rpcCode: -32066,
      message: expect.stringMatching(/2 clients have requests in flight to it \(c\d+ "one", c\d+ "two"\)/),
    });
    expect([...c1.requests(), ...c2.requests()]).toEqual([]);
    expect(r.router.hint(a)).toContain(`give this server "sharing": "per-client"`);
    for (const call of [...a.pending]) call.answer({ content: [] });
  });

  it("are refused with -32066 when no client is calling the server", async () => {
    r = memoryRouter({ servers: { a: { tools: ["work"] } } });
    await r.connect({ capabilities: SAMPLING, onRequest: sampled("x") });
    await expect(r.upstream("a").sendRequest("sampling/createMessage", {})).rejects.toMatchObject({
      rpcCode: -32066,
      message: expect.stringContaining("no client has a request in flight to it"),
    });
  });
});

describe("server-to-client requests on a reply stream, for roots, cancelled, of a per-client server", () => {
  it("on a call's reply stream (Streamable HTTP), go to the client whose call it is, even while another calls too", async () => {
    r = memoryRouter({ servers: { a: { tools: ["work"] } } });
    const a = r.upstream("a").hold("tools/call");
    const [c1, c2] = [await calling("one"), await calling("two")];
    const c2call = a.callsOf("tools/call")[1];
    expect(await c2call?.ask("sampling/createMessage", {})).toMatchObject({ content: { text: "two" } });
    expect(c1.requests()).toEqual([]);
    expect(c2.requests()).toHaveLength(1);
    for (const call of [...a.pending]) call.answer({ content: [] });
  });

  it("roots/list that no client can answer gets the server's configured roots", async () => {
    r = memoryRouter({ servers: { a: { config: { roots: [{ uri: "file:///work", name: "work" }] } } } });
    await r.connect();
    expect(await r.upstream("a").sendRequest("roots/list")).toEqual({ roots: [{ uri: "file:///work", name: "work" }] });
  });

  it("a server's notifications/cancelled for a relayed request reaches the client under the client's id", async () => {
    r = memoryRouter({ servers: { a: { tools: ["work"] } } });
    const a = r.upstream("a").hold("tools/call");
    const c = await calling("caller", SAMPLING, () => undefined);
    const asked = a.sendRequest("sampling/createMessage", {}, {}, "srv-7");
    const relayed = await c.waitFor((m) => m.method === "sampling/createMessage", "the relayed request");
    a.sendNotification("notifications/cancelled", { requestId: "srv-7", reason: "too slow" });
    const note = await c.waitFor((m) => m.method === "notifications/cancelled", "the cancellation");
    expect(note.params).toMatchObject({ requestId: relayed.id });
    await expect(asked).rejects.toMatchObject({ code: "MCPD_ABORTED" });
    expect(r.router.tables().relayed).toBe(0);
    for (const call of [...a.pending]) call.answer({ content: [] });
  });

  it("with sharing per-client, each client's own session asks that client alone", async () => {
    r = memoryRouter({ servers: { p: { tools: ["work"], config: { sharing: "per-client" } } } });
    const [c1, c2] = [
      await r.connect({ onRequest: sampled("one"), capabilities: SAMPLING }),
      await r.connect({ onRequest: sampled("two"), capabilities: SAMPLING }),
    ];
    await Promise.all([c1.call("p__work"), c2.call("p__work")]);
    const [p1, p2] = [r.directory.privateOf("p", c1.session.id), r.directory.privateOf("p", c2.session.id)];
    expect(p1).toBeDefined();
    expect(p1).not.toBe(p2);
    // Nothing in flight: a private session's owner is its one candidate all the same.
    expect(await p2?.sendRequest("sampling/createMessage", {})).toMatchObject({ content: { text: "two" } });
    expect(await p1?.sendRequest("sampling/createMessage", {})).toMatchObject({ content: { text: "one" } });
    expect(r.upstream("p").calls).toEqual([]);
  });
});
