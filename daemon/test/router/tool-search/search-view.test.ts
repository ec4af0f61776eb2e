/**
 * Tool search in a view, in memory: in search mode a connection's tools/list holds search_tools (and
 * call_tool when its profile says so) and the tools it found or used; a search finds only tools of its
 * view; found tools join its list with a list_changed and are called natively; call_tool calls only a
 * tool of the view and says which; auto follows the view's size; the index follows list changes and reloads.
 */
import type { JsonObject, Tool } from "@mcpd/protocol";
import { afterEach, describe, expect, it } from "vitest";
import type { MemoryClient, Message } from "../memory-client.js";
import { parseConfig } from "../../../src/config/index.js";
import { configText, memoryRouter, type MemoryRouter } from "../memory-router.js";

let r: MemoryRouter;
afterEach(() => r?.close());

const tool = (name: string, description: string): Tool => ({ name, description, inputSchema: { type: "object", properties: {} } });

const SERVERS = {
  github: { tools: [tool("create_issue", "Create a new issue in a repository"), tool("merge_pull_request", "Merge a pull request")] },
  k8s: { tools: [tool("kubectl_logs", "Get logs from pods"), tool("kubectl_scale", "Scale a deployment")] },
  secret: { tools: [tool("create_issue_secretly", "Create an issue nobody sees")] },
};
const PROFILES = {
  search: { servers: ["github", "k8s"], toolSearch: "on" },
  calls: { servers: ["github", "k8s"], toolSearch: { mode: "on", callTool: true } },
  auto: { toolSearch: { mode: "auto", autoThreshold: 3 } },
  autoBig: { toolSearch: { mode: "auto", autoThreshold: 10 } },
};

function router(): MemoryRouter {
  return memoryRouter({ servers: SERVERS, mcpd: { profiles: PROFILES } });
}

const toolNames = async (c: MemoryClient): Promise<string[]> =>
  (await c.request("tools/list")).result.tools.map((t: { name: string }) => t.name);

const found = (m: Message): string[] => (m.result.structuredContent as { tools: Array<{ name: string }> }).tools.map((t) => t.name);

function search(c: MemoryClient, args: JsonObject): Promise<Message> {
  return c.call("search_tools", args);
}

describe("search mode", () => {
  it("lists search_tools alone; a search finds tools of the view only, which join the list after a list_changed and are called natively", async () => {
    r = router();
    const c = await r.connect({ select: { profile: "search" } });
    expect(await toolNames(c)).toEqual(["search_tools"]);
    const answer = await search(c, { query: "create an issue" });
    expect(found(answer)[0]).toBe("github__create_issue");
    expect(JSON.stringify(answer)).not.toContain("secret");
    await c.waitFor((m) => m.method === "notifications/tools/list_changed", "list_changed");
    expect(await toolNames(c)).toContain("github__create_issue");
    const called = await c.call("github__create_issue", { title: "x" });
    expect(called.result.content[0].text).toContain("github/create_issue");
  });

  it("searches one server when asked, and refuses a server outside the view as a tool error", async () => {
    r = router();
    const c = await r.connect({ select: { profile: "search" } });
    expect(found(await search(c, { query: "logs issue scale merge", server: "k8s", limit: 10 })).sort()).toEqual([
      "k8s__kubectl_logs",
      "k8s__kubectl_scale",
    ]);
    const refused = await search(c, { query: "issue", server: "secret" });
    expect(refused.result.isError).toBe(true);
    expect((await search(c, { query: "" })).result.isError).toBe(true);
  });

  it("call_tool (on by the profile's setting) calls a tool of the view and says which; never one outside it", async () => {
    r = router();
    const c = await r.connect({ select: { profile: "calls" } });
    expect(await toolNames(c)).toEqual(["search_tools", "call_tool"]);
    const answer = await c.call("call_tool", { name: "k8s__kubectl_scale", arguments: { replicas: 3 } });
    expect(answer.result.content[0].text).toBe("[called k8s__kubectl_scale]");
    expect(answer.result.content[1].text).toContain("k8s/kubectl_scale");
    expect(answer.result._meta["mcpd/calledTool"]).toBe("k8s__kubectl_scale");
    const outside = await c.call("call_tool", { name: "secret__create_issue_secretly", arguments: {} });
    expect(outside.result.isError).toBe(true);
    expect(r.upstream("secret").callsOf("tools/call")).toEqual([]);
    expect(await toolNames(c)).toContain("k8s__kubectl_scale");
  });

  it("regression: call_tool on a per-client server calls this connection's own process and says which tool it called (it answered unlabelled)", async () => {
    r = memoryRouter({
      servers: { ...SERVERS, k8s: { ...SERVERS.k8s, config: { sharing: "per-client" } } },
      mcpd: { profiles: PROFILES },
    });
    const c = await r.connect({ select: { profile: "calls" } });
    const answer = await c.call("call_tool", { name: "k8s__kubectl_scale", arguments: { replicas: 3 } });
    expect(answer.result.content[0].text).toBe("[called k8s__kubectl_scale]");
    expect(answer.result._meta["mcpd/calledTool"]).toBe("k8s__kubectl_scale");
    expect(r.upstream("k8s").callsOf("tools/call")).toEqual([]);
    expect(r.directory.privateOf("k8s", c.session.id)?.callsOf("tools/call")).toHaveLength(1);
  });

  it("is asked for by the connection's selection, without a profile; without either the view lists every tool", async () => {
    r = router();
    const c = await r.connect({ select: { toolSearch: "on" } });
    expect(await toolNames(c)).toEqual(["search_tools"]);
    expect(found(await search(c, { query: "issue secretly" }))).toContain("secret__create_issue_secretly");
    const plain = await r.connect();
    expect(await toolNames(plain)).toHaveLength(5);
  });

  it('"auto" is on when the view would list more tools than its threshold, off otherwise', async () => {
    r = router();
    expect(await toolNames(await r.connect({ select: { profile: "auto" } }))).toEqual(["search_tools"]);
    expect(await toolNames(await r.connect({ select: { profile: "autoBig" } }))).toHaveLength(5);
  });

  it("follows a server's list change: a new tool is found, a removed one is not", async () => {
    r = router();
    const c = await r.connect({ select: { profile: "search" } });
    expect(found(await search(c, { query: "merge pull request" }))).toContain("github__merge_pull_request");
    r.upstream("github").setList("tools", [tool("create_issue", "Create an issue"), tool("list_branches", "List the branches")]);
    await c.waitFor((m) => m.method === "notifications/tools/list_changed" && m.params?._meta !== undefined, "github's list_changed");
    expect(found(await search(c, { query: "branches" }))).toEqual(["github__list_branches"]);
    expect(found(await search(c, { query: "merge pull request" }))).not.toContain("github__merge_pull_request");
  });

  it("follows a reload that turns a profile's search mode off: its connections hear list_changed and list every tool", async () => {
    r = router();
    const [c, other] = [await r.connect({ select: { profile: "search" } }), await r.connect({ select: { profile: "auto" } })];
    expect(await toolNames(c)).toEqual(["search_tools"]);
    const before = r.router.filtersSnapshot();
    const profiles = { ...PROFILES, search: { servers: ["github", "k8s"], toolSearch: "off" } };
    r.router.applyFilters(parseConfig(configText({ servers: SERVERS, mcpd: { profiles } }), "/memory/config.json", {}).settings, before);
    await Promise.all([c.marker(), other.marker()]);
    expect(c.notifications().map((m) => m.method)).toEqual(["notifications/tools/list_changed"]);
    expect(other.notifications()).toEqual([]);
    expect(await toolNames(c)).toHaveLength(4);
  });
});
