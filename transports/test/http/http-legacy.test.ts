import { describe, expect, it } from "vitest";
import { HttpError, ParseError, ProtocolError, RequestTimeoutError, TransportClosedError } from "@mcpd/protocol";
import { HttpTransport } from "../../src/http/http-transport.js";
import type { CloseInfo, MessageContext } from "../../src/transport.js";
import { INIT_PARAMS, fixture, initialized, rejection, transport, waitFor } from "./http-helpers.js";

const SLOW = { name: "slow", arguments: { ms: 30_000 } };

describe("HttpTransport: legacy HTTP+SSE (type sse)", () => {
  it("connects through the endpoint event and carries every message over the GET stream", async () => {
    const f = await fixture();
    const t = await initialized({ type: "sse", url: f.sseUrl, headers: { Authorization: "Bearer L" } });
    expect(t.mode).toBe("legacy-sse");
    const sessionId = [...f.legacySessions.keys()][0];
    expect(t.info()).toEqual({ type: "sse", mode: "legacy-sse", sessionId, droppedMessages: 0 });

    const notes: Array<{ params: unknown; context: MessageContext }> = [];
    t.onNotification = (_m, params, context) => notes.push({ params, context });
    t.onRequest = async (request) => ({ roots: [], asked: request.method });
    expect(await t.request("tools/call", { name: "echo", arguments: { text: "legacy" } })).toEqual({
      content: [{ type: "text", text: "legacy" }],
    });
    await t.request("tools/call", { name: "progress", arguments: { steps: 2 }, _meta: { progressToken: 7 } });
    expect(notes.map((n) => (n.params as { progress: number }).progress)).toEqual([1, 2]);
    const asked = await t.request<{ content: Array<{ text: string }> }>("tools/call", { name: "ask", arguments: {} });
    expect(JSON.parse(asked.content[0]!.text)).toEqual({ roots: [], asked: "roots/list" });

    const get = f.received("GET")[0]!;
    expect(get.path).toBe("/sse");
    expect(get.headers.accept).toBe("text/event-stream");
    expect(get.headers.authorization).toBe("Bearer L");
    const posts = f.received("POST");
    expect(posts.length).toBeGreaterThanOrEqual(5);
    for (const p of posts) {
      expect(p.path).toBe(`/messages?sessionId=${sessionId}`);
      expect(p.headers["content-type"]).toBe("application/json");
      expect(p.headers.authorization).toBe("Bearer L");
      expect(p.headers["mcp-session-id"]).toBeUndefined();
    }
    expect(posts[0]!.body).toMatchObject({ id: 1, method: "initialize", params: INIT_PARAMS });
  });

  it("times out (kind sse), cancels upstream and keeps caller abort reasons", async () => {
    const f = await fixture();
    const t = await initialized({ type: "sse", url: f.sseUrl });
    const err = await rejection(t.request("tools/call", SLOW, { timeout: 200 }));
    expect(err).toBeInstanceOf(RequestTimeoutError);
    expect(err.message).toBe("SSE response timeout after 200ms");
    await waitFor(() => f.cancelled.length === 1, { message: "cancellation received" });

    const ac = new AbortController();
    const reason = new Error("stop");
    const pending = t.request("tools/call", SLOW, { signal: ac.signal });
    await waitFor(() => f.received("POST", "tools/call").length === 2);
    ac.abort(reason);
    expect(await rejection(pending)).toBe(reason);
    await waitFor(() => f.cancelled.length === 2, { message: "second cancellation received" });
    expect(f.cancelled[1]!.reason).toBe("stop");
  });

  it("turns a refused POST into HttpError", async () => {
    const f = await fixture();
    const t = await initialized({ type: "sse", url: f.sseUrl });
    f.set({ status: { code: 503, body: "busy" } });
    const err = await rejection(t.request("tools/list"));
    expect(err).toBeInstanceOf(HttpError);
    expect(err.message).toBe("HTTP 503: busy");
  });

  it("reports stream events that are not JSON to onError and keeps going", async () => {
    const f = await fixture();
    const t = await initialized({ type: "sse", url: f.sseUrl });
    const errors: Error[] = [];
    t.onError = (e) => errors.push(e);
    f.set({ invalidJson: true });
    await rejection(t.request("ping", {}, { timeout: 200 }));
    expect(errors[0]).toBeInstanceOf(ParseError);
    f.set({ invalidJson: false });
    await expect(t.request("ping")).resolves.toEqual({});
  });

  it("closes the transport when the GET stream ends: pending requests fail, onClose once", async () => {
    const f = await fixture();
    const t = await initialized({ type: "sse", url: f.sseUrl });
    const closes: CloseInfo[] = [];
    t.onClose = (info) => closes.push(info);
    const pending = t.request("tools/call", SLOW).catch((e: unknown) => e);
    await waitFor(() => f.received("POST", "tools/call").length === 1);
    f.endLegacyStreams();
    const err = (await pending) as Error;
    expect(err).toBeInstanceOf(TransportClosedError);
    expect(err.message).toMatch(/^Transport closed: legacy SSE stream from .* ended$/);
    expect(t.connected).toBe(false);
    await expect(t.request("ping")).rejects.toBeInstanceOf(TransportClosedError);
    await t.close();
    expect(closes).toHaveLength(1);
    expect(closes[0]).toMatchObject({ expected: false });
  });

  it("close() ends the GET stream, sends no DELETE and fires onClose", async () => {
    const f = await fixture();
    const t = await initialized({ type: "sse", url: f.sseUrl });
    const closes: CloseInfo[] = [];
    t.onClose = (info) => closes.push(info);
    await t.close();
    await waitFor(() => f.legacySessions.size === 0, { message: "GET stream closed" });
    expect(f.received("DELETE")).toHaveLength(0);
    expect(closes).toEqual([{ reason: "closed by client", expected: true }]);
  });

  it("refuses an endpoint on another origin", async () => {
    const f = await fixture({ legacyEndpoint: "http://127.0.0.2:9/messages?sessionId=steal" });
    const t = new HttpTransport({ type: "sse", url: f.sseUrl });
    const err = await rejection(t.connect());
    expect(err).toBeInstanceOf(ProtocolError);
    expect(err.message).toMatch(
      /legacy SSE endpoint http:\/\/127\.0\.0\.2:9\/messages\?<redacted> from .* is on another origin \(http:\/\/127\.0\.0\.2:9/,
    );
    expect(t.connected).toBe(false);
    await t.close();
  });

  it("fails connect when the URL answers without an event stream, or never answers", async () => {
    const f = await fixture();
    const t = new HttpTransport({ type: "sse", url: f.url });
    const err = await rejection(t.connect());
    expect(err).toBeInstanceOf(HttpError);
    expect(err.message).toMatch(/^HTTP 400/);
    await t.close();

    f.set({ hang: true });
    const hung = new HttpTransport({ type: "sse", url: f.sseUrl, timeout: 200 });
    const timeout = await rejection(hung.connect());
    expect(timeout).toBeInstanceOf(RequestTimeoutError);
    expect(timeout.message).toBe("Request timeout after 200ms");
    await hung.close();
  });
});

describe("HttpTransport: type http falls back to legacy", () => {
  it("falls back when POST initialize answers 405 and GET yields an endpoint; records the mode", async () => {
    const f = await fixture();
    const t = await transport({ type: "http", url: f.sseUrl });
    expect(t.mode).toBe("streamable-http");
    const init = await t.request<{ protocolVersion: string }>("initialize", INIT_PARAMS);
    expect(init.protocolVersion).toBe("2025-06-18");
    expect(t.mode).toBe("legacy-sse");
    expect(t.info()).toMatchObject({ type: "http", mode: "legacy-sse" });
    await t.notify("notifications/initialized");
    expect(await t.request("tools/call", { name: "echo", arguments: { text: "fallback" } })).toEqual({
      content: [{ type: "text", text: "fallback" }],
    });
    expect(f.requests.slice(0, 3).map((r) => `${r.method} ${r.path.split("?")[0]}`)).toEqual(["POST /sse", "GET /sse", "POST /messages"]);
  });

  it("keeps the original error when no endpoint appears", async () => {
    const f = await fixture({ status: { code: 405, body: "POST not here", method: "initialize" } });
    const t = await transport({ type: "http", url: f.url });
    const err = await rejection(t.request("initialize", INIT_PARAMS));
    expect(err).toBeInstanceOf(HttpError);
    expect(err.message).toBe("HTTP 405: POST not here");
    expect(t.mode).toBe("streamable-http");
    expect(f.received("GET")).toHaveLength(1);
  });

  it("never falls back once Streamable HTTP worked", async () => {
    const f = await fixture();
    const t = await initialized({ url: f.url });
    f.set({ status: { code: 404, body: "gone", method: "initialize" } });
    await rejection(t.request("initialize", INIT_PARAMS));
    expect(t.mode).toBe("streamable-http");
    expect(f.received("GET")).toHaveLength(0);
  });
});

describe("HttpTransport: legacy connect refused", () => {
  it("leaves no timer behind: a process whose only transport failed to connect exits at once (regression: it lived on for the whole timeout)", async () => {
    const { spawn } = await import("node:child_process");
    const { createServer } = await import("node:net");
    const { fileURLToPath } = await import("node:url");
    // A port nothing listens on: bind one, note it, close it.
    const port = await new Promise<number>((res) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => res(p));
      });
    });
    const dist = fileURLToPath(new URL("../../dist/http/http-transport.js", import.meta.url));
    const script = `
      const { HttpTransport } = await import(${JSON.stringify(dist)});
      const t = new HttpTransport({ type: "sse", url: "http://127.0.0.1:${port}/sse", timeout: 120000 });
      try { await t.connect(); process.stdout.write("connected\\n"); } catch (e) { process.stdout.write("refused\\n"); }
      await t.close();
    `;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    const exited = await new Promise<boolean>((res) => {
      const timer = setTimeout(() => res(false), 30_000);
      child.once("exit", () => {
        clearTimeout(timer);
        res(true);
      });
    });
    if (!exited) child.kill("SIGKILL");
    expect(out.trim()).toBe("refused");
    expect(exited, "the process still ran 30 s after its transport's refused connect (the 120 s deadline was still armed)").toBe(true);
  });
});
