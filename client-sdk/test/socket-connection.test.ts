import { getEventListeners } from "node:events";
import net from "node:net";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { McpdError } from "@mcpd/protocol";
import { SocketConnection, type SocketConnectionHandlers } from "../src/socket-connection.js";
import { type JsonlPeer, type PeerConn, startPeer, waitFor } from "./jsonl-peer.js";

let peer: JsonlPeer;
let cleanup: () => Promise<void>;
const open: SocketConnection[] = [];

beforeEach(async () => {
  ({ peer, cleanup } = await startPeer());
});
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(open.splice(0).map((c) => c.close()));
  await cleanup();
});

interface Recorded {
  notifications: Array<{ method: string; params: unknown }>;
  requests: Array<{ id: string | number; method: string; params: unknown }>;
  closes: Error[];
}

async function connectTo(limits: Parameters<typeof newConn>[1] = {}): Promise<{ conn: SocketConnection; rec: Recorded }> {
  const socket = await new Promise<net.Socket>((resolve, reject) => {
    const s = net.createConnection(peer.socketPath, () => resolve(s));
    s.once("error", reject);
  });
  return newConn(socket, limits);
}

function newConn(
  socket: net.Socket,
  limits: ConstructorParameters<typeof SocketConnection>[2] = {},
): { conn: SocketConnection; rec: Recorded } {
  const rec: Recorded = { notifications: [], requests: [], closes: [] };
  const handlers: SocketConnectionHandlers = {
    onNotification: (method, params) => rec.notifications.push({ method, params }),
    onRequest: (id, method, params) => rec.requests.push({ id, method, params }),
    onClose: (error) => rec.closes.push(error),
  };
  const conn = new SocketConnection(socket, handlers, limits);
  open.push(conn);
  return { conn, rec };
}

function codeOf(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => "resolved",
    (err: McpdError) => err.code,
  );
}

describe("SocketConnection", () => {
  it("correlates responses split across chunks, several per chunk, after a junk line, with integer ids", async () => {
    peer.methods.a = (_p, conn) => {
      // Answer a and b together once both arrived, in one write split mid-line across two writes.
      conn.socket.write("this is not json\n");
      return undefined;
    };
    peer.methods.b = (_p, conn) => {
      const ids = conn.received.filter((m) => m.method === "a" || m.method === "b").map((m) => m.id);
      const text = ids.map((id) => JSON.stringify({ jsonrpc: "2.0", id, result: { echo: id, text: "é😀" } })).join("\r\n") + "\n";
      const cut = Math.floor(text.length / 2) + 1;
      conn.writeRaw(text.slice(0, cut));
      setImmediate(() => conn.writeRaw(text.slice(cut)));
      return undefined;
    };
    const { conn } = await connectTo();
    const a = conn.request("a", {});
    const b = conn.request("b", {});
    const [ra, rb] = await Promise.all([a, b]);
    const ids = peer.received.map((r) => r.msg.id);
    expect(ids.every((id) => Number.isInteger(id))).toBe(true);
    expect(ra).toEqual({ echo: ids[0], text: "é😀" });
    expect(rb).toEqual({ echo: ids[1], text: "é😀" });
    expect(conn.pendingCount).toBe(0);
  });

  it("rejects with MCPD_REQUEST_TIMEOUT after the deadline and sends notifications/cancelled for that id", async () => {
    peer.methods.hang = () => undefined;
    const { conn } = await connectTo();
    const err = (await conn.request("hang", {}, { timeout: 50 }).catch((e: unknown) => e)) as McpdError;
    expect(err.code).toBe("MCPD_REQUEST_TIMEOUT");
    expect(err.message).toBe("Request timeout after 50ms");
    const sentId = peer.messages("hang")[0]?.id;
    const cancel = await waitFor(() => peer.messages("notifications/cancelled")[0], "cancelled");
    expect(cancel.params.requestId).toBe(sentId);
    expect(conn.pendingCount).toBe(0);
  });

  it("rejects with MCPD_ABORTED carrying the signal's reason as cause, and sends notifications/cancelled", async () => {
    peer.methods.hang = () => undefined;
    const { conn } = await connectTo();
    const ac = new AbortController();
    const p = conn.request("hang", {}, { signal: ac.signal });
    await waitFor(() => peer.messages("hang").length === 1, "request at the peer");
    const reason = new Error("user pressed stop");
    ac.abort(reason);
    const err = (await p.catch((e: unknown) => e)) as McpdError;
    expect(err.code).toBe("MCPD_ABORTED");
    expect(err.cause).toBe(reason);
    const cancel = await waitFor(() => peer.messages("notifications/cancelled")[0], "cancelled");
    expect(cancel.params.requestId).toBe(peer.messages("hang")[0]?.id);
  });

  it("does not send a request whose signal is already aborted", async () => {
    const { conn } = await connectTo();
    const ac = new AbortController();
    ac.abort("early");
    expect(await codeOf(conn.request("x", {}, { signal: ac.signal }))).toBe("MCPD_ABORTED");
    await conn.request("ping");
    expect(peer.messages("x")).toHaveLength(0);
  });

  it("never cancels initialize", async () => {
    peer.methods.initialize = () => undefined;
    const { conn } = await connectTo();
    expect(await codeOf(conn.request("initialize", {}, { timeout: 30 }))).toBe("MCPD_REQUEST_TIMEOUT");
    await conn.request("ping");
    expect(peer.messages("notifications/cancelled")).toHaveLength(0);
  });

  it("routes progress by its own token, restarts the deadline on progress, and passes foreign progress on", async () => {
    // Five progress notifications 400 ms apart: 2 s in all, past the 1.5 s deadline that each one restarts.
    // The test runs the caller's clock (vitest's fake timers: setTimeout and Date.now), so the 2 s are
    // certain and take no time; the socket stays real.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    let served: { conn: PeerConn; token: unknown; id: unknown } | undefined;
    peer.methods.long = (params, conn, msg) => {
      conn.send({ method: "notifications/progress", params: { progressToken: "someone-else", progress: 1 } });
      served = { conn, token: params._meta.progressToken, id: msg.id };
      return undefined;
    };
    const { conn, rec } = await connectTo();
    const seen: unknown[] = [];
    const params = { a: 1 };
    const call = conn.request("long", params, { timeout: 1500, onProgress: (p) => seen.push(p) });
    let settled = false;
    call.then(
      () => (settled = true),
      () => (settled = true),
    );
    const at = await waitFor(() => served, "the request at the peer");
    for (let step = 1; step <= 5; step++) {
      vi.advanceTimersByTime(400);
      at.conn.send({
        method: "notifications/progress",
        params: { progressToken: at.token, progress: step, total: 5, message: `step ${step}` },
      });
      await waitFor(() => settled || seen.length === step, `progress ${step} at the caller`);
    }
    at.conn.send({ id: at.id, result: { done: true } });
    const result = await call;
    expect(result).toEqual({ done: true });
    expect(seen).toEqual([1, 2, 3, 4, 5].map((n) => ({ progress: n, total: 5, message: `step ${n}` })));
    expect(params).toEqual({ a: 1 }); // the caller's params are not mutated
    expect(peer.messages("long")[0]?.params._meta.progressToken).toBe(peer.messages("long")[0]?.id);
    expect(rec.notifications).toEqual([{ method: "notifications/progress", params: { progressToken: "someone-else", progress: 1 } }]);
  });

  it("fails in-flight requests with MCPD_CONNECTION_LOST when the socket closes, calls onClose once, then refuses new ones", async () => {
    peer.methods.hang = () => undefined;
    const { conn, rec } = await connectTo();
    const inflight = [conn.request("hang"), conn.request("hang")];
    await waitFor(() => peer.messages("hang").length === 2, "requests at the peer");
    await peer.stop();
    expect(await Promise.all(inflight.map(codeOf))).toEqual(["MCPD_CONNECTION_LOST", "MCPD_CONNECTION_LOST"]);
    await waitFor(() => rec.closes.length === 1, "onClose");
    expect(conn.closed).toBe(true);
    expect(await codeOf(conn.request("ping"))).toBe("MCPD_CONNECTION_LOST");
    expect(() => conn.notify("x")).toThrow(/lost/);
    expect(rec.closes).toHaveLength(1);
  });

  it("keeps one abort listener per shared signal (2,000 requests in flight) and none after they settle", async () => {
    const { conn } = await connectTo();
    const ac = new AbortController();
    const all = Promise.all(Array.from({ length: 2000 }, () => conn.request("ping", undefined, { signal: ac.signal })));
    expect(getEventListeners(ac.signal, "abort")).toHaveLength(1);
    await all;
    expect(getEventListeners(ac.signal, "abort")).toHaveLength(0);
    expect(conn.pendingCount).toBe(0);
  });

  it("aborts every request sharing a signal", async () => {
    peer.methods.hang = () => undefined;
    const { conn } = await connectTo();
    const ac = new AbortController();
    const calls = Array.from({ length: 3 }, () => codeOf(conn.request("hang", {}, { signal: ac.signal })));
    await waitFor(() => peer.messages("hang").length === 3, "requests at the peer");
    ac.abort();
    expect(await Promise.all(calls)).toEqual(["MCPD_ABORTED", "MCPD_ABORTED", "MCPD_ABORTED"]);
    await waitFor(() => peer.messages("notifications/cancelled").length === 3, "three cancellations");
    expect(getEventListeners(ac.signal, "abort")).toHaveLength(0);
  });

  it("skips an oversized line from the daemon and keeps serving later lines", async () => {
    peer.methods.big = (_p, conn) => {
      conn.writeRaw(JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { data: "x".repeat(5000) } }) + "\n");
      return { ok: true };
    };
    const { conn, rec } = await connectTo({ maxLineBytes: 1024 });
    expect(await conn.request("big")).toEqual({ ok: true });
    expect(rec.notifications).toHaveLength(0);
  });

  it("hands requests from the daemon to onRequest and sends the answers back", async () => {
    const { conn, rec } = await connectTo();
    const [pc] = [...peer.connections];
    pc!.send({ id: "srv-1", method: "roots/list", params: {} });
    await waitFor(() => rec.requests.length === 1, "request");
    expect(rec.requests[0]).toEqual({ id: "srv-1", method: "roots/list", params: {} });
    conn.respond("srv-1", { roots: [] });
    conn.respondError(7, { code: -32601, message: "nope" });
    await waitFor(() => pc!.received.length === 2, "answers at the peer");
    expect(pc!.received).toEqual([
      { jsonrpc: "2.0", id: "srv-1", result: { roots: [] } },
      { jsonrpc: "2.0", id: 7, error: { code: -32601, message: "nope" } },
    ]);
  });

  it("maps the daemon's data.mcpdCode to the error code and keeps upstream errors as MCPD_MCP_ERROR", async () => {
    peer.methods.mine = () => ({ error: { code: -32602, message: "Unknown tool: x", data: { mcpdCode: "MCPD_UNKNOWN_TOOL" } } });
    peer.methods.theirs = () => ({ error: { code: -32000, message: "boom", data: { detail: 1 } } });
    const { conn } = await connectTo();
    const mine = (await conn.request("mine").catch((e: unknown) => e)) as McpdError;
    expect([mine.code, mine.wireCode, mine.message]).toEqual(["MCPD_UNKNOWN_TOOL", -32602, "Unknown tool: x"]);
    const theirs = (await conn.request("theirs").catch((e: unknown) => e)) as McpdError;
    expect([theirs.code, theirs.wireCode, theirs.data]).toEqual(["MCPD_MCP_ERROR", -32000, { detail: 1 }]);
  });

  it("refuses requests past maxPendingRequests with MCPD_QUEUE_FULL", async () => {
    peer.methods.hang = () => undefined;
    const { conn } = await connectTo({ maxPendingRequests: 2 });
    const held = [conn.request("hang"), conn.request("hang")].map(codeOf);
    expect(await codeOf(conn.request("hang"))).toBe("MCPD_QUEUE_FULL");
    await conn.close();
    expect(await Promise.all(held)).toEqual(["MCPD_CONNECTION_LOST", "MCPD_CONNECTION_LOST"]);
  });

  it("rejects a non-positive timeout with a TypeError naming it", async () => {
    const { conn } = await connectTo();
    await expect(conn.request("ping", undefined, { timeout: 0 })).rejects.toThrow(/timeout must be a positive number/);
  });
});
