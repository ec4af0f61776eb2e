import { describe, expect, it } from "vitest";
import { HttpError, ParseError, RequestTimeoutError, parseSSE } from "@mcpd/protocol";
import { callMCP } from "../../src/http/call-mcp.js";
import { fixture, rejection } from "./http-helpers.js";

describe("callMCP: one-shot HTTP MCP call", () => {
  it("returns the raw JSON-RPC envelope of a JSON reply, sending the given headers", async () => {
    const f = await fixture({ mode: "json", sessions: false });
    const envelope = await callMCP(f.url, "tools/list", {}, { headers: { Authorization: "Bearer one-shot" } });
    expect(envelope).toMatchObject({ jsonrpc: "2.0", id: 1, result: { tools: expect.any(Array) } });
    const post = f.received("POST")[0]!;
    expect(post.body).toEqual({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} });
    expect(post.headers.authorization).toBe("Bearer one-shot");
    expect(post.headers.accept).toBe("application/json, text/event-stream");
    expect(post.headers["content-type"]).toBe("application/json");
  });

  it("returns the response from an SSE reply, after the notifications before it", async () => {
    const f = await fixture({ mode: "sse", sessions: false });
    const envelope = await callMCP(f.url, "tools/call", { name: "progress", arguments: { steps: 2 }, _meta: { progressToken: "t" } });
    expect(envelope).toEqual({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "done 2 steps" }] } });
  });

  it("returns a JSON-RPC error envelope as it is, without throwing", async () => {
    const f = await fixture({ mode: "sse", sessions: false });
    const envelope = await callMCP(f.url, "nope");
    expect(envelope).toEqual({ jsonrpc: "2.0", id: 1, error: { code: -32601, message: "Method not found: nope" } });
  });

  it.each([
    ["json", "Request timeout after 200ms", "request"],
    ["sse", "SSE response timeout after 200ms", "sse"],
  ] as const)("times out (%s reply)", async (mode, message, kind) => {
    const f = await fixture({ mode, sessions: false });
    const err = await rejection(callMCP(f.url, "tools/call", { name: "slow", arguments: { ms: 30_000 } }, { timeout: 200 }));
    expect(err).toBeInstanceOf(RequestTimeoutError);
    expect(err.message).toBe(message);
    expect(err).toMatchObject({ kind });
  });

  it("keeps no timer for a timeout past what Node's timers hold (2^31 ms and more mean none, not 1 ms)", async () => {
    const f = await fixture({ mode: "json", sessions: false });
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on("warning", onWarning);
    try {
      const envelope = await callMCP(f.url, "tools/call", { name: "slow", arguments: { ms: 50 } }, { timeout: 2 ** 31 });
      expect(envelope).toMatchObject({ jsonrpc: "2.0", id: 1, result: expect.any(Object) });
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings).not.toContain("TimeoutOverflowWarning");
  });

  it("throws HttpError for a non-2xx status and ParseError for a body that is not JSON", async () => {
    const f = await fixture({ sessions: false, status: { code: 502, body: "bad gateway" } });
    const err = await rejection(callMCP(f.url, "ping"));
    expect(err).toBeInstanceOf(HttpError);
    expect(err.message).toBe("HTTP 502: bad gateway");
    f.set({ status: undefined, invalidJson: true });
    expect(await rejection(callMCP(f.url, "ping"))).toBeInstanceOf(ParseError);
  });
});

describe("parseSSE (the one-shot reader used by callMCP)", () => {
  it("takes the first data event, falls back to plain JSON, and refuses anything else", () => {
    expect(parseSSE('event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\ndata: {"x":2}\n\n')).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {},
    });
    expect(parseSSE('{"jsonrpc":"2.0","id":1,"result":{"a":1}}')).toEqual({ jsonrpc: "2.0", id: 1, result: { a: 1 } });
    expect(() => parseSSE("<html>oops</html>")).toThrow(ParseError);
  });
});
