/**
 * @mcpd/client's `profile` and `tools` options, and McpdTransport's, against the real daemon: the
 * connection selects its view with `mcpd/select` like `mcpd connect --profile` does, so every listing
 * (`listTools`, per server or not; prompts; resources) shows only what the selection lets through, and a
 * hidden item is refused with `MCPD_HIDDEN` naming the profile. The official SDK Client over McpdTransport
 * gets the same view.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { connect, McpdTools, McpdTransport, type McpdClient, type McpdClientOptions } from "@mcpd/client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../helpers/process.js";
import { RawClient } from "../e2e/harness.js";
import { failure, fixture, TestDaemon } from "./test-daemon.js";

let d: TestDaemon;
const closers: Array<() => Promise<unknown>> = [];

const PROFILES = {
  // Tools of a only, one excluded; a's prompts and its first static resource only.
  coding: {
    servers: ["a"],
    tools: { include: ["a__*"], exclude: ["a__crash", "a__env"] },
    prompts: { exclude: ["*"] },
    resources: { include: ["fixture://static/one", "mcpd://a/fixture://items/*"] },
  },
};

beforeAll(async () => {
  d = await TestDaemon.start({ a: fixture("a"), b: fixture("b") }, { profiles: PROFILES });
  const probe = await connect({ env: d.env, reconnect: false });
  await waitFor(async () => (await probe.servers()).every((s) => s.state === "ready"), { message: "servers ready" });
  await probe.close();
});
afterAll(async () => {
  await d?.cleanup();
});
afterEach(async () => {
  for (const close of closers.splice(0)) await close().catch(() => {});
});

async function client(options: McpdClientOptions): Promise<McpdClient> {
  const c = await connect({ env: d.env, reconnect: false, clientInfo: { name: "profiles-sdk", version: "1.0.0" }, ...options });
  closers.push(() => c.close());
  return c;
}

describe("@mcpd/client with a profile", () => {
  it("lists only the profile's tools, all together or per server, and refuses a hidden one with MCPD_HIDDEN", async () => {
    const c = await client({ profile: "coding" });
    const names = (await c.listTools()).map((t) => t.exposedName);
    expect(names).toContain("a__echo");
    expect(names).not.toContain("a__crash");
    expect(names.some((n) => n?.startsWith("b__"))).toBe(false);
    // Per server (per-request routing): the same selection, the server's own names.
    const own = (await c.listTools({ server: "a" })).map((t) => t.name);
    expect(own).toContain("echo");
    expect(own).not.toContain("env");
    expect(await c.listTools({ server: "b" })).toEqual([]);
    // Asking mcpd/tools about a wider selection never widens the connection's own.
    const wider = await c.control(McpdTools, { tools: ["*"] });
    expect(wider.tools.map((t) => t.exposedName).sort()).toEqual([...names].sort());
    expect((await c.control(McpdTools, { tools: ["a__echo", "b__echo"] })).tools.map((t) => t.exposedName)).toEqual(["a__echo"]);

    expect((await c.callTool({ name: "a__echo", arguments: { text: "ok" } })).content).toEqual([{ type: "text", text: "ok" }]);
    const hidden = await failure(c.callTool({ name: "a__env", arguments: {} }));
    expect(hidden.code).toBe("MCPD_HIDDEN");
    expect(hidden.wireCode).toBe(-32075);
    expect(hidden.message).toContain(`Tool "a__env" is hidden by profile "coding"`);
    // Routed to the server by name: judged by the same profile.
    const routed = await failure(c.callTool({ server: "a", name: "env", arguments: {} }));
    expect(routed.code).toBe("MCPD_HIDDEN");
    const other = await failure(c.callTool({ server: "b", name: "echo", arguments: { text: "x" } }));
    expect(other.message).toContain(`its server "b" is not one of the profile's servers`);
  });

  it("filters prompts and resources by the profile's globs (resources by their URI or its mcpd:// form)", async () => {
    const c = await client({ profile: "coding" });
    expect(await c.listPrompts()).toEqual([]);
    const hidden = await failure(c.getPrompt({ name: "a__greet", arguments: { name: "x" } }));
    expect(hidden.code).toBe("MCPD_HIDDEN");
    expect((await c.listResources()).map((r) => r.uri)).toEqual(["fixture://static/one"]);
    // a's template matches the namespaced glob (`*` covers `{id}`); b's is not the profile's.
    expect((await c.listResourceTemplates()).map((t) => [t.server, t.uriTemplate])).toEqual([["a", "fixture://items/{id}"]]);
    const read = await c.readResource({ uri: "mcpd://a/fixture://static/one" });
    expect(JSON.stringify(read)).toContain("one");
    const two = await failure(c.readResource({ uri: "mcpd://a/fixture://static/two" }));
    expect(two.code).toBe("MCPD_HIDDEN");
    expect(two.message).toContain(`the profile's "resources" filter leaves it out`);
    // Through the template the namespaced glob allows.
    expect(JSON.stringify(await c.readResource({ uri: "mcpd://a/fixture://items/7" }))).toContain("item 7");
  });

  it("`tools` globs alone narrow only the tools; status shows the connection's selection", async () => {
    const c = await client({ tools: ["*__add"] });
    expect((await c.listTools()).map((t) => t.exposedName).sort()).toEqual(["a__add", "b__add"]);
    expect((await c.listPrompts()).map((p) => p.exposedName).sort()).toEqual(["a__greet", "b__greet"]);
    const st = await c.status();
    expect(st.clients.map((x) => [x.profile, x.tools])).toEqual([[null, ["*__add"]]]);
  });

  it("an unknown profile fails connect with MCPD_UNKNOWN_PROFILE naming the configured ones; bad options are TypeErrors", async () => {
    const err = await failure(connect({ env: d.env, reconnect: false, profile: "codnig" }));
    expect(err.code).toBe("MCPD_UNKNOWN_PROFILE");
    expect(err.message).toBe('Unknown profile "codnig"; configured (mcpd.profiles): coding');
    expect(() => connect({ env: d.env, profile: "" })).toThrow(TypeError);
    expect(() => connect({ env: d.env, tools: [] })).toThrow(TypeError);
  });
});

/** Sends `lines` at once (one write) on a new raw connection to the daemon; resolves with the answers to `ids`, by id. */
async function rawExchange(lines: string[], ids: number[]): Promise<Map<number, any>> {
  const c = await RawClient.open(d.socketPath);
  closers.push(async () => c.close());
  c.writeLine(lines.join("\n"));
  const answers = await Promise.all(ids.map((id) => c.waitFor((m) => m.id === id, `the answer to request ${id}`)));
  return new Map(answers.map((m) => [m.id, m]));
}

const request = (id: number, method: string, params: object): string => JSON.stringify({ jsonrpc: "2.0", id, method, params });

describe("a connection whose mcpd/select fails has no view", () => {
  it("refuses the initialize sent right behind it and every later request, rather than serve the unfiltered aggregate view", async () => {
    // All at once, as a pipelining client sends them: a profile that does not exist, then an agent's session.
    const byId = await rawExchange(
      [
        request(1, "mcpd/select", { profile: "nope" }),
        request(2, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "pipeliner", version: "1" } }),
        request(3, "tools/list", {}),
        request(4, "tools/call", { name: "b__echo", arguments: { text: "hi" } }),
      ],
      [1, 2, 3, 4],
    );
    expect(byId.get(1)?.error?.data?.mcpdCode).toBe("MCPD_UNKNOWN_PROFILE");
    for (const id of [2, 3, 4]) {
      expect(byId.get(id)?.result, `request ${id} got no result`).toBeUndefined();
      expect(byId.get(id)?.error?.message).toMatch(
        /this connection has no view: its mcpd\/select failed \(.*nope.*\); open a new connection/,
      );
    }
  });

  it("echoes a long unknown name only in part, in the select's error and in each refusal after it", async () => {
    const name = "x".repeat(100_000);
    const byId = await rawExchange([request(1, "mcpd/select", { server: name }), request(2, "tools/list", {})], [1, 2]);
    expect(byId.get(1)?.error?.data?.mcpdCode).toBe("MCPD_UNKNOWN_SERVER");
    expect(byId.get(1)?.error?.message.length).toBeLessThan(1_000);
    expect(byId.get(2)?.error?.message).toMatch(/^this connection has no view/);
    expect(byId.get(2)?.error?.message.length).toBeLessThan(1_000);
  });
});

describe("the official SDK Client over McpdTransport with a profile", () => {
  it("sees the profile's view and gets -32075 for a hidden tool", async () => {
    const sdk = new Client({ name: "profiles-transport", version: "1.0.0" });
    closers.push(() => sdk.close());
    await sdk.connect(new McpdTransport({ env: d.env, profile: "coding", tools: ["a__echo", "a__add", "b__*"] }));
    expect((await sdk.listTools()).tools.map((t) => t.name).sort()).toEqual(["a__add", "a__echo"]);
    const refused = await sdk.callTool({ name: "a__slow", arguments: { ms: 1 } }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(McpError);
    expect((refused as McpError).code).toBe(-32075);
    expect((refused as McpError).message).toContain("hidden by this connection's tools selection (a__echo, a__add, b__*)");
  });
});
