import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import {
  ConfigError,
  HttpError,
  McpRemoteError,
  MessageTooLargeError,
  NoResponseError,
  PROTOCOL_DEFAULTS,
  ParseError,
  TransportClosedError,
  keptResultText,
  type JsonObject,
  type JsonRpcRequest,
} from "@mcpd/protocol";
import { HttpTransport } from "../../src/http/http-transport.js";
import type { MessageContext } from "../../src/transport.js";
import { INIT_PARAMS, fixture, initialized, rejection, transport, waitFor } from "./http-helpers.js";
import { isAlive } from "../../../tests/helpers/process.js";

describe("HttpTransport: Streamable HTTP exchanges", () => {
  it.each(["json", "sse"] as const)("initializes, lists and calls tools with %s replies", async (mode) => {
    const f = await fixture({ mode });
    const t = await initialized({ url: f.url });
    const tools = await t.request<{ tools: Array<{ name: string }> }>("tools/list");
    expect(tools.tools.map((x) => x.name)).toContain("echo");
    const result = await t.request("tools/call", { name: "echo", arguments: { text: `hello ${mode}` } });
    expect(result).toEqual({ content: [{ type: "text", text: `hello ${mode}` }] });
    expect(t.info()).toMatchObject({ type: "http", mode: "streamable-http", droppedMessages: 0 });
    expect(t.mode).toBe("streamable-http");
    expect(t.info().sessionId).toBe([...f.sessions][0]);
    // A long answer's result text is kept (JSON body or SSE event), for a relay to pass on as the server wrote it.
    const long = "x".repeat(PROTOCOL_DEFAULTS.keepResultMinChars);
    const longCall = await t.request<JsonObject>("tools/call", { name: "echo", arguments: { text: long } });
    expect(keptResultText(longCall)).toBe(JSON.stringify({ content: [{ type: "text", text: long }] }));
  });

  it("sends the protocol headers, the configured headers and integer ids", async () => {
    const f = await fixture();
    const t = await initialized({ url: f.url, headers: { Authorization: "Bearer t0ken", "X-Extra": "1" } });
    const seen: number[] = [];
    await t.request("tools/list", {}, { onRequestId: (id) => seen.push(id as number) });
    await t.request("ping", {}, { onRequestId: (id) => seen.push(id as number) });
    expect(seen).toEqual([2, 3]);

    const posts = f.received("POST");
    const init = posts[0]!;
    expect(init.body).toMatchObject({ jsonrpc: "2.0", id: 1, method: "initialize", params: INIT_PARAMS });
    for (const r of posts) {
      expect(r.headers["content-type"]).toBe("application/json");
      expect(r.headers.accept).toBe("application/json, text/event-stream");
      expect(r.headers.authorization).toBe("Bearer t0ken");
      expect(r.headers["x-extra"]).toBe("1");
    }
    // No session and no version before initialize answered; both on everything after.
    expect(init.headers["mcp-session-id"]).toBeUndefined();
    expect(init.headers["mcp-protocol-version"]).toBeUndefined();
    const sessionId = [...f.sessions][0];
    for (const r of posts.slice(1)) {
      expect(r.headers["mcp-session-id"]).toBe(sessionId);
      expect(r.headers["mcp-protocol-version"]).toBe("2025-06-18");
    }
    expect(posts.map((r) => r.body.id)).toEqual([1, undefined, 2, 3]);
  });

  it("sends the version the server negotiated, not the one asked for", async () => {
    const f = await fixture({ protocolVersion: "2025-03-26" });
    const t = await initialized({ url: f.url });
    await t.request("ping");
    expect(f.received("POST", "ping")[0]!.headers["mcp-protocol-version"]).toBe("2025-03-26");
  });

  it("accepts 202 for notifications and sends them without an id", async () => {
    const f = await fixture();
    const t = await initialized({ url: f.url });
    await expect(t.notify("notifications/roots/list_changed")).resolves.toBeUndefined();
    const note = f.received("POST", "notifications/roots/list_changed")[0]!;
    expect(note.body).toEqual({ jsonrpc: "2.0", method: "notifications/roots/list_changed" });
  });

  it("throws McpRemoteError for a JSON-RPC error answer", async () => {
    const f = await fixture({ mode: "sse" });
    const t = await initialized({ url: f.url });
    const err = await rejection(t.request("no/such/method"));
    expect(err).toBeInstanceOf(McpRemoteError);
    expect(err.message).toBe("MCP error -32601: Method not found: no/such/method");
    expect(err.code).toBe("MCPD_MCP_ERROR");
  });

  it("delivers notifications on an SSE reply with relatedRequestId", async () => {
    const f = await fixture({ mode: "sse" });
    const t = await initialized({ url: f.url });
    const notes: Array<{ method: string; params: JsonObject | undefined; context: MessageContext }> = [];
    t.onNotification = (method, params, context) => notes.push({ method, params, context });
    let id: unknown;
    await t.request(
      "tools/call",
      { name: "progress", arguments: { steps: 3 }, _meta: { progressToken: "tok" } },
      { onRequestId: (x) => (id = x) },
    );
    expect(notes.map((n) => n.params?.progress)).toEqual([1, 2, 3]);
    for (const n of notes) {
      expect(n.method).toBe("notifications/progress");
      expect(n.context.relatedRequestId).toBe(id);
    }
  });

  it("answers a server-to-client request from an SSE reply by POSTing the result", async () => {
    const f = await fixture({ mode: "sse" });
    const t = await initialized({ url: f.url });
    const asked: Array<{ request: JsonRpcRequest; context: MessageContext }> = [];
    t.onRequest = async (request, context) => {
      asked.push({ request, context });
      return { roots: [{ uri: "file:///tmp", name: "tmp" }] };
    };
    let id: unknown;
    const result = await t.request<{ content: Array<{ text: string }> }>(
      "tools/call",
      { name: "ask", arguments: {} },
      { onRequestId: (x) => (id = x) },
    );
    expect(JSON.parse(result.content[0]!.text)).toEqual({ roots: [{ uri: "file:///tmp", name: "tmp" }] });
    expect(asked).toHaveLength(1);
    expect(asked[0]!.request.method).toBe("roots/list");
    expect(asked[0]!.context.relatedRequestId).toBe(id);
    // The answer is a POST carrying the server's id, with the session.
    const answerPost = f.requests.find((r) => r.method === "POST" && r.body?.id === asked[0]!.request.id)!;
    expect(answerPost.body.result).toEqual({ roots: [{ uri: "file:///tmp", name: "tmp" }] });
    expect(answerPost.headers["mcp-session-id"]).toBe([...f.sessions][0]);
  });

  it("answers -32601 to a server request when no handler is set", async () => {
    const f = await fixture({ mode: "sse" });
    const t = await initialized({ url: f.url });
    const result = await t.request<{ content: Array<{ text: string }> }>("tools/call", {
      name: "ask",
      arguments: { method: "sampling/createMessage" },
    });
    expect(JSON.parse(result.content[0]!.text)).toMatchObject({ code: -32601 });
  });
});

describe("HttpTransport: HTTP errors, parse errors and size limits", () => {
  it("turns 401 into HttpError with WWW-Authenticate and Mcp-Auth-Server", async () => {
    const f = await fixture({
      status: {
        code: 401,
        body: "unauthorized",
        headers: { "WWW-Authenticate": 'Bearer resource_metadata="http://x/.well-known"', "Mcp-Auth-Server": "http://auth.example" },
      },
    });
    const t = await transport({ url: f.url });
    const err = await rejection(t.request("initialize", INIT_PARAMS));
    expect(err).toBeInstanceOf(HttpError);
    expect(err.message).toBe(
      'HTTP 401: unauthorized [WWW-Authenticate: Bearer resource_metadata="http://x/.well-known"] [Mcp-Auth-Server: http://auth.example]',
    );
    expect(err).toMatchObject({ status: 401, code: "MCPD_HTTP_ERROR", wwwAuthenticate: 'Bearer resource_metadata="http://x/.well-known"' });
  });

  it("turns 500 into HttpError with the body text, for requests and notifications", async () => {
    const f = await fixture();
    const t = await initialized({ url: f.url });
    f.set({ status: { code: 500, body: "database on fire" } });
    const err = await rejection(t.request("tools/list"));
    expect(err.message).toBe("HTTP 500: database on fire");
    const noteErr = await rejection(t.notify("notifications/progress", { progressToken: 1, progress: 1 }));
    expect(noteErr).toBeInstanceOf(HttpError);
    expect(noteErr.message).toBe("HTTP 500: database on fire");
    f.set({ status: undefined });
    await expect(t.request("ping")).resolves.toEqual({});
  });

  it.each(["json", "sse"] as const)("propagates an invalid %s body as ParseError", async (mode) => {
    const f = await fixture({ mode });
    const t = await initialized({ url: f.url });
    f.set({ invalidJson: true });
    const err = await rejection(t.request("tools/list"));
    expect(err).toBeInstanceOf(ParseError);
    expect(err.code).toBe("MCPD_PARSE_ERROR");
    f.set({ invalidJson: false });
    await expect(t.request("ping")).resolves.toEqual({});
  });

  it.each([
    ["Content-Length", { mode: "json" as const }],
    ["chunked", { mode: "json" as const, jsonChunked: true }],
    ["SSE event", { mode: "sse" as const }],
  ])("refuses a body over maxBodyBytes (%s) without buffering it", async (_label, opts) => {
    const f = await fixture(opts);
    const t = await initialized({ url: f.url }, { maxBodyBytes: 64 * 1024 });
    const err = await rejection(t.request("tools/call", { name: "big", arguments: { bytes: 1024 * 1024 } }));
    expect(err).toBeInstanceOf(MessageTooLargeError);
    expect(err.message).toMatch(/exceeds the limit of 65536 bytes/);
    await expect(t.request("tools/call", { name: "big", arguments: { bytes: 1000 } })).resolves.toBeDefined();
  });

  it("fails with NoResponseError when a stream ends without the response", async () => {
    const f = await fixture({ mode: "sse" });
    const t = await initialized({ url: f.url });
    f.set({ drop: { afterEvents: 1, times: 1 } });
    let id: unknown;
    const err = await rejection(
      t.request("tools/call", { name: "progress", arguments: { steps: 3 }, _meta: { progressToken: 1 } }, { onRequestId: (x) => (id = x) }),
    );
    expect(err).toBeInstanceOf(NoResponseError);
    expect(err.message).toBe(`No response received for request ID ${id}`);
    // Without event ids there is nothing to resume from: no GET was tried.
    expect(f.received("GET")).toHaveLength(0);
  });

  it("propagates a connection reset and stays usable", async () => {
    const f = await fixture();
    const t = await initialized({ url: f.url });
    f.set({ reset: true });
    const err = await rejection(t.request("tools/list"));
    expect(err).not.toBeInstanceOf(TransportClosedError);
    expect(String(err.code ?? err.message)).toMatch(/UND_ERR_SOCKET|ECONNRESET|other side closed/);
    f.set({ reset: false });
    await expect(t.request("ping")).resolves.toEqual({});
    expect(t.connected).toBe(true);
  });

  it("counts and reports messages that are not JSON-RPC", async () => {
    const f = await fixture({ mode: "sse" });
    const t = await initialized({ url: f.url }, { listenerInitialDelayMs: 10 });
    const errors: Error[] = [];
    t.onError = (e) => errors.push(e);
    t.startSSEListener();
    await waitFor(() => f.listeners.size === 1, { message: "listener attached" });
    f.pushToListeners({ hello: "world" });
    await waitFor(() => errors.length === 1, { message: "onError for a non-JSON-RPC message" });
    expect(errors[0]!.message).toMatch(/Not a JSON-RPC 2.0 message/);
    expect(t.info().droppedMessages).toBe(1);
  });
});

describe("HttpTransport: lifecycle and config", () => {
  it("refuses requests before connect and after close", async () => {
    const f = await fixture();
    const t = new HttpTransport({ type: "http", url: f.url });
    await expect(t.request("ping")).rejects.toBeInstanceOf(TransportClosedError);
    await t.connect();
    await t.close();
    const err = await rejection(t.request("ping"));
    expect(err).toBeInstanceOf(TransportClosedError);
    await expect(t.notify("x")).rejects.toBeInstanceOf(TransportClosedError);
    await expect(t.connect()).rejects.toBeInstanceOf(TransportClosedError);
  });

  it.each([
    [{ type: "http", url: "ftp://x" }, /must use http: or https:/],
    [{ type: "http", url: "not a url" }, /not a valid URL/],
    [{ type: "ws", url: "http://x" }, /"type" must be "http" or "sse"/],
    [{ type: "http", url: "http://x", timeout: -1 }, /"timeout" must be a number/],
    [{ type: "http", url: "http://x", headers: { "Mcp-Session-Id": "x" } }, /set by the transport/],
    [{ type: "http", url: "http://x", headers: { a: 1 } }, /header "a" must be a string/],
  ])("rejects a bad config %j", (config, message) => {
    expect(() => new HttpTransport(config as never)).toThrow(ConfigError);
    expect(() => new HttpTransport(config as never)).toThrow(message);
  });

  it("rejects bad options, naming them", () => {
    expect(() => new HttpTransport({ type: "http", url: "http://x" }, { maxBodyBytes: 0 })).toThrow(
      /"maxBodyBytes" must be an integer >= 1/,
    );
  });
});

describe("the HTTP fixture as a process (for end-to-end tests)", () => {
  it("prints its URL first and serves SSE replies until SIGTERM", async () => {
    const script = fileURLToPath(new URL("../../../tests/fixtures/http/http-fixture.mjs", import.meta.url));
    const child = spawn(process.execPath, [script, "--port", "0", "--sse"], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      const lines = createInterface({ input: child.stdout! });
      const [url] = (await once(lines, "line")) as [string];
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      const t = await initialized({ url });
      let notes = 0;
      t.onNotification = () => notes++;
      await t.request("tools/call", { name: "progress", arguments: { steps: 2 }, _meta: { progressToken: 1 } });
      expect(notes).toBe(2);
      await t.close();
    } finally {
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await exited;
    }
    expect(isAlive(child.pid)).toBe(false);
  });
});
