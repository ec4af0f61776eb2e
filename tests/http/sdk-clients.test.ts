/**
 * The official SDK's StreamableHTTPClientTransport and SSEClientTransport against mcpd's HTTP front end,
 * in the aggregate view (`/mcp`, `/sse`) and one server's transparent view (`/servers/fx/mcp`,
 * `/servers/fx/sse`): tools, progress, cancellation, sampling, and resource subscriptions, each through
 * the same router rules as a socket connection.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CreateMessageRequestSchema, ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestDaemon, fixture, startTestDaemon, until } from "../e2e/harness.js";
import { type HttpFrontInfo, type HttpKind, httpFront, sdkClient } from "./http-harness.js";

let d: TestDaemon;
let front: HttpFrontInfo;

beforeAll(async () => {
  d = await startTestDaemon({ fx: fixture("fx", ["--resource", "fixture://static/one"]) });
  front = await httpFront(d);
});
afterAll(async () => {
  await d?.stop();
});

const text = (r: any): string => (r.content as Array<{ text: string }>)[0]?.text ?? "";

const CASES: Array<{ kind: HttpKind; view: "aggregate" | "server" }> = [
  { kind: "streamable", view: "aggregate" },
  { kind: "streamable", view: "server" },
  { kind: "sse", view: "aggregate" },
  { kind: "sse", view: "server" },
];

describe.each(CASES)("$kind transport, $view view", ({ kind, view }) => {
  const path = view === "aggregate" ? "/mcp" : "/servers/fx/mcp";
  const tool = (name: string): string => (view === "aggregate" ? `fx__${name}` : name);
  let client: Client;
  /** Progress values as they arrived on the wire, before the SDK Client saw them. */
  const wireProgress: number[] = [];

  beforeAll(async () => {
    const c = await sdkClient(front, kind, path, { sampling: {} });
    client = c.client;
    // The SDK Client runs notification handlers a microtask late, so a progress notification that arrives
    // in the same chunk as its request's answer reaches `onprogress` after the request is settled and is
    // dropped by the SDK. What mcpd delivered is read off the transport itself.
    // The SDK passes an `extra` its Transport type does not declare: keep passing it on.
    const onmessage = c.transport.onmessage as ((m: unknown, extra?: unknown) => void) | undefined;
    c.transport.onmessage = (m: any, extra?: any) => {
      if (m.method === "notifications/progress") wireProgress.push(m.params.progress);
      onmessage?.(m, extra);
    };
    client.setRequestHandler(CreateMessageRequestSchema, async (req) => ({
      role: "assistant",
      model: "test-model",
      content: { type: "text", text: `sampled: ${(req.params.messages[0]?.content as { text?: string } | undefined)?.text}` },
    }));
  });
  afterAll(async () => {
    await client?.close();
  });

  it("lists and calls tools", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain(tool("echo"));
    expect(text(await client.callTool({ name: tool("echo"), arguments: { text: `hi over ${kind}` } }))).toBe(`hi over ${kind}`);
  });

  it("relays progress to the caller", async () => {
    const seen: number[] = [];
    const r = await client.callTool({ name: tool("progress"), arguments: { steps: 3, intervalMs: 5 } }, undefined, {
      onprogress: (p) => seen.push(p.progress),
    });
    expect(text(r)).toBe("done");
    // What mcpd relays: every step, in order, before the answer.
    expect(wireProgress).toEqual([1, 2, 3]);
    // What the SDK's callback sees is a prefix of it: the v1 SDK runs notification handlers a microtask
    // later but drops a request's progress handler as soon as its answer is read, so steps that arrive in
    // the same read as the answer (a loaded machine batches them) never reach onprogress.
    expect(seen).toEqual([1, 2, 3].slice(0, seen.length));
  });

  it("cancels a request upstream when the client aborts it", async () => {
    const ac = new AbortController();
    const call = client.callTool({ name: tool("slow"), arguments: { ms: 60_000, text: `slow ${kind} ${view}` } }, undefined, {
      signal: ac.signal,
    });
    // Wait until the server has it, then abort: the server must get notifications/cancelled for it.
    await until(
      async () =>
        text(await client.callTool({ name: tool("received"), arguments: { method: "tools/call" } })).includes(`slow ${kind} ${view}`),
      "slow call upstream",
    );
    ac.abort("test cancels");
    await expect(call).rejects.toThrow();
    await until(async () => {
      const got = JSON.parse(text(await client.callTool({ name: tool("received"), arguments: { method: "notifications/cancelled" } })));
      const calls = JSON.parse(text(await client.callTool({ name: tool("received"), arguments: { method: "tools/call" } })));
      const slow = calls.find((m: any) => m.params?.arguments?.text === `slow ${kind} ${view}`);
      return slow && got.some((m: any) => m.params?.requestId === slow.id);
    }, "notifications/cancelled upstream");
  });

  it("routes the server's sampling request to this client and its answer back", async () => {
    expect(text(await client.callTool({ name: tool("sample"), arguments: { prompt: "a haiku" } }))).toBe("sampled: a haiku");
  });

  it("delivers resource updates to a subscriber", async () => {
    const updates: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push(n.params.uri);
    });
    const { resources } = await client.listResources();
    const uri = resources.find((r) => r.uri.endsWith("fixture://static/one") || r.uri === "fixture://static/one")?.uri;
    expect(uri, JSON.stringify(resources)).toBeDefined();
    await client.subscribeResource({ uri: uri as string });
    expect(text(await client.callTool({ name: tool("touch"), arguments: { uri: "fixture://static/one" } }))).toBe("touched");
    await until(() => updates.includes(uri as string), `resources/updated for ${uri}`);
    await client.unsubscribeResource({ uri: uri as string });
  });
});
