import { spawn, type ChildProcess } from "node:child_process";
import { getEventListeners } from "node:events";
import net from "node:net";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import {
  ConfigError,
  HttpError,
  McpRemoteError,
  ParseError,
  PROTOCOL_DEFAULTS,
  ProtocolError,
  RequestTimeoutError,
  TransportClosedError,
  keptResultText,
  type JsonObject,
} from "@mcpd/protocol";
import { WebSocketTransport, type WsTransportOptions } from "../../src/ws/ws-transport.js";
import type { CloseInfo, WsServerConfig } from "../../src/transport.js";
import { startWsFixture, type WsFixture as Fixture, type WsFixtureOptions } from "../../../tests/fixtures/ws/ws-fixture.mjs";
import { waitFor as waitUntil } from "../../../tests/helpers/process.js";

const FIXTURE_PATH = fileURLToPath(new URL("../../../tests/fixtures/ws/ws-fixture.mjs", import.meta.url));

const cleanups: Array<() => Promise<unknown> | unknown> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function fixture(options: WsFixtureOptions = {}): Promise<Fixture> {
  const fx = await startWsFixture(options);
  cleanups.push(() => fx.close());
  return fx;
}

function transport(config: Partial<WsServerConfig> & { url: string }, options?: WsTransportOptions): WebSocketTransport {
  const t = new WebSocketTransport({ type: "ws", ...config }, options);
  cleanups.push(() => t.close());
  return t;
}

async function connected(fx: Fixture, config: Partial<WsServerConfig> = {}, options?: WsTransportOptions) {
  const t = transport({ url: fx.url, ...config }, options);
  const closes: CloseInfo[] = [];
  const errors: Error[] = [];
  t.onClose = (info) => closes.push(info);
  t.onError = (err) => errors.push(err);
  await t.connect();
  return { t, closes, errors };
}

/** Polls until `check` returns a truthy value (every 20 ms, up to 20 s): the shared waitFor. */
function waitFor<T>(check: () => T, what: string, timeoutMs = 20_000): Promise<NonNullable<T>> {
  return waitUntil(check, { message: what, timeoutMs });
}

type Msg = { id?: unknown; method?: string; params?: Record<string, unknown>; result?: unknown; error?: unknown };
const messages = (fx: Fixture) => fx.received.filter((m): m is Msg => typeof m === "object" && m !== null);
const requestTo = (fx: Fixture, method: string) => messages(fx).find((m) => m.method === method && m.id !== undefined);
const cancels = (fx: Fixture) => messages(fx).filter((m) => m.method === "notifications/cancelled");

/** Settles-or-not probe for a promise, without awaiting it. */
function track<T>(promise: Promise<T>) {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error) => Object.assign(state, { settled: true, error }),
  );
  return state;
}

describe("WebSocketTransport: round trips", () => {
  it("runs initialize, notifications/initialized, tools/list and tools/call with integer ids", async () => {
    const fx = await fixture();
    const { t } = await connected(fx);
    expect(t.connected).toBe(true);
    const init = await t.request<{ serverInfo: { name: string } }>("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "test", version: "0" },
    });
    expect(init.serverInfo.name).toBe("ws-fixture");
    await t.notify("notifications/initialized");
    const list = await t.request<{ tools: Array<{ name: string }> }>("tools/list", {});
    expect(list.tools.map((tool) => tool.name)).toEqual(["echo"]);
    const call = await t.request("tools/call", { name: "echo", arguments: { text: "hi there" } });
    expect(call).toEqual({ content: [{ type: "text", text: "hi there" }] });
    // A long answer's result text is kept, for a relay to pass on as the server wrote it.
    const long = "x".repeat(PROTOCOL_DEFAULTS.keepResultMinChars);
    const longCall = await t.request<JsonObject>("tools/call", { name: "echo", arguments: { text: long } });
    expect(keptResultText(longCall)).toBe(JSON.stringify({ content: [{ type: "text", text: long }] }));

    const sent = messages(fx);
    expect(sent.map((m) => m.method)).toEqual(["initialize", "notifications/initialized", "tools/list", "tools/call", "tools/call"]);
    expect(sent.filter((m) => m.id !== undefined).map((m) => m.id)).toEqual([1, 2, 3, 4]);
    expect(t.info()).toEqual({ type: "ws", mode: "websocket", droppedMessages: 0 });
  });

  it("offers subprotocol mcp and sends the configured headers on the upgrade", async () => {
    const fx = await fixture({ token: "s3cret" });
    await connected(fx, { headers: { Authorization: "Bearer s3cret", "X-Agent": "mcpd-test" } });
    const conn = fx.connections[0]!;
    expect(conn.offeredProtocols).toEqual(["mcp"]);
    expect(conn.protocol).toBe("mcp");
    expect(conn.headers.authorization).toBe("Bearer s3cret");
    expect(conn.headers["x-agent"]).toBe("mcpd-test");
  });

  it("answers 500 concurrent requests delivered out of order, with one abort listener on a shared signal", async () => {
    const fx = await fixture();
    const { t } = await connected(fx);
    const shared = new AbortController();
    const total = 500;
    const calls = Array.from({ length: total }, (_, n) => t.request<{ n: number }>("test/hold", { total, n }, { signal: shared.signal }));
    expect(getEventListeners(shared.signal, "abort").length).toBe(1);
    const results = await Promise.all(calls);
    expect(results.map((r) => r.n)).toEqual(Array.from({ length: total }, (_, n) => n));
    expect(getEventListeners(shared.signal, "abort").length).toBe(0);
    // The fixture answered in reverse arrival order, so correlation really was by id.
    expect(
      messages(fx)
        .filter((m) => m.method === "test/hold")
        .map((m) => m.id),
    ).toHaveLength(total);
  });

  it("rejects with McpRemoteError when the server answers a JSON-RPC error", async () => {
    const fx = await fixture();
    const { t } = await connected(fx);
    const error = await t.request("tools/call", { name: "nope" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpRemoteError);
    expect((error as McpRemoteError).rpcCode).toBe(-32602);
    expect((error as Error).message).toBe("MCP error -32602: Unknown tool: nope");
  });
});

describe("WebSocketTransport: server-initiated messages", () => {
  it("delivers server notifications in order with an empty context", async () => {
    const fx = await fixture();
    const { t } = await connected(fx);
    const seen: Array<[string, unknown, unknown]> = [];
    t.onNotification = (method, params, context) => seen.push([method, params, context]);
    await t.request("test/notify", { count: 3 });
    expect(seen).toEqual([0, 1, 2].map((i) => ["notifications/message", { level: "info", data: { i } }, {}]));
  });

  it("answers server requests through onRequest, and -32601 without a handler", async () => {
    const fx = await fixture();
    const { t } = await connected(fx);

    const unhandled = await t.request<{ response: Msg }>("test/server-request", { method: "roots/list" });
    expect(unhandled.response.error).toEqual({ code: -32601, message: "Method not found: roots/list" });

    const asked: Array<[string, unknown]> = [];
    t.onRequest = async (request, context) => {
      asked.push([request.method, context]);
      if (request.method === "roots/list") return { roots: [{ uri: "file:///work", name: "work" }] };
      if (request.method === "ping") return {};
      throw new McpRemoteError({ code: -32602, message: "no such thing" });
    };
    const roots = await t.request<{ response: Msg }>("test/server-request", { method: "roots/list" });
    expect(roots.response).toEqual({ jsonrpc: "2.0", id: "srv-2", result: { roots: [{ uri: "file:///work", name: "work" }] } });
    const ping = await t.request<{ response: Msg }>("test/server-request", { method: "ping" });
    expect(ping.response.result).toEqual({});
    const failed = await t.request<{ response: Msg }>("test/server-request", { method: "sampling/createMessage", params: {} });
    expect(failed.response.error).toEqual({ code: -32602, message: "no such thing" });
    expect(asked).toEqual([
      ["roots/list", {}],
      ["ping", {}],
      ["sampling/createMessage", {}],
    ]);
    // The server got the client's answers on the wire.
    expect(
      messages(fx)
        .filter((m) => typeof m.id === "string")
        .map((m) => m.id),
    ).toEqual(["srv-1", "srv-2", "srv-3", "srv-4"]);
  });

  it("skips and counts bad frames without closing, reporting them to onError", async () => {
    const fx = await fixture();
    const { t, errors, closes } = await connected(fx);
    expect(await t.request("test/bad-frames")).toEqual({ sent: 6 });
    expect(t.info().droppedMessages).toBe(6);
    // Non-JSON text, truncated JSON, binary garbage: ParseError; valid JSON but not JSON-RPC: ProtocolError.
    // The unknown-id response is counted but not reported.
    expect(errors.filter((e) => e instanceof ParseError)).toHaveLength(3);
    expect(errors.filter((e) => e instanceof ProtocolError)).toHaveLength(2);
    expect(errors[0]!.message).toContain(fx.url);
    expect(errors[0]!.message).toContain("this is not json");
    expect(t.connected).toBe(true);
    expect(await t.request("ping")).toEqual({});
    expect(closes).toEqual([]);
  });
});

describe("WebSocketTransport: timeouts and cancellation", () => {
  it("times out with RequestTimeoutError and sends notifications/cancelled with the request's id", async () => {
    const fx = await fixture();
    const { t } = await connected(fx);
    const error = await t.request("test/hang", {}, { timeout: 150 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestTimeoutError);
    expect((error as Error).message).toBe("Request timeout after 150ms");
    const id = requestTo(fx, "test/hang")!.id;
    const cancel = await waitFor(() => cancels(fx)[0], "notifications/cancelled");
    expect(cancel.params).toEqual({ requestId: id, reason: "Request timeout after 150ms" });
  });

  it("uses config.timeout when the call sets none, and never sends notifications/cancelled for initialize", async () => {
    const fx = await fixture({ hangMethods: ["initialize"] });
    const { t } = await connected(fx, { timeout: 120 });
    const error = await t.request("initialize", { protocolVersion: "2025-06-18" }).catch((e: unknown) => e);
    expect((error as Error).message).toBe("Request timeout after 120ms");
    // One ordered socket: a cancel sent after the timeout would reach the server before this ping.
    await t.request("ping");
    expect(messages(fx).map((m) => m.method)).toEqual(["initialize", "ping"]);
  });

  it("timeout 0 disables the deadline", async () => {
    const fx = await fixture();
    const { t } = await connected(fx, { timeout: 100 });
    const forever = track(t.request("test/hang", {}, { timeout: 0 }));
    // The second request's own deadline is the clock: once it expired, 300 ms have passed.
    await expect(t.request("test/hang", {}, { timeout: 300 })).rejects.toBeInstanceOf(RequestTimeoutError);
    expect(forever.settled).toBe(false);
    await t.close();
    await waitFor(() => forever.settled, "the pending request to settle");
    expect(forever.error).toBeInstanceOf(TransportClosedError);
  });

  it("rejects with the caller's abort reason unchanged and sends notifications/cancelled", async () => {
    const fx = await fixture();
    const { t } = await connected(fx);
    const controller = new AbortController();
    const pending = t.request("test/hang", {}, { signal: controller.signal });
    const request = await waitFor(() => requestTo(fx, "test/hang"), "the request to reach the server");
    const reason = new Error("user pressed stop");
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    const cancel = await waitFor(() => cancels(fx)[0], "notifications/cancelled");
    expect(cancel.params).toEqual({ requestId: request.id, reason: "user pressed stop" });
    expect(getEventListeners(controller.signal, "abort").length).toBe(0);
  });

  it("cancels by request id without a signal: rejects with the reason and sends notifications/cancelled", async () => {
    const fx = await fixture();
    const { t } = await connected(fx);
    let id: unknown;
    const pending = t.request("test/hang", {}, { onRequestId: (x) => (id = x) });
    const request = await waitFor(() => requestTo(fx, "test/hang"), "the request to reach the server");
    expect(request.id).toBe(id);
    const reason = new Error("cancelled by id");
    expect(t.cancel(request.id as number, reason)).toBe(true);
    await expect(pending).rejects.toBe(reason);
    const cancel = await waitFor(() => cancels(fx)[0], "notifications/cancelled");
    expect(cancel.params).toEqual({ requestId: request.id, reason: "cancelled by id" });
    expect(t.cancel(request.id as number, reason)).toBe(false);
    expect(await t.request("ping")).toEqual({});
  });

  it("rejects at once for an already-aborted signal without sending anything", async () => {
    const fx = await fixture();
    const { t } = await connected(fx);
    const reason = new Error("too late");
    await expect(t.request("tools/list", {}, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    await t.request("ping");
    expect(messages(fx).map((m) => m.method)).toEqual(["ping"]);
  });
});

describe("WebSocketTransport: payload limit", () => {
  it("accepts frames under maxPayloadBytes and fails the connection on an oversized one", async () => {
    const fx = await fixture();
    const { t, closes, errors } = await connected(fx, {}, { maxPayloadBytes: 2048 });
    const small: unknown[] = [];
    t.onNotification = (_method, params) => small.push(params);
    expect(await t.request("test/huge", { bytes: 1024 })).toEqual({ ok: true });
    expect(small).toHaveLength(1);

    const hanging = t.request("test/hang").catch((e: unknown) => e);
    const error = await t.request("test/huge", { bytes: 8192 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportClosedError);
    expect((error as Error).message).toContain("exceeded maxPayload of 2048 bytes");
    expect(await hanging).toBeInstanceOf(TransportClosedError);
    expect(closes).toHaveLength(1);
    expect(closes[0]!.expected).toBe(false);
    expect(closes[0]!.reason).toContain("1009");
    expect(errors.some((e) => /max payload/i.test(e.message))).toBe(true);
    expect(t.connected).toBe(false);
  });
});

describe("WebSocketTransport: close", () => {
  it("close() is idempotent, rejects pending requests, closes the socket and fires onClose once", async () => {
    const fx = await fixture();
    const { t, closes } = await connected(fx);
    const pending = t.request("test/hang", {}, { timeout: 0 }).catch((e: unknown) => e);
    await waitFor(() => requestTo(fx, "test/hang"), "the request to reach the server");
    await Promise.all([t.close(), t.close()]);
    await t.close();
    const error = await pending;
    expect(error).toBeInstanceOf(TransportClosedError);
    expect((error as Error).message).toBe("Transport closed: closed by client");
    expect(closes).toEqual([{ reason: "closed by client", expected: true }]);
    expect(t.connected).toBe(false);
    await waitFor(() => fx.connections[0]!.closed, "the server to see the close");
    expect(fx.connections[0]!.closed!.code).toBe(1000);
    await expect(t.request("ping")).rejects.toBeInstanceOf(TransportClosedError);
    await expect(t.notify("notifications/initialized")).rejects.toBeInstanceOf(TransportClosedError);
    await expect(t.connect()).rejects.toBeInstanceOf(TransportClosedError);
  });

  it("a server closing the socket mid-request rejects pending requests with the close code and reason", async () => {
    const fx = await fixture();
    const { t, closes } = await connected(fx);
    const pending = t.request("test/hang", {}, { timeout: 20_000 }).catch((e: unknown) => e);
    await waitFor(() => requestTo(fx, "test/hang"), "the request to reach the server");
    const closer = t.request("test/close", { code: 1011, reason: "fixture going away" }, { timeout: 20_000 });
    await expect(closer).rejects.toBeInstanceOf(TransportClosedError);
    const error = await pending;
    expect(error).toBeInstanceOf(TransportClosedError);
    expect((error as TransportClosedError).reason).toBe("WebSocket closed by server (code 1011: fixture going away)");
    expect(closes).toEqual([{ reason: "WebSocket closed by server (code 1011: fixture going away)", expected: false }]);
    expect(t.connected).toBe(false);
    await t.close();
    expect(closes).toHaveLength(1);
  });

  it("a killed server process fails pending requests and fires onClose once (expected: false)", async () => {
    const child: ChildProcess = spawn(process.execPath, [FIXTURE_PATH], { stdio: ["ignore", "pipe", "inherit"] });
    cleanups.push(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    });
    const lines = createInterface({ input: child.stdout! });
    const url = await new Promise<string>((resolve, reject) => {
      lines.once("line", resolve);
      child.once("exit", (code) => reject(new Error(`fixture exited with ${code} before printing its URL`)));
    });
    lines.close();
    expect(url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const t = transport({ url });
    const closes: CloseInfo[] = [];
    t.onClose = (info) => closes.push(info);
    await t.connect();
    expect(await t.request("tools/list")).toHaveProperty("tools");
    const pending = t.request("test/hang", {}, { timeout: 20_000 }).catch((e: unknown) => e);
    child.kill("SIGKILL");
    const error = await pending;
    expect(error).toBeInstanceOf(TransportClosedError);
    expect((error as Error).message).toContain("code 1006");
    expect(closes).toHaveLength(1);
    expect(closes[0]!.expected).toBe(false);
  });
});

describe("WebSocketTransport: connect failures", () => {
  it("connect to a port nothing listens on rejects with TransportClosedError naming the URL", async () => {
    const port = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as net.AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const url = `ws://127.0.0.1:${port}/mcp`;
    const t = transport({ url });
    let closed = 0;
    t.onClose = () => closed++;
    const error = await t.connect().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportClosedError);
    expect((error as Error).message).toContain(`cannot connect to ${url}`);
    expect((error as Error).message).toContain("ECONNREFUSED");
    expect(t.connected).toBe(false);
    await t.close();
    expect(closed).toBe(0);
  });

  it("a 401 upgrade rejection rejects with HttpError carrying status, body and WWW-Authenticate", async () => {
    const fx = await fixture({ token: "s3cret" });
    const t = transport({ url: `${fx.url}?token=wrong`, headers: { Authorization: "Bearer wrong" } });
    const error = await t.connect().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpError);
    const http = error as HttpError;
    expect(http.status).toBe(401);
    expect(http.code).toBe("MCPD_HTTP_ERROR");
    expect(http.wwwAuthenticate).toBe('Bearer realm="ws-fixture"');
    expect(http.message).toBe(
      `WebSocket upgrade to ${fx.url}?<redacted> refused: HTTP 401: missing or wrong bearer token [WWW-Authenticate: Bearer realm="ws-fixture"]`,
    );
    expect(fx.connections).toHaveLength(0);
  });

  it("a server that does not select subprotocol mcp is refused with a clear error", async () => {
    const fx = await fixture({ selectSubprotocol: false });
    const t = transport({ url: fx.url });
    const error = await t.connect().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportClosedError);
    expect((error as Error).message).toBe(`Transport closed: cannot connect to ${fx.url}: Server sent no subprotocol`);
  });

  it("request before connect rejects with TransportClosedError; close() before connect resolves", async () => {
    const fx = await fixture();
    const t = transport({ url: fx.url });
    await expect(t.request("ping")).rejects.toThrow("Transport closed: not connected");
    await t.close();
    await expect(t.connect()).rejects.toBeInstanceOf(TransportClosedError);
    expect(fx.connections).toHaveLength(0);
  });

  it("close() right after connect(), while ws is still being loaded, rejects connect and never opens the socket", async () => {
    const fx = await fixture();
    const t = transport({ url: fx.url });
    let closed = 0;
    t.onClose = () => closed++;
    const connecting = t.connect();
    await t.close();
    await expect(connecting).rejects.toThrow(`closed by client before ${fx.url} was connected`);
    expect(t.connected).toBe(false);
    expect(closed).toBe(0);
    await expect(t.connect()).rejects.toBeInstanceOf(TransportClosedError);
  });

  it("validates its config with errors naming the field", () => {
    const make = (config: Record<string, unknown>, options?: WsTransportOptions) => () =>
      new WebSocketTransport({ type: "ws", ...config } as WsServerConfig, options);
    expect(make({ url: "not a url" })).toThrow(ConfigError);
    expect(make({ url: "ftp://127.0.0.1/x" })).toThrow(/"url" must use ws:, wss:, http: or https:/);
    expect(make({ url: 42 })).toThrow(/"url" must be a ws:\/\/ or wss:\/\/ URL string/);
    expect(make({ url: "ws://127.0.0.1:1/", headers: { "X-A": 1 } })).toThrow(/header "X-A" must be a string/);
    expect(make({ url: "ws://127.0.0.1:1/", timeout: -1 })).toThrow(/"timeout" must be a number of ms >= 0/);
    expect(make({ url: "ws://127.0.0.1:1/" }, { maxPayloadBytes: 0 })).toThrow(/"maxPayloadBytes" must be a positive integer/);
  });
});
