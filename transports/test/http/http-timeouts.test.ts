import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { RequestTimeoutError, TransportClosedError } from "@mcpd/protocol";
import { HttpTransport } from "../../src/http/http-transport.js";
import type { CloseInfo } from "../../src/transport.js";
import { INIT_PARAMS, fixture, initialized, rejection, transport, waitFor } from "./http-helpers.js";

const SLOW = { name: "slow", arguments: { ms: 30_000 } };

describe("HttpTransport: deadlines", () => {
  it("times out while waiting for headers: kind request, and cancels upstream", async () => {
    const f = await fixture({ mode: "json" });
    const t = await initialized({ url: f.url });
    let id: unknown;
    const err = await rejection(t.request("tools/call", SLOW, { timeout: 200, onRequestId: (x) => (id = x) }));
    expect(err).toBeInstanceOf(RequestTimeoutError);
    expect(err).toMatchObject({ kind: "request", timeoutMs: 200, code: "MCPD_REQUEST_TIMEOUT" });
    expect(err.message).toBe("Request timeout after 200ms");
    await waitFor(() => f.cancelled.length === 1, { message: "notifications/cancelled received" });
    expect(f.cancelled[0]).toEqual({ requestId: id, reason: "Request timeout after 200ms" });
  });

  it("times out when headers never arrive, using the config's timeout", async () => {
    const f = await fixture();
    const t = await initialized({ url: f.url, timeout: 250 });
    f.set({ hang: "tools/list" });
    const err = await rejection(t.request("tools/list"));
    expect(err.message).toBe("Request timeout after 250ms");
  });

  it("times out while streaming an SSE reply: kind sse", async () => {
    const f = await fixture({ mode: "sse" });
    const t = await initialized({ url: f.url });
    const err = await rejection(t.request("tools/call", SLOW, { timeout: 200 }));
    expect(err).toBeInstanceOf(RequestTimeoutError);
    expect(err).toMatchObject({ kind: "sse" });
    expect(err.message).toBe("SSE response timeout after 200ms");
    await waitFor(() => f.cancelled.length === 1, { message: "notifications/cancelled received" });
    expect(f.cancelled[0]!.reason).toBe("SSE response timeout after 200ms");
  });

  it("keeps one deadline for the whole reply, however often events arrive", async () => {
    const f = await fixture({ mode: "sse" });
    const t = await initialized({ url: f.url });
    let notes = 0;
    t.onNotification = () => notes++;
    const call = { name: "progress", arguments: { steps: 500, intervalMs: 10 }, _meta: { progressToken: 1 } };
    const err = await rejection(t.request("tools/call", call, { timeout: 400 }));
    expect(err.message).toBe("SSE response timeout after 400ms");
    expect(notes).toBeGreaterThan(0);
  });

  it("times out a notification: Notify timeout", async () => {
    const f = await fixture();
    const t = await initialized({ url: f.url, timeout: 200 });
    f.set({ hang: "notifications/roots/list_changed" });
    const err = await rejection(t.notify("notifications/roots/list_changed"));
    expect(err).toBeInstanceOf(RequestTimeoutError);
    expect(err).toMatchObject({ kind: "notify" });
    expect(err.message).toBe("Notify timeout after 200ms");
  });

  it("lets timeout 0 disable the deadline", async () => {
    const f = await fixture();
    const t = await initialized({ url: f.url, timeout: 50 });
    await expect(t.request("tools/call", { name: "slow", arguments: { ms: 300 } }, { timeout: 0 })).resolves.toBeDefined();
  });

  it("never sends notifications/cancelled for initialize", async () => {
    const f = await fixture();
    f.set({ hang: "initialize" });
    const t = await transport({ url: f.url });
    const err = await rejection(t.request("initialize", INIT_PARAMS, { timeout: 150 }));
    expect(err.message).toBe("Request timeout after 150ms");
    f.set({ hang: undefined });
    await t.request("initialize", INIT_PARAMS);
    // A later timeout does cancel; by the time its cancellation arrived, one for initialize would have too.
    await rejection(t.request("tools/call", SLOW, { timeout: 150 }));
    await waitFor(() => f.cancelled.length >= 1, { message: "cancellation of tools/call" });
    expect(f.received("POST", "notifications/cancelled")).toHaveLength(1);
    expect(f.cancelled[0]!.requestId).toBe(3);
  });
});

describe("HttpTransport: caller aborts", () => {
  it.each(["json", "sse"] as const)("rejects with the caller's reason unchanged and cancels upstream (%s)", async (mode) => {
    const f = await fixture({ mode });
    const t = await initialized({ url: f.url });
    const ac = new AbortController();
    const reason = new Error("user pressed Ctrl-C");
    const pending = t.request("tools/call", SLOW, { signal: ac.signal });
    await waitFor(() => f.received("POST", "tools/call").length === 1, { message: "tools/call reached the server" });
    ac.abort(reason);
    expect(await rejection(pending)).toBe(reason);
    await waitFor(() => f.cancelled.length === 1, { message: "notifications/cancelled received" });
    expect(f.cancelled[0]).toMatchObject({ requestId: f.received("POST", "tools/call")[0]!.body.id, reason: "user pressed Ctrl-C" });
  });

  it.each(["json", "sse"] as const)(
    "cancels by request id without a signal: rejects with the reason and cancels upstream (%s)",
    async (mode) => {
      const f = await fixture({ mode });
      const t = await initialized({ url: f.url });
      let id: unknown;
      const pending = t.request("tools/call", SLOW, { onRequestId: (x) => (id = x) });
      await waitFor(() => f.received("POST", "tools/call").length === 1, { message: "tools/call reached the server" });
      expect(f.received("POST", "tools/call")[0]!.body.id).toBe(id);
      const reason = new Error("cancelled by id");
      expect(t.cancel(id as number, reason)).toBe(true);
      expect(await rejection(pending)).toBe(reason);
      await waitFor(() => f.cancelled.length === 1, { message: "notifications/cancelled received" });
      expect(f.cancelled[0]).toEqual({ requestId: id, reason: "cancelled by id" });
      expect(t.cancel(id as number, reason)).toBe(false);
      await expect(t.request("ping")).resolves.toEqual({});
    },
  );

  it("rethrows the default AbortError object unchanged", async () => {
    const f = await fixture();
    const t = await initialized({ url: f.url });
    const ac = new AbortController();
    const pending = t.request("tools/call", SLOW, { signal: ac.signal });
    await waitFor(() => f.received("POST", "tools/call").length === 1);
    ac.abort();
    const err = await rejection(pending);
    expect(err).toBe(ac.signal.reason);
    expect(err.name).toBe("AbortError");
  });

  it("does not send a request whose signal is already aborted", async () => {
    const f = await fixture();
    const t = await initialized({ url: f.url });
    const reason = new Error("already");
    const err = await rejection(t.request("tools/list", {}, { signal: AbortSignal.abort(reason) }));
    expect(err).toBe(reason);
    expect(f.received("POST", "tools/list")).toHaveLength(0);
  });

  it("puts one listener on a signal shared by concurrent requests, and removes it", async () => {
    const f = await fixture({ mode: "sse" });
    const t = await initialized({ url: f.url });
    const ac = new AbortController();
    // 12: below the 16 connections per origin, so every call is on the wire at once.
    const calls = Array.from({ length: 12 }, () => t.request("tools/call", SLOW, { signal: ac.signal }).catch((e: unknown) => e));
    await waitFor(() => f.received("POST", "tools/call").length === 12, { message: "12 calls in flight" });
    expect(getEventListeners(ac.signal, "abort")).toHaveLength(1);
    const reason = new Error("stop all");
    ac.abort(reason);
    for (const outcome of await Promise.all(calls)) expect(outcome).toBe(reason);

    const other = new AbortController();
    await t.request("ping", {}, { signal: other.signal });
    expect(getEventListeners(other.signal, "abort")).toHaveLength(0);
  });
});

describe("HttpTransport: close", () => {
  it("rejects in-flight requests, sends DELETE with the session, fires onClose once", async () => {
    const f = await fixture({ mode: "sse" });
    const t = await initialized({ url: f.url });
    const sessionId = t.info().sessionId!;
    const closes: CloseInfo[] = [];
    t.onClose = (info) => closes.push(info);
    const inflight = [t.request("tools/call", SLOW), t.request("tools/call", { ...SLOW, arguments: { ms: 20_000 } })].map((p) =>
      p.then(
        () => new Error("resolved") as Error & Record<string, unknown>,
        (e: unknown) => e as Error & Record<string, unknown>,
      ),
    );
    await waitFor(() => f.received("POST", "tools/call").length === 2);
    await Promise.all([t.close(), t.close()]);
    for (const p of inflight) {
      const err = await p;
      expect(err).toBeInstanceOf(TransportClosedError);
      expect(err.code).toBe("MCPD_TRANSPORT_CLOSED");
    }
    const deletes = f.received("DELETE");
    expect(deletes).toHaveLength(1);
    expect(deletes[0]!.headers["mcp-session-id"]).toBe(sessionId);
    expect(f.sessions.has(sessionId)).toBe(false);
    await t.close();
    expect(closes).toEqual([{ reason: "closed by client", expected: true }]);
    expect(t.connected).toBe(false);
    // Every socket of the transport is released.
    await waitFor(() => f.openSockets.size === 0, { message: "all connections closed" });
  });

  it("ignores a 405 to DELETE", async () => {
    const f = await fixture({ deleteStatus: 405 });
    const t = await initialized({ url: f.url });
    await expect(t.close()).resolves.toBeUndefined();
    expect(f.received("DELETE")).toHaveLength(1);
  });

  it("bounds a DELETE that never answers by deleteTimeoutMs", async () => {
    const f = await fixture({ deleteHang: true });
    const t = await initialized({ url: f.url }, { deleteTimeoutMs: 200 });
    await expect(t.close()).resolves.toBeUndefined();
    expect(f.received("DELETE")).toHaveLength(1);
  });

  it("sends no DELETE without a session, and no onClose when never connected", async () => {
    const f = await fixture({ sessions: false });
    const t = await initialized({ url: f.url });
    await t.close();
    expect(f.received("DELETE")).toHaveLength(0);

    const never = new HttpTransport({ type: "http", url: f.url });
    let fired = 0;
    never.onClose = () => fired++;
    await never.close();
    expect(fired).toBe(0);
  });
});
