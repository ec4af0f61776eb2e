/**
 * MCP Apps through the router, in memory: a `ui://` view keeps its scheme in every view (namespaced inside
 * it in the aggregate view, `ui://<server>/...`) wherever it appears (a tool's `_meta`, resources/list,
 * reads, results, subscriptions), app-only tools reach UI clients alone, and an app's own calls (by its
 * server's tool names, under a profile that selects the app's tool) work. The real-process counterparts
 * are in tests/e2e/apps.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { JsonObject, Resource, Tool } from "@mcpd/protocol";
import type { Message } from "./memory-client.js";
import { memoryRouter, type MemoryRouter } from "./memory-router.js";

let r: MemoryRouter;
afterEach(() => r?.close());

const UI_CAPS = { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } };
const VIEW = "ui://clock/app.html";
/** Every `_meta` key of a tool's view an app host reads, none of which mcpd may change. */
const UI_META = {
  resourceUri: VIEW,
  csp: { connectDomains: ["https://api.example.com"], resourceDomains: ["https://cdn.example.com"] },
  permissions: { camera: {} },
  domain: "clock.example.com",
  prefersBorder: true,
};

/** A capability-blind app server: its UI tool, an app-only tool, a plain tool; the view listed or not. */
function appServer(listsView = true): { tools: Tool[]; resources: Array<Resource | string> } {
  return {
    tools: [
      { name: "show-clock", inputSchema: { type: "object" }, _meta: { ui: UI_META, "ui/resourceUri": VIEW, other: { kept: 1 } } },
      { name: "tick", inputSchema: { type: "object" }, _meta: { ui: { visibility: ["app"] } } },
      { name: "plain", inputSchema: { type: "object" } },
    ],
    resources: listsView ? [{ uri: VIEW, name: "clock", mimeType: "text/html;profile=mcp-app" }, "file:///shared"] : ["file:///shared"],
  };
}

const tools = (m: Message): Array<{ name: string; _meta?: JsonObject }> =>
  (m.result?.tools ?? []) as Array<{ name: string; _meta?: JsonObject }>;
const names = (m: Message): string[] => tools(m).map((t) => t.name);

describe("MCP Apps in the aggregate view", () => {
  it("namespaces a ui:// view inside its scheme in the tool's _meta (both keys) and resources/list; every other _meta key is kept", async () => {
    r = memoryRouter({ servers: { a: appServer() } });
    const c = await r.connect({ capabilities: UI_CAPS });
    const show = tools(await c.request("tools/list")).find((t) => t.name === "a__show-clock");
    expect(show?._meta).toEqual({
      ui: { ...UI_META, resourceUri: "ui://a/clock/app.html" },
      "ui/resourceUri": "ui://a/clock/app.html",
      other: { kept: 1 },
    });
    const listed = ((await c.request("resources/list")).result?.resources ?? []) as Array<{ uri: string }>;
    expect(listed.map((x) => x.uri)).toEqual(["ui://a/clock/app.html", "file:///shared"]);
  });

  it("reads the view by the URI the tool names: the server gets its own URI, the answer the client's form", async () => {
    r = memoryRouter({ servers: { a: appServer() } });
    r.upstream("a").on("resources/read", (call) =>
      call.answer({
        contents: [{ uri: String(call.params?.uri), mimeType: "text/html;profile=mcp-app", text: "<html/>", _meta: { ui: UI_META } }],
      }),
    );
    const c = await r.connect({ capabilities: UI_CAPS });
    const read = await c.request("resources/read", { uri: "ui://a/clock/app.html" });
    expect(r.upstream("a").callsOf("resources/read")[0]?.params?.uri).toBe(VIEW);
    expect(read.result?.contents).toEqual([
      { uri: "ui://a/clock/app.html", mimeType: "text/html;profile=mcp-app", text: "<html/>", _meta: { ui: UI_META } },
    ]);
  });

  it("counts a ui:// view a tool names as its server's even when resources/list leaves it out", async () => {
    r = memoryRouter({ servers: { a: appServer(false), b: { tools: ["echo"] } } });
    const c = await r.connect({ capabilities: UI_CAPS });
    const uri = tools(await c.request("tools/list")).find((t) => t.name === "a__show-clock")?._meta?.["ui/resourceUri"];
    expect(uri).toBe("ui://a/clock/app.html");
    expect((await c.request("resources/read", { uri: uri as string })).result?.contents).toEqual([{ uri, text: `a:${VIEW}` }]);
    // The server's own form, from a client that kept it, still finds the one server offering it.
    expect((await c.request("resources/read", { uri: VIEW })).result?.contents).toEqual([{ uri: VIEW, text: `a:${VIEW}` }]);
  });

  it("opens both copies of one app server: each tool names its own copy's view, and each read reaches that copy", async () => {
    r = memoryRouter({ servers: { a: appServer(), b: appServer() } });
    const c = await r.connect({ capabilities: UI_CAPS });
    const list = tools(await c.request("tools/list"));
    for (const server of ["a", "b"]) {
      const meta = list.find((t) => t.name === `${server}__show-clock`)?._meta ?? {};
      const uri = (meta.ui as JsonObject).resourceUri as string;
      expect(uri).toBe(`ui://${server}/clock/app.html`);
      expect((await c.request("resources/read", { uri })).result?.contents).toEqual([{ uri, text: `${server}:${VIEW}` }]);
    }
    // The plain URI is ambiguous; the error names the ui:// forms.
    const plain = await c.request("resources/read", { uri: VIEW });
    expect(plain.error?.data?.mcpdCode).toBe("MCPD_AMBIGUOUS_RESOURCE");
    expect(plain.error?.message).toContain("ui://a/clock/app.html, ui://b/clock/app.html");
  });

  it("rewrites resource links and embedded resources of a result as the view lists them, keeping its _meta and structuredContent", async () => {
    r = memoryRouter({ servers: { a: appServer(), b: { resources: ["file:///shared"] } } });
    const result = {
      content: [
        { type: "resource_link", uri: VIEW, name: "clock" },
        { type: "resource", resource: { uri: "file:///shared", text: "s" } },
        { type: "resource_link", uri: "https://example.com/x", name: "web" },
      ],
      structuredContent: { time: "12:00" },
      _meta: { "ui/app": { theme: "dark" } },
    };
    r.upstream("a").on("tools/call", (call) => call.answer(result));
    const c = await r.connect({ capabilities: UI_CAPS });
    const answer = await c.call("a__show-clock");
    expect(answer.result).toEqual({
      ...result,
      content: [
        { type: "resource_link", uri: "ui://a/clock/app.html", name: "clock" },
        { type: "resource", resource: { uri: "mcpd://a/file:///shared", text: "s" } },
        { type: "resource_link", uri: "https://example.com/x", name: "web" },
      ],
    });
  });

  it("subscribes by the view's form and relays the server's update in it", async () => {
    r = memoryRouter({ servers: { a: appServer() } });
    const c = await r.connect({ capabilities: UI_CAPS });
    expect((await c.request("resources/subscribe", { uri: "ui://a/clock/app.html" })).result).toEqual({});
    expect(r.upstream("a").callsOf("resources/subscribe")[0]?.params?.uri).toBe(VIEW);
    const update = c.next((m) => m.method === "notifications/resources/updated", "the update");
    r.upstream("a").sendNotification("notifications/resources/updated", { uri: VIEW });
    expect((await update).params?.uri).toBe("ui://a/clock/app.html");
    expect((await c.request("resources/unsubscribe", { uri: "ui://a/clock/app.html" })).result).toEqual({});
  });
});

describe("app-only tools and an app's own calls", () => {
  it("lists an app-only tool only to a client that declared the UI extension, in both views", async () => {
    r = memoryRouter({ servers: { a: appServer() } });
    const ui = await r.connect({ capabilities: UI_CAPS });
    const plain = await r.connect();
    expect(names(await ui.request("tools/list"))).toEqual(["a__show-clock", "a__tick", "a__plain"]);
    expect(names(await plain.request("tools/list"))).toEqual(["a__show-clock", "a__plain"]);
    const uiServer = await r.connect({ select: { server: "a" }, capabilities: UI_CAPS });
    const plainServer = await r.connect({ select: { server: "a" } });
    expect(names(await uiServer.request("tools/list"))).toEqual(["show-clock", "tick", "plain"]);
    expect(names(await plainServer.request("tools/list"))).toEqual(["show-clock", "plain"]);
    // The transparent view leaves the view's URI as the server gave it.
    expect(tools(await uiServer.request("tools/list"))[0]?._meta).toEqual({ ui: UI_META, "ui/resourceUri": VIEW, other: { kept: 1 } });
  });

  it("resolves an app's unprefixed tool name to the one server of the view offering it; two copies: refused, naming both", async () => {
    r = memoryRouter({ servers: { a: appServer(), other: { tools: ["echo"] } } });
    const c = await r.connect({ capabilities: UI_CAPS });
    expect((await c.call("tick")).result?.content).toEqual([{ type: "text", text: "a/tick {}" }]);
    await r.close();
    r = memoryRouter({ servers: { a: appServer(), b: appServer() } });
    const two = await r.connect({ capabilities: UI_CAPS });
    const refused = await two.call("tick");
    expect(refused.error).toMatchObject({ code: -32602, data: { mcpdCode: "MCPD_AMBIGUOUS_TOOL", servers: ["a", "b"] } });
    expect(refused.error?.message).toContain("a__tick, b__tick");
    expect(r.upstream("a").callsOf("tools/call")).toEqual([]);
  });

  it("under a profile that selects the app's tool, its app-only tools are listed and its calls work (UI clients), in both views", async () => {
    r = memoryRouter({
      servers: { a: appServer(), b: appServer() },
      mcpd: { profiles: { clock: { servers: ["a"], tools: { include: ["a__show-clock"] } } } },
    });
    const ui = await r.connect({ select: { profile: "clock" }, capabilities: UI_CAPS });
    expect(names(await ui.request("tools/list"))).toEqual(["a__show-clock", "a__tick"]);
    expect((await ui.call("tick")).result?.content).toEqual([{ type: "text", text: "a/tick {}" }]);
    expect((await ui.call("a__plain")).result?.content).toEqual([{ type: "text", text: "a/plain {}" }]);
    const uiServer = await r.connect({ select: { server: "a", profile: "clock" }, capabilities: UI_CAPS });
    expect(names(await uiServer.request("tools/list"))).toEqual(["show-clock", "tick"]);
    expect((await uiServer.call("tick")).result?.content).toEqual([{ type: "text", text: "a/tick {}" }]);
    // A client without the extension gets no more than the profile selects.
    const plain = await r.connect({ select: { profile: "clock" } });
    expect(names(await plain.request("tools/list"))).toEqual(["a__show-clock"]);
    expect((await plain.call("a__tick")).error?.data?.mcpdCode).toBe("MCPD_HIDDEN");
    const plainServer = await r.connect({ select: { server: "a", profile: "clock" } });
    expect((await plainServer.call("tick")).error?.data?.mcpdCode).toBe("MCPD_HIDDEN");
  });

  it("a per-client server in the aggregate view: a UI client's own session opens at initialize, and its tools are the ones listed and called", async () => {
    const shared = appServer();
    r = memoryRouter({ servers: { a: { ...shared, config: { sharing: "per-client" } }, b: { tools: ["echo"] } } });
    const ui = await r.connect({ capabilities: UI_CAPS });
    const id = [...r.router.sessions.keys()][0] as string;
    const own = r.directory.privateOf("a", id);
    expect(own?.clientCapabilities).toEqual(UI_CAPS);
    // Its own session offers one more tool (as an app server does to a UI client), under the server's filters and name.
    own?.setList("tools", [...shared.tools, { name: "ui-only", inputSchema: { type: "object" } }]);
    expect(names(await ui.request("tools/list"))).toEqual(["a__show-clock", "a__tick", "a__plain", "a__ui-only", "b__echo"]);
    expect((await ui.call("a__ui-only")).result?.content).toEqual([{ type: "text", text: "a/ui-only {}" }]);
    expect(own?.callsOf("tools/call", "ui-only")).toHaveLength(1);
    // A client without the extension opens no session at initialize, and lists the shared session's tools.
    const plain = await r.connect();
    expect(r.directory.privateSessions).toHaveLength(1);
    expect(names(await plain.request("tools/list"))).toEqual(["a__show-clock", "a__plain", "b__echo"]);
  });

  it("gives a per-client server's private session its client's own capabilities", async () => {
    r = memoryRouter({ servers: { a: { ...appServer(), config: { sharing: "per-client" } } } });
    const ui = await r.connect({ select: { server: "a" }, capabilities: UI_CAPS });
    await ui.call("plain");
    const id = [...r.router.sessions.keys()][0] as string;
    expect(r.directory.privateOf("a", id)?.clientCapabilities).toEqual(UI_CAPS);
  });
});

describe("app-only tools called by a client that did not declare the UI extension", () => {
  const APP_ONLY = { code: -32602, data: { mcpdCode: "MCPD_APP_ONLY_TOOL", server: "a", name: "tick" } };
  const profiles = { all: { servers: ["a"] }, search: { servers: ["a"], toolSearch: { mode: "on", callTool: true } } };
  /** One call of `a`'s app-only tool `tick` each way a client can make it, from connections that declare `capabilities`. */
  async function callsOfTick(capabilities: JsonObject): Promise<Message[]> {
    return [
      await (await r.connect({ capabilities })).call("a__tick"),
      await (await r.connect({ capabilities })).call("tick"),
      await (await r.connect({ select: { server: "a" }, capabilities })).call("tick"),
      await (await r.connect({ capabilities })).call("tick", {}, undefined, { "mcpd/server": "a" }),
      await (await r.connect({ select: { profile: "all" }, capabilities })).call("a__tick"),
      await (await r.connect({ select: { server: "a", profile: "all" }, capabilities })).call("tick"),
      await (await r.connect({ select: { profile: "search" }, capabilities })).call("call_tool", { name: "a__tick", arguments: {} }),
    ];
  }

  it("is refused in every view (aggregate, unprefixed, transparent, routed, profile, call_tool), naming the tool and the rule; nothing goes upstream", async () => {
    r = memoryRouter({ servers: { a: appServer() }, mcpd: { profiles } });
    for (const answer of await callsOfTick({})) {
      expect(answer.error).toMatchObject(APP_ONLY);
      expect(answer.error?.message).toContain('Tool "tick" of server "a" is app-only (_meta.ui.visibility ["app"])');
      expect(answer.error?.message).toContain("io.modelcontextprotocol/ui");
    }
    expect(r.upstream("a").callsOf("tools/call")).toEqual([]);
    // The server's other tools are called as before.
    expect((await (await r.connect()).call("a__plain")).result?.content).toEqual([{ type: "text", text: "a/plain {}" }]);
  });

  it("goes through for a client that declared the extension, each of those ways", async () => {
    r = memoryRouter({ servers: { a: appServer() }, mcpd: { profiles } });
    for (const answer of await callsOfTick(UI_CAPS)) {
      const content = (answer.result?.content ?? []) as unknown[];
      expect(content.at(-1)).toEqual({ type: "text", text: "a/tick {}" });
    }
    expect(r.upstream("a").callsOf("tools/call")).toHaveLength(7);
  });

  it("tool search finds an app-only tool only for a client that declared the extension", async () => {
    r = memoryRouter({ servers: { a: appServer() }, mcpd: { profiles } });
    const found = async (capabilities: JsonObject): Promise<string[]> => {
      const c = await r.connect({ select: { profile: "search" }, capabilities });
      const answer = await c.call("search_tools", { query: "tick" });
      const tools = ((answer.result?.structuredContent as JsonObject | undefined)?.tools ?? []) as Array<{ name: string }>;
      expect(names(await c.request("tools/list"))).toEqual(expect.arrayContaining(tools.map((t) => t.name)));
      return tools.map((t) => t.name);
    };
    expect(await found({})).not.toContain("a__tick");
    expect(await found(UI_CAPS)).toContain("a__tick");
  });

  it("2026 era: each request is judged by the capabilities of its own envelope", async () => {
    r = memoryRouter({ servers: { a: appServer() } });
    const c = r.attach();
    const envelope = (caps: JsonObject): JsonObject => ({
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": caps,
    });
    const plain = await c.request("tools/call", { name: "a__tick", arguments: {}, _meta: envelope({}) });
    expect(plain.error).toMatchObject({ code: -32602, data: { mcpdCode: "MCPD_APP_ONLY_TOOL" } });
    const viaServer = await c.request("tools/call", { name: "tick", arguments: {}, _meta: { ...envelope({}), "mcpd/server": "a" } });
    expect(viaServer.error).toMatchObject({ code: -32602, data: { mcpdCode: "MCPD_APP_ONLY_TOOL" } });
    const ui = await c.request("tools/call", { name: "a__tick", arguments: {}, _meta: envelope(UI_CAPS) });
    expect(ui.result?.content).toEqual([{ type: "text", text: "a/tick {}" }]);
    expect(r.upstream("a").callsOf("tools/call")).toHaveLength(1);
    // Its lists too: the app-only tool for a request that declares the extension, not for one that does not.
    expect(names(await c.request("tools/list", { _meta: envelope(UI_CAPS) }))).toContain("a__tick");
    expect(names(await c.request("tools/list", { _meta: envelope({}) }))).not.toContain("a__tick");
  });
});
