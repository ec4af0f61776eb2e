/**
 * 2026-era clients through the socket face: the official v2 SDK Client (`@modelcontextprotocol/client`)
 * pinned to 2026-07-28, and in `auto` mode (which must settle on 2026-07-28), behind `mcpd connect` in the
 * aggregate view and one server's view: discover, tools, prompts, resources, listens; and raw socket
 * requests for what the client does not show (the envelope's checks, mapped error codes, log messages).
 */
import type { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixture, startTestDaemon, until, type RawClient, type TestDaemon, connectCommand } from "./harness.js";
import { firstText, modernEnvelope, v2Client } from "../helpers/modern.js";

let d: TestDaemon;
const clients: Client[] = [];

beforeAll(async () => {
  d = await startTestDaemon({
    fx: fixture("fx", ["--instructions", "fx instructions"]),
    other: fixture("other", ["--capabilities-minimal"]),
  });
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await d?.stop();
});

/** A v2 SDK Client behind `mcpd connect ARGS...`, pinned to 2026-07-28 or in auto mode. */
async function modernClient(mode: "pin" | "auto", ...args: string[]): Promise<Client> {
  const transport = new StdioClientTransport(connectCommand(d, args));
  const client = v2Client("modern-e2e", mode);
  clients.push(client);
  await client.connect(transport);
  return client;
}

const text = firstText;
const ENVELOPE = modernEnvelope();

describe.each(["pin", "auto"] as const)("the v2 client (%s) behind mcpd connect", (mode) => {
  it("aggregate view: discover, tools, prompts, resources", async () => {
    const c = await modernClient(mode);
    expect(c.getProtocolEra()).toBe("modern");
    expect(c.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    expect(c.getServerVersion()?.name).toBe("mcpd");
    const discover = await c.discover();
    expect(discover.supportedVersions).toEqual(["2026-07-28"]);
    expect(discover.capabilities.tools).toEqual({ listChanged: true });
    expect(discover.instructions).toContain("fx instructions");
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name)).toContain("fx__echo");
    expect(text(await c.callTool({ name: "fx__echo", arguments: { text: "modern hi" } }))).toBe("modern hi");
    const prompt = await c.getPrompt({ name: "fx__greet", arguments: { name: "Ada" } });
    expect(prompt.messages[0]?.content).toMatchObject({ text: "Hello, Ada!" });
    const read = await c.readResource({ uri: "fixture://items/7" });
    expect(read.contents).toEqual([expect.objectContaining({ text: expect.stringContaining("item 7") })]);
  });

  it("a server's view: discover gives the server as mcpd knows it", async () => {
    const c = await modernClient(mode, "other");
    expect(c.getProtocolEra()).toBe("modern");
    expect(c.getServerVersion()?.name).toBe("other");
    const discover = await c.discover();
    expect(discover.capabilities).toEqual({ tools: {} });
    expect(text(await c.callTool({ name: "echo", arguments: { text: "direct" } }))).toBe("direct");
  });
});

describe("2026 requests on the raw socket", () => {
  let raw: RawClient;
  beforeAll(async () => {
    raw = await d.raw();
  });

  it("answers without initialize, with resultType, cache hints and serverInfo; passes traceparent on", async () => {
    const r = await raw.request("tools/list", {
      _meta: { ...ENVELOPE, traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" },
    });
    expect(r.result.resultType).toBe("complete");
    expect(r.result.ttlMs).toBe(0);
    expect(r.result.cacheScope).toBe("private");
    expect(r.result._meta["io.modelcontextprotocol/serverInfo"].name).toBe("mcpd");
    const call = await raw.request("tools/call", {
      name: "fx__received",
      arguments: { method: "tools/call" },
      _meta: { ...ENVELOPE, traceparent: "00-aa-bb-01" },
    });
    expect(call.result.resultType).toBe("complete");
    const seen = JSON.parse(call.result.content[0].text) as any[];
    const meta = seen.at(-1).params._meta;
    expect(meta.traceparent).toBe("00-aa-bb-01");
    expect(meta["io.modelcontextprotocol/protocolVersion"]).toBeUndefined();
  });

  it("refuses an unsupported version (-32022), a malformed envelope (-32602) and removed methods (-32601)", async () => {
    const bad = await raw.request("tools/list", { _meta: { ...ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2099-01-01" } });
    expect(bad.error).toEqual({
      code: -32022,
      message: "Unsupported protocol version: 2099-01-01",
      data: { supported: ["2026-07-28"], requested: "2099-01-01" },
    });
    const noCaps = await raw.request("tools/list", { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } });
    expect(noCaps.error.code).toBe(-32602);
    const ping = await raw.request("ping", { _meta: ENVELOPE });
    expect(ping.error.code).toBe(-32601);
    const setLevel = await raw.request("logging/setLevel", { level: "debug", _meta: ENVELOPE });
    expect(setLevel.error.code).toBe(-32601);
  });

  it("sends mcpd's own codes as standard ones, keeping its own in data", async () => {
    const r = await raw.request("tools/call", { name: "nosuch__tool", arguments: {}, _meta: ENVELOPE });
    expect(r.error.code).toBe(-32602);
    expect(r.error.data.mcpdCode).toBe("MCPD_UNKNOWN_TOOL");
    const server = await raw.request("prompts/list", { _meta: { ...ENVELOPE, "mcpd/server": "other" } });
    // A method the server does not offer (mcpd's -32069) is "method not found" in the 2026 era.
    expect(server.error.code).toBe(-32601);
    expect(server.error.data.mcpdWireCode).toBe(-32069);
    expect(server.error.data.mcpdCode).toBe("MCPD_CAPABILITY_NOT_SUPPORTED");
  });

  it("a 2025 server's resource not found (-32002, which 2026-07-28 retired) reaches a 2026 client as -32602", async () => {
    const r = await raw.request("resources/read", { uri: "fixture://static/none", _meta: { ...ENVELOPE, "mcpd/server": "fx" } });
    expect(r.error.code).toBe(-32602);
    expect(r.error.message).toMatch(/Resource not found: fixture:\/\/static\/none/);
    expect(r.error.data.mcpdWireCode).toBe(-32002);
  });

  it("sends log messages for a request only when its _meta asked for a log level", async () => {
    const quiet = await raw.request("tools/call", { name: "fx__log", arguments: { level: "error", message: "unasked" }, _meta: ENVELOPE });
    expect(quiet.result.resultType).toBe("complete");
    const asked = await raw.request("tools/call", {
      name: "fx__log",
      arguments: { level: "error", message: "asked" },
      _meta: { ...ENVELOPE, "io.modelcontextprotocol/logLevel": "warning" },
    });
    expect(asked.result.resultType).toBe("complete");
    await raw.waitFor((m) => m.method === "notifications/message" && m.params.data === "asked", "the asked-for log message");
    expect(raw.messages.some((m) => m.method === "notifications/message" && m.params.data === "unasked")).toBe(false);
  });

  it("subscriptions/listen: acknowledged, then only the opted-in kinds, tagged with the subscription id", async () => {
    const listenId = "listen-1";
    raw.send({
      jsonrpc: "2.0",
      id: listenId,
      method: "subscriptions/listen",
      params: { _meta: ENVELOPE, notifications: { toolsListChanged: true } },
    });
    const ack = await raw.waitFor((m) => m.method === "notifications/subscriptions/acknowledged", "the acknowledgement");
    expect(ack.params).toEqual({
      notifications: { toolsListChanged: true },
      _meta: { "io.modelcontextprotocol/subscriptionId": listenId },
    });
    const before = raw.messages.length;
    await raw.request("tools/call", { name: "fx__change_tools", arguments: {}, _meta: ENVELOPE });
    const changed = await raw.waitFor((m) => m.method === "notifications/tools/list_changed", "tools list_changed on the listen");
    expect(changed.params._meta["io.modelcontextprotocol/subscriptionId"]).toBe(listenId);
    await raw.request("tools/call", { name: "fx__touch", arguments: { uri: "fixture://static/one" }, _meta: ENVELOPE });
    expect(
      raw.messages
        .slice(before)
        .some((m) => m.method === "notifications/prompts/list_changed" || m.method === "notifications/resources/updated"),
    ).toBe(false);
    raw.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: listenId } });
  });

  it("subscriptions/listen with resourceSubscriptions: updates of that resource only", async () => {
    const other = await d.raw();
    other.send({
      jsonrpc: "2.0",
      id: 9,
      method: "subscriptions/listen",
      params: { _meta: ENVELOPE, notifications: { resourceSubscriptions: ["fixture://static/one"] } },
    });
    const ack = await other.waitFor((m) => m.method === "notifications/subscriptions/acknowledged", "the acknowledgement");
    expect(ack.params.notifications).toEqual({ resourceSubscriptions: ["fixture://static/one"] });
    await other.request("tools/call", { name: "fx__touch", arguments: { uri: "fixture://static/one" }, _meta: ENVELOPE });
    const updated = await other.waitFor((m) => m.method === "notifications/resources/updated", "the update");
    expect(updated.params.uri).toBe("fixture://static/one");
    expect(updated.params._meta["io.modelcontextprotocol/subscriptionId"]).toBe(9);
    await until(() => !other.messages.some((m) => m.method === "notifications/tools/list_changed"), "no list change");
    other.close();
  });
});
