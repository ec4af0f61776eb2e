/**
 * Routing, in memory: the aggregate view's `<server>__<name>` names and their way to the right server
 * under the server's own name, one server's transparent view, and per-request routing with
 * `_meta["mcpd/server"]`. The real-process counterparts are in tests/e2e/daemon-routing.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { callText } from "./fake-answers.js";
import { memoryRouter, type MemoryRouter } from "./memory-router.js";

let r: MemoryRouter;
afterEach(() => r?.close());

const textOf = (m: { result?: { content?: Array<{ text?: string }> } }): string | undefined => m.result?.content?.[0]?.text;

describe("the aggregate view", () => {
  it("lists every server's tools and prompts as <server>__<name>", async () => {
    r = memoryRouter({ servers: { a: { tools: ["echo", "add"], prompts: ["greet"] }, b: { tools: ["echo"] } } });
    const c = await r.connect();
    const tools = await c.request("tools/list");
    expect(tools.result.tools.map((t: { name: string }) => t.name)).toEqual(["a__echo", "a__add", "b__echo"]);
    const prompts = await c.request("prompts/list");
    expect(prompts.result.prompts.map((p: { name: string }) => p.name)).toEqual(["a__greet"]);
  });

  it("sends a prefixed call to its server under the server's own name, with the arguments as they were", async () => {
    r = memoryRouter({ servers: { a: { tools: ["echo"] }, b: { tools: ["echo"] } } });
    const c = await r.connect();
    const answer = await c.call("b__echo", { text: "hi" });
    expect(textOf(answer)).toBe(callText("b", "echo", { text: "hi" }));
    expect(r.upstream("a").calls).toHaveLength(0);
    expect(
      r
        .upstream("b")
        .callsOf("tools/call")
        .map((x) => x.params),
    ).toEqual([{ name: "echo", arguments: { text: "hi" } }]);
  });

  it("routes prompts/get and completion/complete of a prompt by its prefixed name", async () => {
    r = memoryRouter({ servers: { a: { prompts: ["greet"] }, b: { prompts: ["greet"] } } });
    const c = await r.connect();
    const got = await c.request("prompts/get", { name: "b__greet" });
    expect(got.result.messages[0].content.text).toBe("b/greet");
    const done = await c.request("completion/complete", {
      ref: { type: "ref/prompt", name: "a__greet" },
      argument: { name: "x", value: "" },
    });
    expect(done.result.completion.values).toEqual(["a"]);
    expect(r.upstream("a").callsOf("completion/complete")[0]?.params?.ref).toEqual({ type: "ref/prompt", name: "greet" });
  });

  it("routes completion/complete of a resource template to its server, which gets its own form of it", async () => {
    const files = { uriTemplate: "file:///{name}", name: "files" };
    r = memoryRouter({ servers: { a: { resourceTemplates: [files] }, b: { resourceTemplates: [files] } } });
    const c = await r.connect();
    const listed = await c.request("resources/templates/list");
    expect(listed.result.resourceTemplates.map((t: { uriTemplate: string }) => t.uriTemplate)).toEqual([
      "mcpd://a/file:///{name}",
      "mcpd://b/file:///{name}",
    ]);
    const ref = { type: "ref/resource", uri: "mcpd://b/file:///{name}" };
    const done = await c.request("completion/complete", { ref, argument: { name: "name", value: "x" } });
    expect(done.result.completion.values).toEqual(["b"]);
    expect(r.upstream("b").callsOf("completion/complete")[0]?.params?.ref).toEqual({ type: "ref/resource", uri: "file:///{name}" });
    expect(r.upstream("a").calls).toEqual([]);
  });

  it("refuses an unknown tool (-32602) with a close name, and asks no server", async () => {
    r = memoryRouter({ servers: { a: { tools: ["echo"] } } });
    const c = await r.connect();
    const answer = await c.call("a__ecoh");
    expect(answer.error).toMatchObject({ code: -32602, data: { mcpdCode: "MCPD_UNKNOWN_TOOL" } });
    expect(answer.error.message).toContain("a__echo");
    expect(r.upstream("a").callsOf("tools/call")).toHaveLength(0);
  });

  it("keeps a resource URI one server lists, and namespaces one that several list; each is read from its own server", async () => {
    r = memoryRouter({ servers: { a: { resources: ["file:///only-a", "file:///both"] }, b: { resources: ["file:///both"] } } });
    const c = await r.connect();
    const listed = await c.request("resources/list");
    expect(listed.result.resources.map((x: { uri: string }) => x.uri)).toEqual([
      "file:///only-a",
      "mcpd://a/file:///both",
      "mcpd://b/file:///both",
    ]);
    const read = await c.request("resources/read", { uri: "mcpd://b/file:///both" });
    // The server gets its own URI; the answer comes back in the form the client wrote.
    expect(r.upstream("b").callsOf("resources/read")[0]?.params).toEqual({ uri: "file:///both" });
    expect(read.result.contents[0]).toEqual({ uri: "mcpd://b/file:///both", text: "b:file:///both" });
    const plain = await c.request("resources/read", { uri: "file:///both" });
    expect(plain.error).toMatchObject({ code: -32602 });
    expect(plain.error.message).toContain("mcpd://a/file:///both");
  });

  it("answers initialize with mcpd's own capabilities and every ready server's instructions", async () => {
    r = memoryRouter({ servers: { a: { instructions: "use a" }, b: { state: "starting", instructions: "use b" } } });
    const c = r.attach();
    const init = await c.request("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "x", version: "1" },
    });
    expect(init.result.serverInfo.name).toBe("mcpd");
    expect(init.result.capabilities.tools).toEqual({ listChanged: true });
    expect(init.result.instructions).toBe("## a\nuse a");
  });
});

describe("one server's transparent view", () => {
  it("shows the server's own names and its own initialize answer, and sends calls to it alone", async () => {
    r = memoryRouter({ servers: { a: { tools: ["echo"], instructions: "a's" }, b: { tools: ["echo"] } } });
    const c = r.attach();
    await c.request("mcpd/select", { server: "b" });
    const init = await c.request("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "x", version: "1" },
    });
    expect(init.result.serverInfo.name).toBe("b");
    const tools = await c.request("tools/list");
    expect(tools.result.tools).toEqual([{ name: "echo" }]);
    expect(textOf(await c.call("echo", { n: 1 }))).toBe(callText("b", "echo", { n: 1 }));
    expect(r.upstream("a").calls).toHaveLength(0);
  });

  it("passes a tool the server does not list to the server, whose own answer the client gets", async () => {
    r = memoryRouter({ servers: { a: { tools: ["echo"] } } });
    r.upstream("a").on("tools/call:nope", (call) => call.fail({ code: -32602, message: "no such tool: nope" }));
    const c = await r.connect({ select: { server: "a" } });
    const answer = await c.call("nope");
    expect(answer.error).toEqual({ code: -32602, message: "no such tool: nope" });
  });

  it("refuses a select of a server that is not configured (-32602 naming the configured ones)", async () => {
    r = memoryRouter({ servers: { a: {}, b: {} } });
    const c = r.attach();
    const selected = await c.request("mcpd/select", { server: "zz" });
    expect(selected.error).toMatchObject({ code: -32602 });
    expect(selected.error.message).toContain("configured: a, b");
  });
});

describe("per-request routing", () => {
  it('sends a request with _meta["mcpd/server"] to that server, unprefixed, from the aggregate view', async () => {
    r = memoryRouter({ servers: { a: { tools: ["echo"] }, b: { tools: ["echo"] } } });
    const c = await r.connect();
    const answer = await c.call("echo", { x: 1 }, undefined, { "mcpd/server": "b" });
    expect(textOf(answer)).toBe(callText("b", "echo", { x: 1 }));
    // The route is mcpd's: the server never sees it.
    expect(r.upstream("b").callsOf("tools/call")[0]?.params).toEqual({ name: "echo", arguments: { x: 1 } });
  });
});
