import { describe, expect, it } from "vitest";
import { ParseError, type JsonObject } from "@mcpd/protocol";
import type { MessageContext } from "../../src/transport.js";
import { fixture, initialized, waitFor } from "./http-helpers.js";

const note = (n: number) => ({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: `n${n}` } });

describe("HttpTransport: background SSE listener", () => {
  it("receives server notifications on the GET stream, with the session headers", async () => {
    const f = await fixture();
    const t = await initialized({ url: f.url, headers: { Authorization: "Bearer x" } });
    const seen: Array<{ method: string; params: JsonObject | undefined; context: MessageContext }> = [];
    t.onNotification = (method, params, context) => seen.push({ method, params, context });
    t.startSSEListener();
    t.startSSEListener(); // idempotent
    await waitFor(() => f.listeners.size === 1, { message: "listener attached" });
    f.pushToListeners({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    await waitFor(() => seen.length === 1, { message: "notification delivered" });
    expect(seen[0]).toEqual({ method: "notifications/tools/list_changed", params: undefined, context: { standalone: true } });
    const get = f.received("GET")[0]!;
    expect(get.headers.accept).toBe("text/event-stream");
    expect(get.headers["mcp-session-id"]).toBe(t.info().sessionId);
    expect(get.headers["mcp-protocol-version"]).toBe("2025-06-18");
    expect(get.headers.authorization).toBe("Bearer x");
    expect(f.listenerGets).toBe(1);
    expect(t.listenerState).toBe("running");
  });

  it("answers server requests arriving on the listener by POSTing the result", async () => {
    const f = await fixture();
    const t = await initialized({ url: f.url });
    t.onRequest = async (request, context) => ({ echoed: request.method, related: context.relatedRequestId ?? null });
    t.startSSEListener();
    await waitFor(() => f.listeners.size === 1, { message: "listener attached" });
    const answer = await f.requestOnListeners("roots/list", {});
    expect(answer.result).toEqual({ echoed: "roots/list", related: null });
    const post = f.requests.find((r) => r.method === "POST" && r.body?.id === answer.id)!;
    expect(post.headers["mcp-session-id"]).toBe(t.info().sessionId);
  });

  it("is disabled quietly by a 405", async () => {
    const f = await fixture({ getStatus: 405 });
    const t = await initialized({ url: f.url }, { listenerInitialDelayMs: 1 });
    const errors: Error[] = [];
    t.onError = (e) => errors.push(e);
    t.startSSEListener();
    await waitFor(() => t.listenerState === "disabled", { message: "listener disabled" });
    // Requests still work, no error surfaced, and it never asked again.
    await t.request("ping");
    await t.request("tools/list");
    expect(errors).toEqual([]);
    expect(f.listenerGets).toBe(1);
    expect(t.connected).toBe(true);
  });

  it("reconnects after a drop with Last-Event-ID and the server's retry:", async () => {
    const f = await fixture({ eventIds: true, retryMs: 30 });
    const t = await initialized({ url: f.url });
    const data: unknown[] = [];
    t.onNotification = (_m, params) => data.push(params?.data);
    t.startSSEListener();
    await waitFor(() => f.listeners.size === 1, { message: "listener attached" });
    f.pushToListeners(note(1));
    f.pushToListeners(note(2));
    await waitFor(() => data.length === 2, { message: "two notifications" });
    f.dropListeners();
    await waitFor(() => f.received("GET").length === 2 && f.listeners.size === 1, { message: "listener reconnected" });
    expect(f.received("GET")[1]!.headers["last-event-id"]).toMatch(/^s\d+_2$/);
    f.pushToListeners(note(3));
    await waitFor(() => data.length === 3, { message: "notification after reconnect" });
    expect(data).toEqual(["n1", "n2", "n3"]);
  });

  it("backs off exponentially while the server refuses the stream", async () => {
    const f = await fixture({ getStatus: 503 });
    const t = await initialized({ url: f.url }, { listenerInitialDelayMs: 50, listenerMaxDelayMs: 400 });
    t.startSSEListener();
    await waitFor(() => f.received("GET").length >= 4, { message: "four GET attempts" });
    const at = f.received("GET").map((r) => r.at);
    // Lower bounds only: each wait is at least the backoff delay (50, 100, 200 ms).
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(45);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(95);
    expect(at[3]! - at[2]!).toBeGreaterThanOrEqual(195);
    expect(t.listenerState).toBe("running");
  });

  it("reports an event that is not JSON to onError and keeps the stream", async () => {
    const f = await fixture();
    const t = await initialized({ url: f.url });
    const errors: Error[] = [];
    const data: unknown[] = [];
    t.onError = (e) => errors.push(e);
    t.onNotification = (_m, params) => data.push(params?.data);
    t.startSSEListener();
    await waitFor(() => f.listeners.size === 1, { message: "listener attached" });
    f.pushRawToListeners("{not json");
    f.pushToListeners(note(1));
    await waitFor(() => data.length === 1, { message: "next notification delivered" });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(ParseError);
    expect(f.listenerGets).toBe(1);
  });

  it("stops on close and never reconnects", async () => {
    const f = await fixture({ retryMs: 10 });
    const t = await initialized({ url: f.url });
    t.startSSEListener();
    await waitFor(() => f.listeners.size === 1, { message: "listener attached" });
    await t.close();
    expect(t.listenerState).toBe("stopped");
    await waitFor(() => f.openSockets.size === 0, { message: "listener connection closed" });
    expect(f.listenerGets).toBe(1);
  });
});
