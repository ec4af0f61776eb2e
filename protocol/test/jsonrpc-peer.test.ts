import { getEventListeners } from "node:events";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { McpRemoteError, QueueFullError, RequestTimeoutError } from "../src/errors.js";
import { Cancellation } from "../src/peer/cancellation.js";
import { JsonRpcPeer } from "../src/peer/jsonrpc-peer.js";
import type { JsonRpcPeerOptions, PeerSink } from "../src/peer/peer-ports.js";
import { SignalFanout } from "../src/peer/signal-fanout.js";
import { silentLogger } from "../src/logger.js";
import type { JsonObject, JsonRpcMessage } from "../src/types.js";

/** A sink that records what the peer sends; `fail` makes the next sends throw it. */
class RecordingSink implements PeerSink {
  readonly sent: Array<JsonRpcMessage & { id?: unknown; method?: string; params?: JsonObject }> = [];
  readonly abandoned: Array<{ id: number; reason: unknown }> = [];
  fail: Error | undefined;
  /** What abandon() answers: did the other side see the request? */
  seen = true;
  send(message: JsonRpcMessage): void {
    if (this.fail) throw this.fail;
    this.sent.push(message as never);
  }
  abandon(id: number, reason: unknown): boolean {
    this.abandoned.push({ id, reason });
    return this.seen;
  }
  cancels(): unknown[] {
    return this.sent.filter((m) => m.method === "notifications/cancelled").map((m) => m.params);
  }
}

function makePeer(options: Partial<JsonRpcPeerOptions> = {}): { peer: JsonRpcPeer; sink: RecordingSink } {
  const sink = new RecordingSink();
  return { peer: new JsonRpcPeer({ sink, defaultTimeoutMs: 0, ...options }), sink };
}

/** The rejection of `promise`, failing the test if it resolves. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (err: unknown) => err,
  );
}

describe("JsonRpcPeer: requests", () => {
  it("allocates integer ids from 1, reports them before sending, and resolves each with its own result", async () => {
    const { peer, sink } = makePeer();
    const seen: unknown[] = [];
    const a = peer.request("a", { x: 1 }, { onRequestId: (id) => seen.push(["a", id, sink.sent.length]) });
    const b = peer.request("b", undefined, { onRequestId: (id) => seen.push(["b", id, sink.sent.length]) });
    expect(seen).toEqual([
      ["a", 1, 0],
      ["b", 2, 1],
    ]);
    expect(sink.sent).toEqual([
      { jsonrpc: "2.0", id: 1, method: "a", params: { x: 1 } },
      { jsonrpc: "2.0", id: 2, method: "b" },
    ]);
    expect(peer.pendingCount).toBe(2);
    expect(peer.receive({ jsonrpc: "2.0", id: 2, result: { b: true } })).toBe(true);
    expect(peer.receive({ jsonrpc: "2.0", id: 1, error: { code: -32000, message: "boom" } })).toBe(true);
    await expect(b).resolves.toEqual({ b: true });
    const err = await rejection(a);
    expect(err).toBeInstanceOf(McpRemoteError);
    expect((err as Error).message).toBe("MCP error -32000: boom");
    expect(peer.pendingCount).toBe(0);
  });

  it("reports responses with unknown ids, and says false for values that are not JSON-RPC", () => {
    const unknown: unknown[] = [];
    const { peer } = makePeer({ onUnknownResponse: (id) => unknown.push(id) });
    expect(peer.receive({ jsonrpc: "2.0", id: 7, result: {} })).toBe(true);
    expect(peer.receive({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error" } })).toBe(true);
    expect(unknown).toEqual([7, null]);
    expect(peer.receive({ hello: "world" })).toBe(false);
    expect(peer.receive([1, 2])).toBe(false);
  });

  it("rejects with what the sink threw, keeping nothing pending", async () => {
    const { peer, sink } = makePeer({ defaultTimeoutMs: 1000 });
    sink.fail = new QueueFullError("full");
    await expect(peer.request("x")).rejects.toBe(sink.fail);
    expect(peer.pendingCount).toBe(0);
  });

  it("rejects a request whose asynchronous send failed", async () => {
    const failure = new Error("socket gone");
    const peer = new JsonRpcPeer({ sink: { send: () => Promise.reject(failure) }, defaultTimeoutMs: 0 });
    await expect(peer.request("x")).rejects.toBe(failure);
    expect(peer.pendingCount).toBe(0);
  });

  it("refuses a bad timeout through checkTimeout, before allocating an id", async () => {
    const { peer, sink } = makePeer();
    await expect(peer.request("x", {}, { timeout: -1 })).rejects.toThrow(/timeout must be a number of ms >= 0/);
    const custom = new JsonRpcPeer({
      sink,
      defaultTimeoutMs: 0,
      checkTimeout: (ms) => {
        if (!((ms as number) > 0)) throw new TypeError("positive please");
      },
    });
    await expect(custom.request("x", {}, { timeout: 0 })).rejects.toThrow("positive please");
    expect(sink.sent).toEqual([]);
  });

  it("answers requests from the other side through onRequest, -32601 without a handler, errors as wire errors", async () => {
    const { peer, sink } = makePeer();
    peer.receive({ jsonrpc: "2.0", id: "s1", method: "roots/list" });
    peer.onRequest = async (request, context) => ({ got: request.method, related: context.relatedRequestId ?? null });
    peer.receive({ jsonrpc: "2.0", id: "s2", method: "roots/list" }, { relatedRequestId: 4 });
    peer.onRequest = async () => {
      throw new McpRemoteError({ code: -32602, message: "bad params" });
    };
    peer.receive({ jsonrpc: "2.0", id: "s3", method: "sampling/createMessage" });
    await vi.waitFor(() => expect(sink.sent).toHaveLength(3));
    expect(sink.sent).toEqual([
      { jsonrpc: "2.0", id: "s1", error: { code: -32601, message: "Method not found: roots/list" } },
      { jsonrpc: "2.0", id: "s2", result: { got: "roots/list", related: 4 } },
      { jsonrpc: "2.0", id: "s3", error: { code: -32602, message: "bad params" } },
    ]);
  });

  it("hands notifications to onNotification with their context, and survives a handler that throws", () => {
    const { peer } = makePeer();
    const seen: unknown[] = [];
    peer.onNotification = (method, params, context) => {
      seen.push([method, params, context]);
      throw new Error("handler bug");
    };
    expect(peer.receive({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info" } }, { relatedRequestId: 3 })).toBe(
      true,
    );
    expect(seen).toEqual([["notifications/message", { level: "info" }, { relatedRequestId: 3 }]]);
  });
});

/** A reply object that records how each request ended, in order. */
class RecordingReply {
  readonly ended: Array<["resolve" | "reject", unknown]> = [];
  resolve(result: unknown): void {
    this.ended.push(["resolve", result]);
  }
  reject(reason: unknown): void {
    this.ended.push(["reject", reason]);
  }
  /** The reason of its one rejection (the test fails otherwise). */
  reason(): Error {
    expect(this.ended.map(([kind]) => kind)).toEqual(["reject"]);
    return (this.ended[0] as [string, Error])[1];
  }
}

describe("JsonRpcPeer.call: a request without a promise", () => {
  it("tells the reply object the result or the error answer, once, as request() would resolve or reject", () => {
    const { peer, sink } = makePeer();
    const a = new RecordingReply();
    const b = new RecordingReply();
    const ids: unknown[] = [];
    peer.call("a", { x: 1 }, { onRequestId: (id) => ids.push(id) }, a);
    peer.call("b", undefined, undefined, b);
    expect(ids).toEqual([1]);
    expect(sink.sent).toEqual([
      { jsonrpc: "2.0", id: 1, method: "a", params: { x: 1 } },
      { jsonrpc: "2.0", id: 2, method: "b" },
    ]);
    peer.receive({ jsonrpc: "2.0", id: 1, result: { a: true } });
    peer.receive({ jsonrpc: "2.0", id: 2, error: { code: -32000, message: "boom" } });
    // A second answer to the same id is unknown: the reply hears nothing more.
    peer.receive({ jsonrpc: "2.0", id: 1, result: { again: true } });
    expect(a.ended).toEqual([["resolve", { a: true }]]);
    expect(b.reason()).toBeInstanceOf(McpRemoteError);
    expect(peer.pendingCount).toBe(0);
  });

  it("refuses before call() returns: an aborted signal, a cancelled cancellation, a bad timeout, a sink that throws", () => {
    const { peer, sink } = makePeer();
    const replies = Array.from({ length: 4 }, () => new RecordingReply());
    const [aborted, cancelled, badTimeout, thrown] = replies as [RecordingReply, RecordingReply, RecordingReply, RecordingReply];
    peer.call("m", undefined, { signal: AbortSignal.abort(new Error("gone")) }, aborted);
    const c = new Cancellation();
    c.cancel(new Error("cancelled first"));
    peer.call("m", undefined, { cancellation: c }, cancelled);
    peer.call("m", undefined, { timeout: -1 }, badTimeout);
    expect(sink.sent).toEqual([]);
    sink.fail = new QueueFullError("full");
    peer.call("m", undefined, undefined, thrown);
    expect(replies.map((r) => r.ended.length)).toEqual([1, 1, 1, 1]);
    expect(aborted.reason().message).toBe("gone");
    expect(cancelled.reason().message).toBe("cancelled first");
    expect(badTimeout.reason()).toBeInstanceOf(RangeError);
    expect(thrown.reason()).toBeInstanceOf(QueueFullError);
    expect(peer.pendingCount).toBe(0);
  });

  it("a reply that throws costs a log line: the other requests settled by the same close still hear", () => {
    const warnings: unknown[] = [];
    const log = { ...silentLogger, warn: (fields: unknown, msg?: string) => warnings.push([fields, msg]) };
    const { peer } = makePeer({ log: log as never });
    const throwing = {
      resolve: () => {
        throw new Error("reply bug");
      },
      reject: () => {
        throw new Error("reply bug");
      },
    };
    const after = new RecordingReply();
    peer.call("first", undefined, undefined, throwing);
    peer.call("second", undefined, undefined, after);
    expect(() => peer.receive({ jsonrpc: "2.0", id: 1, result: {} })).not.toThrow();
    peer.call("third", undefined, undefined, throwing);
    expect(() => peer.close(() => new Error("closed"))).not.toThrow();
    expect(after.ended.map(([kind]) => kind)).toEqual(["reject"]);
    expect(warnings).toHaveLength(2);
    expect(JSON.stringify(warnings[0])).toContain("reply bug");
  });
});

describe("JsonRpcPeer: deadlines, cancellation and close", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("rejects at the deadline with RequestTimeoutError and sends notifications/cancelled for that id", async () => {
    const { peer, sink } = makePeer({ defaultTimeoutMs: 30_000 });
    const call = peer.request("tools/call", {}, { timeout: 100 });
    const defaulted = peer.request("tools/list");
    const outcome = rejection(call);
    vi.advanceTimersByTime(100);
    const err = await outcome;
    expect(err).toBeInstanceOf(RequestTimeoutError);
    expect((err as Error).message).toBe("Request timeout after 100ms");
    expect(sink.cancels()).toEqual([{ requestId: 1, reason: "Request timeout after 100ms" }]);
    expect(sink.abandoned.map((a) => a.id)).toEqual([1]);
    // The late answer is unknown now; the other request still has its default deadline.
    expect(peer.receive({ jsonrpc: "2.0", id: 1, result: {} })).toBe(true);
    const late = rejection(defaulted);
    vi.advanceTimersByTime(30_000);
    expect(((await late) as Error).message).toBe("Request timeout after 30000ms");
  });

  it("uses timeoutError for the deadline's error, and treats 0 and Infinity as no deadline", async () => {
    const { peer } = makePeer({ defaultTimeoutMs: 50, timeoutError: (ms, id) => new Error(`deadline ${ms} for ${id}`) });
    const outcome = rejection(peer.request("a"));
    const none = peer.request("b", {}, { timeout: 0 });
    const infinite = peer.request("c", {}, { timeout: Number.POSITIVE_INFINITY });
    vi.advanceTimersByTime(60 * 60_000);
    expect(((await outcome) as Error).message).toBe("deadline 50 for 1");
    expect(peer.pendingCount).toBe(2);
    peer.receive({ jsonrpc: "2.0", id: 2, result: {} });
    peer.receive({ jsonrpc: "2.0", id: 3, result: {} });
    await Promise.all([none, infinite]);
  });

  it("cancels by id: rejects with the reason, tells the sink, sends notifications/cancelled; false once settled", async () => {
    const { peer, sink } = makePeer();
    let id: unknown;
    const call = peer.request("tools/call", {}, { onRequestId: (x) => (id = x) });
    const reason = new Error("user gave up");
    expect(peer.cancel(id as number, reason)).toBe(true);
    expect(await rejection(call)).toBe(reason);
    expect(sink.abandoned).toEqual([{ id: 1, reason }]);
    expect(sink.cancels()).toEqual([{ requestId: 1, reason: "user gave up" }]);
    expect(peer.cancel(id as number, reason)).toBe(false);
    expect(peer.cancel("1", reason)).toBe(false);
  });

  it("sends no notifications/cancelled for initialize, nor for a request the other side never saw", async () => {
    const { peer, sink } = makePeer();
    const init = rejection(peer.request("initialize", {}, { timeout: 10 }));
    vi.advanceTimersByTime(10);
    await init;
    sink.seen = false;
    const unseen = rejection(peer.request("tools/call", {}, { timeout: 10 }));
    vi.advanceTimersByTime(10);
    await unseen;
    expect(sink.abandoned.map((a) => a.id)).toEqual([1, 2]);
    expect(sink.cancels()).toEqual([]);
  });

  it("Cancellation: before sending it refuses to send; afterwards it cancels by id without any AbortSignal", async () => {
    const { peer, sink } = makePeer();
    const early = new Cancellation();
    early.cancel("too early");
    await expect(peer.request("x", {}, { cancellation: early })).rejects.toBe("too early");
    expect(sink.sent).toEqual([]);

    const c = new Cancellation();
    const call = peer.request("tools/call", {}, { cancellation: c });
    c.cancel("stop");
    expect(await rejection(call)).toBe("stop");
    expect(sink.cancels()).toEqual([{ requestId: 1, reason: "stop" }]);

    // Settled first: a later cancel reaches nobody.
    const done = new Cancellation();
    const answered = peer.request("ping", {}, { cancellation: done });
    peer.receive({ jsonrpc: "2.0", id: 2, result: {} });
    await answered;
    done.cancel("late");
    expect(sink.cancels()).toHaveLength(1);
  });

  it("keeps one abort listener per shared signal, aborts every request on it, and removes the listener", async () => {
    const { peer, sink } = makePeer();
    const shared = new AbortController();
    const other = new AbortController();
    const calls = Array.from({ length: 50 }, () => rejection(peer.request("tools/call", {}, { signal: shared.signal })));
    const kept = peer.request("ping", {}, { signal: other.signal });
    expect(getEventListeners(shared.signal, "abort")).toHaveLength(1);
    expect(getEventListeners(other.signal, "abort")).toHaveLength(1);
    expect(peer.signalsWatched).toBe(2);
    const reason = new Error("stop all");
    shared.abort(reason);
    for (const err of await Promise.all(calls)) expect(err).toBe(reason);
    expect(sink.cancels()).toHaveLength(50);
    expect(getEventListeners(shared.signal, "abort")).toHaveLength(0);
    peer.receive({ jsonrpc: "2.0", id: 51, result: {} });
    await kept;
    expect(getEventListeners(other.signal, "abort")).toHaveLength(0);
    expect(peer.signalsWatched).toBe(0);
  });

  it("rejects at once, sending nothing, when the signal is already aborted; abortError shapes the rejection", async () => {
    const { peer, sink } = makePeer({ abortError: (signal) => new Error(`aborted: ${String(signal.reason)}`) });
    await expect(peer.request("x", {}, { signal: AbortSignal.abort("early") })).rejects.toThrow("aborted: early");
    const ac = new AbortController();
    const call = rejection(peer.request("y", {}, { signal: ac.signal }));
    ac.abort("later");
    expect(((await call) as Error).message).toBe("aborted: later");
    expect(sink.sent.map((m) => m.method)).toEqual(["y", "notifications/cancelled"]);
    expect(sink.cancels()).toEqual([{ requestId: 1, reason: "aborted: later" }]);
  });

  it("close rejects every pending request with a fresh error each and sends nothing afterwards", async () => {
    const { peer, sink } = makePeer({ defaultTimeoutMs: 1000 });
    const ac = new AbortController();
    const calls = [peer.request("a", {}, { signal: ac.signal }), peer.request("b")].map(rejection);
    let n = 0;
    peer.close(() => new Error(`closed ${++n}`));
    expect((await Promise.all(calls)).map((e) => (e as Error).message)).toEqual(["closed 1", "closed 2"]);
    expect(peer.closed).toBe(true);
    expect(peer.pendingCount).toBe(0);
    expect(getEventListeners(ac.signal, "abort")).toHaveLength(0);
    vi.advanceTimersByTime(5000);
    peer.receive({ jsonrpc: "2.0", id: "s", method: "roots/list" });
    await Promise.resolve();
    expect(sink.sent.map((m) => m.method)).toEqual(["a", "b"]);
  });

  it("routes progress by its token, restarts the deadline on each, and ends the request past the maximum total", async () => {
    const { peer, sink } = makePeer();
    const seen: unknown[] = [];
    const params = { a: 1 };
    const call = peer.request("long", params, { timeout: 1000, maxTotalTimeout: 5000, onProgress: (p) => seen.push(p.progress) });
    expect(sink.sent[0]).toMatchObject({ id: 1, params: { a: 1, _meta: { progressToken: 1 } } });
    expect(params).toEqual({ a: 1 });
    const outcome = rejection(call);
    // Four progress notifications 900 ms apart: each restarts the 1000 ms deadline.
    for (let step = 1; step <= 4; step++) {
      vi.advanceTimersByTime(900);
      expect(peer.receive({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: step } })).toBe(true);
    }
    expect(peer.pendingCount).toBe(1);
    // Foreign progress goes to onNotification.
    const foreign: unknown[] = [];
    peer.onNotification = (_method, p) => foreign.push(p?.progressToken);
    peer.receive({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "other", progress: 1 } });
    expect(foreign).toEqual(["other"]);
    // 3.6 s in; at 5.4 s the maximum total has passed: that progress ends the request.
    vi.advanceTimersByTime(900);
    peer.receive({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: 5 } });
    vi.advanceTimersByTime(900);
    peer.receive({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: 6 } });
    const err = await outcome;
    expect(err).toBeInstanceOf(RequestTimeoutError);
    expect((err as Error).message).toBe("Request timeout after 5000ms");
    expect(seen).toEqual([1, 2, 3, 4, 5]);
  });

  it("without a reset, progress leaves the deadline alone", async () => {
    const { peer } = makePeer();
    const seen: unknown[] = [];
    const outcome = rejection(
      peer.request("long", {}, { timeout: 1000, resetTimeoutOnProgress: false, onProgress: (p) => seen.push(p.progress) }),
    );
    vi.advanceTimersByTime(900);
    peer.receive({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: 1 } });
    vi.advanceTimersByTime(100);
    expect(((await outcome) as Error).message).toBe("Request timeout after 1000ms");
    expect(seen).toEqual([1]);
  });
});

describe("SignalFanout", () => {
  it("calls back each member once per abort and drops the listener with the last member", () => {
    const aborted: Array<[string, unknown]> = [];
    const fanout = new SignalFanout<string>((member, signal) => aborted.push([member, signal.reason]));
    const ac = new AbortController();
    fanout.add(ac.signal, "a");
    fanout.add(ac.signal, "b");
    fanout.add(ac.signal, "c");
    fanout.remove(ac.signal, "c");
    expect(getEventListeners(ac.signal, "abort")).toHaveLength(1);
    ac.abort("why");
    expect(aborted).toEqual([
      ["a", "why"],
      ["b", "why"],
    ]);
    expect(fanout.size).toBe(0);
    const quiet = new AbortController();
    fanout.add(quiet.signal, "d");
    fanout.remove(quiet.signal, "d");
    expect(getEventListeners(quiet.signal, "abort")).toHaveLength(0);
    expect(fanout.size).toBe(0);
  });
});
