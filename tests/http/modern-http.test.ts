/**
 * 2026-era clients on the HTTP front end: the official v2 SDK Client (`@modelcontextprotocol/client`)
 * pinned to 2026-07-28 and in `auto` mode on `/mcp`, `/servers/<name>/mcp` and a profile's endpoint, with no
 * session; raw POSTs for the header checks (-32020, -32022, 404 -32601, always with the request's id),
 * mcpd's codes mapped, `subscriptions/listen` as a POST whose stream stays open, and a closed response
 * cancelling its request upstream. 2025 clients on the same endpoints are covered by the other files here.
 */
import { type Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestDaemon, fixture, startTestDaemon, until } from "../e2e/harness.js";
import { type HttpFrontInfo, authHeaders, httpFront, post, sseReader } from "./http-harness.js";
import { firstText, modernEnvelope, v2Client } from "../helpers/modern.js";

let d: TestDaemon;
let front: HttpFrontInfo;
const clients: Client[] = [];

beforeAll(async () => {
  d = await startTestDaemon(
    { fx: fixture("fx", ["--header-tool", "in_region"]), other: fixture("other", ["--capabilities-minimal"]) },
    { settings: { profiles: { coding: { servers: ["fx"], tools: { include: ["fx__echo", "fx__in_region"] } } } } },
  );
  front = await httpFront(d);
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await d?.stop();
});

async function modernClient(path: string, mode: "pin" | "auto"): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(path, front.origin), { requestInit: { headers: authHeaders(front) } });
  const client = v2Client("modern-http", mode);
  clients.push(client);
  await client.connect(transport);
  return client;
}

const text = firstText;
const ENVELOPE = modernEnvelope();
/** A raw 2026-era POST: the headers the body implies, unless `headers` says otherwise. */
function modernPost(
  path: string,
  id: string | number,
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  const name = typeof params.name === "string" ? params.name : typeof params.uri === "string" ? params.uri : undefined;
  return post(
    front,
    path,
    { jsonrpc: "2.0", id, method, params: { ...params, _meta: { ...ENVELOPE, ...(params._meta as object) } } },
    { "mcp-protocol-version": "2026-07-28", "mcp-method": method, ...(name ? { "mcp-name": name } : {}), ...headers },
  );
}

describe.each(["pin", "auto"] as const)("the v2 client (%s) over Streamable HTTP", (mode) => {
  it("/mcp (aggregate view): discover, tools, prompts, resources, with no session", async () => {
    const c = await modernClient("/mcp", mode);
    expect(c.getProtocolEra()).toBe("modern");
    expect(c.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    expect(c.getServerVersion()?.name).toBe("mcpd");
    const discover = await c.discover();
    expect(discover.supportedVersions).toEqual(["2026-07-28"]);
    expect(discover.capabilities.prompts).toEqual({ listChanged: true });
    expect((await c.listTools()).tools.map((t) => t.name)).toContain("fx__echo");
    expect(text(await c.callTool({ name: "fx__echo", arguments: { text: "over http" } }))).toBe("over http");
    const prompt = await c.getPrompt({ name: "fx__greet", arguments: { name: "Ada" } });
    expect(prompt.messages[0]?.content).toMatchObject({ text: "Hello, Ada!" });
    const read = await c.readResource({ uri: "fixture://static/one" });
    expect(read.contents).toEqual([expect.objectContaining({ text: "one" })]);
  });

  it("/servers/<name>/mcp (a server's view): discover gives that server", async () => {
    const c = await modernClient("/servers/other/mcp", mode);
    expect(c.getProtocolEra()).toBe("modern");
    expect(c.getServerVersion()?.name).toBe("other");
    expect((await c.discover()).capabilities).toEqual({ tools: {} });
    expect(text(await c.callTool({ name: "echo", arguments: { text: "one server" } }))).toBe("one server");
  });

  it("/profiles/<name>/mcp: the profile's view, Mcp-Param-* mirrored by the client", async () => {
    const c = await modernClient("/profiles/coding/mcp", mode);
    expect(c.getProtocolEra()).toBe("modern");
    expect((await c.listTools()).tools.map((t) => t.name).sort()).toEqual(["fx__echo", "fx__in_region"]);
    const r = await c.callTool({ name: "fx__in_region", arguments: { region: "eu-west", text: "x" } });
    expect(JSON.parse(text(r))).toEqual({ region: "eu-west", text: "x" });
  });
});

describe("raw 2026-era POSTs", () => {
  it("answers without a session: resultType, cache hints, serverInfo; no Mcp-Session-Id", async () => {
    const r = await modernPost("/mcp", 1, "tools/list", {});
    expect(r.status).toBe(200);
    expect(r.headers.get("mcp-session-id")).toBeNull();
    const body = await r.json();
    expect(body.id).toBe(1);
    expect(body.result).toMatchObject({ resultType: "complete", ttlMs: 0, cacheScope: "private" });
    expect(body.result._meta["io.modelcontextprotocol/serverInfo"]).toMatchObject({ name: "mcpd" });
  });

  it("checks the headers against the body: 400 -32020 with the request's id", async () => {
    const version = await modernPost("/mcp", "v", "tools/list", {}, { "mcp-protocol-version": "2025-11-25" });
    expect(version.status).toBe(400);
    expect(await version.json()).toMatchObject({ id: "v", error: { code: -32020 } });
    const method = await modernPost("/mcp", "m", "tools/list", {}, { "mcp-method": "prompts/list" });
    expect(method.status).toBe(400);
    expect(await method.json()).toMatchObject({ id: "m", error: { code: -32020 } });
    const name = await modernPost("/mcp", "n", "tools/call", { name: "fx__echo", arguments: { text: "a" } }, { "mcp-name": "fx__add" });
    expect(name.status).toBe(400);
    expect(await name.json()).toMatchObject({ id: "n", error: { code: -32020, message: expect.stringContaining("Mcp-Name") } });
    const b64 = await modernPost(
      "/mcp",
      "b",
      "tools/call",
      { name: "fx__echo", arguments: { text: "a" } },
      { "mcp-name": "=?base64?ZnhfX2VjaG8=?=" },
    );
    expect(b64.status).toBe(200);
    const args = { name: "fx__in_region", arguments: { region: "eu", text: "a" } };
    const missing = await modernPost("/mcp", "p", "tools/call", args);
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ id: "p", error: { code: -32020, message: expect.stringContaining("Mcp-Param-Region") } });
    const wrong = await modernPost("/mcp", "q", "tools/call", args, { "mcp-param-region": "us" });
    expect(wrong.status).toBe(400);
    const right = await modernPost("/mcp", "r", "tools/call", args, { "mcp-param-region": "eu" });
    expect(right.status).toBe(200);
  });

  it("an unsupported version: 400 -32022 naming the supported ones; an unknown method: 404 -32601", async () => {
    const r = await modernPost(
      "/mcp",
      7,
      "tools/list",
      { _meta: { "io.modelcontextprotocol/protocolVersion": "2099-01-01" } },
      { "mcp-protocol-version": "2099-01-01" },
    );
    expect(r.status).toBe(400);
    expect(await r.json()).toEqual({
      jsonrpc: "2.0",
      id: 7,
      error: {
        code: -32022,
        message: "Unsupported protocol version: 2099-01-01",
        data: { supported: ["2026-07-28"], requested: "2099-01-01" },
      },
    });
    const unknown = await modernPost("/mcp", 8, "nosuch/method", {});
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ id: 8, error: { code: -32601 } });
  });

  it("regression: the endpoint's view cannot be swapped by an mcpd/select in the request (it reached another server's view)", async () => {
    const r = await modernPost("/mcp", 9, "mcpd/select", { server: "fx" });
    const body = await r.json();
    expect(body.id).toBe(9);
    expect(body.result).toBeUndefined();
    expect(body.error.message).toMatch(/its endpoint serves and cannot be changed/);
  });

  it("sends mcpd's own codes as standard ones with data.mcpdCode kept", async () => {
    // fx__add exists, but the profile hides it: mcpd's -32075 (MCPD_HIDDEN) becomes -32602.
    const r = await modernPost("/profiles/coding/mcp", 3, "tools/call", { name: "fx__add", arguments: { a: 1, b: 2 } });
    expect(r.status).toBe(200);
    const body = await r.json();
    expect(body.error).toMatchObject({ code: -32602, data: { mcpdCode: "MCPD_HIDDEN", mcpdWireCode: -32075 } });
  });

  it("subscriptions/listen: a stream that stays open, acknowledged, with only the opted-in kinds", async () => {
    const tools = await modernPost("/mcp", "listen-tools", "subscriptions/listen", { notifications: { toolsListChanged: true } });
    const prompts = await modernPost("/mcp", "listen-res", "subscriptions/listen", {
      notifications: { promptsListChanged: true, resourceSubscriptions: ["fixture://static/two"] },
    });
    expect(tools.headers.get("content-type")).toContain("text/event-stream");
    const a = sseReader(tools);
    const b = sseReader(prompts);
    try {
      const ackA = JSON.parse((await a.next()).data);
      expect(ackA).toMatchObject({
        method: "notifications/subscriptions/acknowledged",
        params: { notifications: { toolsListChanged: true }, _meta: { "io.modelcontextprotocol/subscriptionId": "listen-tools" } },
      });
      const ackB = JSON.parse((await b.next()).data);
      expect(ackB.params.notifications).toEqual({ promptsListChanged: true, resourceSubscriptions: ["fixture://static/two"] });
      expect(
        (await (await modernPost("/mcp", 20, "tools/call", { name: "fx__change_tools", arguments: {} })).json()).result.resultType,
      ).toBe("complete");
      const changed = JSON.parse((await a.next()).data);
      expect(changed.method).toBe("notifications/tools/list_changed");
      expect(changed.params._meta["io.modelcontextprotocol/subscriptionId"]).toBe("listen-tools");
      // The update comes after the list change in the daemon's order: on B's stream, nothing came before it.
      await (await modernPost("/mcp", 21, "tools/call", { name: "fx__touch", arguments: { uri: "fixture://static/two" } })).json();
      const updated = JSON.parse((await b.next()).data);
      expect(updated).toMatchObject({ method: "notifications/resources/updated", params: { uri: "fixture://static/two" } });
      expect(updated.params._meta["io.modelcontextprotocol/subscriptionId"]).toBe("listen-res");
    } finally {
      await a.cancel();
      await b.cancel();
    }
  });

  it("closing a request's response stream cancels it upstream (the server gets notifications/cancelled)", async () => {
    const ac = new AbortController();
    const pending = fetch(new URL("/mcp", front.origin), {
      method: "POST",
      signal: ac.signal,
      headers: {
        ...authHeaders(front),
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "fx__slow",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "slow-1",
        method: "tools/call",
        params: { name: "fx__slow", arguments: { ms: 600_000 }, _meta: ENVELOPE },
      }),
    }).catch(() => undefined);
    const received = async (method: string): Promise<any[]> => {
      const r = await modernPost("/mcp", `rcv-${Math.random()}`, "tools/call", { name: "fx__received", arguments: { method } });
      return JSON.parse(text((await r.json()).result));
    };
    await until(async () => (await received("tools/call")).some((m) => m.params?.name === "slow"), "the slow call at the server");
    ac.abort();
    await pending;
    const cancelled = await until(async () => {
      const seen = await received("notifications/cancelled");
      return seen.length > 0 ? seen : undefined;
    }, "notifications/cancelled at the server");
    expect(cancelled.length).toBeGreaterThan(0);
  });

  it("2025 clients are untouched: initialize still opens a session", async () => {
    const r = await post(front, "/mcp", {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "old", version: "1" } },
    });
    expect(r.status).toBe(200);
    expect(r.headers.get("mcp-session-id")).toBeTruthy();
    await r.text();
    const noSession = await post(front, "/mcp", { jsonrpc: "2.0", id: 1, method: "tools/list" });
    expect(noSession.status).toBe(400);
    await noSession.text();
  });
});
