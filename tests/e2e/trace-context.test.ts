/**
 * W3C trace context through mcpd: `traceparent`, `tracestate` and `baggage` in a request's `_meta` reach the
 * server unchanged, with whatever else the client put there, on every request that carries a target
 * (calls, prompts, resource reads), in the aggregate and the transparent view, over the socket and
 * over HTTP, from clients and to servers of both eras (2025-11-25 and 2026-07-28). Without `mcpd.telemetry.otlp` mcpd exports no spans of its own, so it is no hop of the trace:
 * the server's spans are the client's children (with it, see otlp-export.test.ts).
 */
import { join } from "node:path";
import { fixturePath } from "../helpers/process.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestDaemon, fixture, readLog, startTestDaemon, until } from "./harness.js";
import { type HttpFrontInfo, httpFront, post } from "../http/http-harness.js";

const TRACE = {
  traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
  tracestate: "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7",
  baggage: "userId=alice,serverNode=DF%2028",
  "example.com/custom": { kept: true },
};

let d: TestDaemon;
let logFile: string;
let front: HttpFrontInfo;

beforeAll(async () => {
  d = await startTestDaemon({});
  logFile = join(d.home, "fx.log");
  d.writeConfig({ fx: fixture("fx", ["--log", logFile]) });
  const control = await d.control();
  await control.request("mcpd/reload");
  control.close();
  front = await httpFront(d);
});
afterAll(async () => {
  await d?.stop();
});

/** The `_meta` the fixture received with the request of `method` tagged `tag` (in its arguments or name). */
async function metaReceived(method: string, match: (params: any) => boolean): Promise<Record<string, unknown>> {
  const m = await until(() => readLog(logFile).find((x) => x.method === method && match(x.params)), `${method} upstream`);
  return m.params._meta;
}

describe("trace context", () => {
  it.each([["aggregate view", undefined, "fx__echo"] as const, ["transparent view", "fx", "echo"] as const])(
    "reaches the server unchanged over the socket (%s)",
    async (_label, server, tool) => {
      const raw = await d.raw();
      try {
        if (server) await raw.request("mcpd/select", { server });
        await raw.initialize();
        const tag = `socket-${server ?? "aggregate"}`;
        const r = await raw.request("tools/call", { name: tool, arguments: { text: tag }, _meta: { ...TRACE, progressToken: `p-${tag}` } });
        expect(r.error).toBeUndefined();
        const meta = await metaReceived("tools/call", (p) => p?.arguments?.text === tag);
        expect(meta).toMatchObject(TRACE);
        // The progress token is mcpd's own upstream (one server serves every client); the rest is the client's.
        expect(Object.keys(meta).sort()).toEqual([...Object.keys(TRACE), "progressToken"].sort());
        const prompt = await raw.request("prompts/get", { name: server ? "greet" : "fx__greet", arguments: { name: tag }, _meta: TRACE });
        expect(prompt.error).toBeUndefined();
        expect(await metaReceived("prompts/get", (p) => p?.arguments?.name === tag)).toEqual(TRACE);
      } finally {
        raw.close();
      }
    },
  );

  it("reaches the server unchanged over HTTP", async () => {
    const init = await post(front, "/mcp", {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "trace", version: "1" } },
    });
    const session = init.headers.get("mcp-session-id") as string;
    await init.text();
    const headers = { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" };
    await (await post(front, "/mcp", { jsonrpc: "2.0", method: "notifications/initialized" }, headers)).text();
    const r = await post(
      front,
      "/mcp",
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "fx__echo", arguments: { text: "over-http" }, _meta: TRACE } },
      headers,
    );
    expect(r.status).toBe(200);
    await r.text();
    expect(await metaReceived("tools/call", (p) => p?.arguments?.text === "over-http")).toEqual(TRACE);
  });

  it("reaches the server unchanged in both eras: a 2026 client's to a 2025 and a 2026 server, a 2025 client's to a 2026 server", async () => {
    d.writeConfig({
      fx: fixture("fx", ["--log", logFile]),
      ms: { command: process.execPath, args: [fixturePath("modern-fixture.mjs"), "--name", "ms"] },
    });
    const control = await d.control();
    await control.request("mcpd/reload");
    await until(
      async () => (await control.request("mcpd/status")).result?.servers?.find((s: any) => s.name === "ms")?.state === "ready",
      "the 2026 server ready",
    );
    control.close();
    const envelope = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {},
      "io.modelcontextprotocol/clientInfo": { name: "trace-2026", version: "1" },
    };
    const modern = await d.raw();
    const older = await d.raw();
    try {
      // A 2026 client: no initialize, its envelope in every request's _meta (mcpd's own toward the server).
      const toOld = await modern.request("tools/call", {
        name: "fx__echo",
        arguments: { text: "modern-to-2025" },
        _meta: { ...envelope, ...TRACE },
      });
      expect(toOld.error).toBeUndefined();
      expect(await metaReceived("tools/call", (p) => p?.arguments?.text === "modern-to-2025")).toEqual(TRACE);
      const toNew = await modern.request("tools/call", { name: "ms__meta", arguments: {}, _meta: { ...envelope, ...TRACE } });
      expect(toNew.error).toBeUndefined();
      expect(JSON.parse(toNew.result.content[0].text)).toEqual(TRACE);
      // A 2025 client to the 2026 server.
      await older.initialize();
      const r = await older.request("tools/call", { name: "ms__meta", arguments: {}, _meta: TRACE });
      expect(r.error).toBeUndefined();
      expect(JSON.parse(r.result.content[0].text)).toEqual(TRACE);
    } finally {
      modern.close();
      older.close();
    }
  });
});
