/**
 * requestControl and requestOnce, one request on a connection of its own, against a real Unix-socket
 * peer: what they send and when (everything in one write, before any answer: one round trip), what they
 * resolve with, every way they fail, and that the connection is closed afterwards.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { McpdStatus, WireCode, type McpdError } from "@mcpd/protocol";
import { requestControl, requestOnce } from "../src/one-request.js";
import { type JsonlPeer, type PeerConn, startPeer, waitFor } from "./jsonl-peer.js";

let peer: JsonlPeer;
let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ peer, dir, cleanup } = await startPeer());
});
afterEach(async () => {
  vi.useRealTimers();
  await cleanup();
});

/**
 * The tests of deadlines that must NOT pass run the SDK's clock by hand (vitest's fake timers: its
 * setTimeout and Date.now), so "2 s went by" is a fact, not a sleep. The sockets and waitFor stay real.
 */
function fakeClock(): void {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
}

/** Whether `p` has settled yet, and how, without awaiting it. */
function track<T>(p: Promise<T>): { settled: boolean; value?: T; error?: McpdError } {
  const state: { settled: boolean; value?: T; error?: McpdError } = { settled: false };
  p.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error: McpdError) => Object.assign(state, { settled: true, error }),
  );
  return state;
}

async function failure(p: Promise<unknown>): Promise<McpdError> {
  try {
    await p;
  } catch (err) {
    return err as McpdError;
  }
  throw new Error("expected a rejection");
}

/**
 * Serves `tools/call` by hand, to a caller whose clock the test runs: `arrived()` waits for the call;
 * `progress(call, ms, n)` moves the caller's clock on by `ms`, sends progress `n`, and waits until the
 * caller saw it (`seen`) or gave the call up; `answer(result)` ends the call.
 */
function servedByHand(seen: number[]) {
  let conn: PeerConn | undefined;
  let token: unknown;
  let answer: (result: object) => void = () => {};
  peer.methods["tools/call"] = (params, c) => {
    conn = c;
    token = params._meta.progressToken;
    return new Promise((r) => (answer = r));
  };
  return {
    arrived: () => waitFor(() => conn, "the call to arrive"),
    async progress(call: { settled: boolean }, ms: number, n: number): Promise<void> {
      vi.advanceTimersByTime(ms);
      conn?.send({ method: "notifications/progress", params: { progressToken: token, progress: n } });
      await waitFor(() => call.settled || seen.includes(n), `progress ${n} at the caller`);
    },
    answer: (result: object) => answer(result),
  };
}

/** Makes `method` wait, before answering, until `conn` has received a message of `later`: a caller that waited for this answer first would never get one. */
function answerOnlyAfter(method: string, later: string, result: object): void {
  peer.methods[method] = (_params, conn: PeerConn) =>
    waitFor(() => conn.received.some((m) => m.method === later), `${later} before the ${method}'s answer`, 10_000).then(
      () => result,
      () => undefined,
    );
}

/** The peer's connections all closed (the caller closed its socket). */
const allClosed = (): Promise<boolean> => waitFor(() => peer.connections.size === 0, "the connection to close");

describe("requestControl", () => {
  it("sends mcpd/select and the request together, before any answer (one round trip), resolves with the result and closes the connection", async () => {
    answerOnlyAfter("mcpd/select", "mcpd/servers", { view: "aggregate" });
    peer.methods["mcpd/servers"] = () => ({ servers: [{ name: "fx" }] });
    const result = await requestControl("mcpd/servers", undefined, { socketPath: peer.socketPath, timeout: 15_000 });
    expect(result).toEqual({ servers: [{ name: "fx" }] });
    expect(peer.received.map((r) => r.msg.method)).toEqual(["mcpd/select", "mcpd/servers"]);
    // Not a session: no initialize, no events asked for, not a control connection unless asked.
    expect(peer.received[0]!.msg.params).toEqual({});
    await allClosed();
  });

  it("opens a control connection when asked, and passes the params of a declared method", async () => {
    peer.methods["mcpd/status"] = (params) => ({ daemon: { pid: 1 }, echoed: params ?? null });
    const status = await requestControl(McpdStatus, undefined, { socketPath: peer.socketPath, control: true });
    expect(status).toMatchObject({ daemon: { pid: 1 }, echoed: null });
    expect(peer.messages("mcpd/select")[0]!.params).toEqual({ control: true });
    peer.methods["mcpd/logs"] = () => ({ lines: [] });
    await requestControl("mcpd/logs", { server: "fx", lines: 3 }, { socketPath: peer.socketPath });
    expect(peer.messages("mcpd/logs")[0]!.params).toEqual({ server: "fx", lines: 3 });
  });

  it("finds the socket from the environment it is given, as connect() does", async () => {
    peer.methods["mcpd/servers"] = () => ({ servers: [] });
    expect(await requestControl("mcpd/servers", undefined, { env: { MCPD_SOCKET: peer.socketPath } })).toEqual({ servers: [] });
  });

  it("rejects with the daemon's error, mapped by data.mcpdCode", async () => {
    peer.methods["mcpd/reload"] = () => ({
      error: { code: WireCode.Forbidden, message: "mcpd/reload needs a control connection", data: { mcpdCode: "MCPD_FORBIDDEN" } },
    });
    const err = await failure(requestControl("mcpd/reload", undefined, { socketPath: peer.socketPath }));
    expect(err.code).toBe("MCPD_FORBIDDEN");
    expect(err.message).toContain("needs a control connection");
    await allClosed();
  });

  it("a failed select is the error, not the request's refusal that follows it", async () => {
    peer.methods["mcpd/select"] = () => ({ error: { code: -32602, message: "bad select", data: { mcpdCode: "MCPD_INVALID_PARAMS" } } });
    peer.methods["mcpd/servers"] = () => ({ error: { code: -32600, message: "this connection has no view" } });
    const err = await failure(requestControl("mcpd/servers", undefined, { socketPath: peer.socketPath }));
    expect(err.message).toBe("bad select");
  });

  it("refuses a method that is not mcpd/... with a TypeError, connecting to nothing", async () => {
    const err = await failure(requestControl("tools/list", undefined, { socketPath: peer.socketPath }));
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toContain('"tools/list" is not an mcpd/* method');
    expect(peer.received).toEqual([]);
  });

  it("MCPD_DAEMON_UNAVAILABLE with the mcpd start hint when no daemon listens", async () => {
    const err = await failure(requestControl("mcpd/status", undefined, { socketPath: path.join(dir, "none.sock") }));
    expect(err.code).toBe("MCPD_DAEMON_UNAVAILABLE");
    expect(err.message).toContain("mcpd start");
    expect(err.message).not.toContain("autostart"); // an option these functions do not have
  });

  it("MCPD_UNTRUSTED_SOCKET when others can write the socket's directory: nothing is sent", async () => {
    fs.chmodSync(dir, 0o777);
    const err = await failure(requestControl("mcpd/status", undefined, { socketPath: peer.socketPath }));
    expect(err.code).toBe("MCPD_UNTRUSTED_SOCKET");
    expect(peer.received).toEqual([]);
  });

  it("MCPD_REQUEST_TIMEOUT when the daemon never answers, and the connection is closed", async () => {
    peer.methods["mcpd/status"] = () => undefined;
    const err = await failure(requestControl("mcpd/status", undefined, { socketPath: peer.socketPath, timeout: 200 }));
    expect(err.code).toBe("MCPD_REQUEST_TIMEOUT");
    expect(err.message).toContain("200ms");
    await allClosed();
  });

  it("over the daemon's connection cap (its reason, then a close, before any answer): that reason is the error, as connect()'s", async () => {
    peer.methods["mcpd/select"] = (_params, conn) => {
      conn.send({
        id: null,
        error: { code: WireCode.TooManyConnections, message: "Too many connections (2)", data: { mcpdCode: "MCPD_TOO_MANY_CONNECTIONS" } },
      });
      conn.socket.end();
      return undefined;
    };
    const err = await failure(requestControl("mcpd/status", undefined, { socketPath: peer.socketPath }));
    expect([err.code, err.message]).toEqual(["MCPD_TOO_MANY_CONNECTIONS", "Too many connections (2)"]);
  });

  it("MCPD_DAEMON_UNAVAILABLE when the daemon hangs up during the handshake (it is going away), as connect()'s", async () => {
    peer.methods["mcpd/select"] = (_params, conn) => {
      conn.socket.destroy();
      return undefined;
    };
    const err = await failure(requestControl("mcpd/status", undefined, { socketPath: peer.socketPath }));
    expect(err.code).toBe("MCPD_DAEMON_UNAVAILABLE");
    expect(err.message).toBe("mcpd closed the connection during the handshake. Start it with `mcpd start`.");
  });

  it("MCPD_CONNECTION_LOST when the daemon closes after the handshake without answering, with its reason as the cause", async () => {
    // On a later tick, once the peer has sent the select's answer: the handshake is over.
    peer.methods["mcpd/status"] = (_params, conn) => {
      setImmediate(() => {
        conn.send({
          id: null,
          error: { code: WireCode.BufferBudgetExceeded, message: "over budget", data: { mcpdCode: "MCPD_BUFFER_BUDGET_EXCEEDED" } },
        });
        conn.socket.end();
      });
      return undefined;
    };
    const err = await failure(requestControl("mcpd/status", undefined, { socketPath: peer.socketPath }));
    expect([err.code, err.message]).toEqual(["MCPD_CONNECTION_LOST", "Connection to mcpd lost: over budget"]);
    expect((err.cause as McpdError).message).toBe("over budget");

    peer.methods["mcpd/status"] = (_params, conn) => {
      setImmediate(() => conn.socket.destroy());
      return undefined;
    };
    const bare = await failure(requestControl("mcpd/status", undefined, { socketPath: peer.socketPath }));
    expect([bare.code, bare.message]).toEqual(["MCPD_CONNECTION_LOST", "Connection to mcpd lost before it answered"]);
  });

  it("a daemon that accepts but never answers (stopped, stuck) is MCPD_DAEMON_UNAVAILABLE after connectTimeout, whatever the request's timeout", async () => {
    peer.methods["mcpd/select"] = () => undefined;
    peer.methods["mcpd/status"] = () => undefined;
    const err = await failure(
      requestControl("mcpd/status", undefined, { socketPath: peer.socketPath, connectTimeout: 300, timeout: 60_000 }),
    );
    expect(err.code).toBe("MCPD_DAEMON_UNAVAILABLE");
    expect(err.message).toBe(`mcpd accepted the connection on ${peer.socketPath} but did not answer within 300 ms (stopped or stuck?)`);
    expect((err.cause as McpdError).code).toBe("MCPD_REQUEST_TIMEOUT");
    await allClosed();
  });

  it("the daemon's refusal of a line of ours it could not read (null id) fails the call at once, instead of at its deadline", async () => {
    peer.methods["mcpd/status"] = (_params, conn) => {
      conn.send({
        id: null,
        error: {
          code: WireCode.MessageTooLarge,
          message: "Line of 5000000 bytes exceeds the limit of 4194304 bytes",
          data: { mcpdCode: "MCPD_MESSAGE_TOO_LARGE" },
        },
      });
      return undefined;
    };
    const err = await failure(requestControl("mcpd/status", undefined, { socketPath: peer.socketPath, timeout: 60_000 }));
    expect([err.code, err.message]).toEqual(["MCPD_MESSAGE_TOO_LARGE", "Line of 5000000 bytes exceeds the limit of 4194304 bytes"]);
    await allClosed();
  });

  it("aborting rejects with MCPD_ABORTED and closes", async () => {
    peer.methods["mcpd/reload"] = () => undefined;
    const ac = new AbortController();
    const pending = requestControl("mcpd/reload", undefined, { socketPath: peer.socketPath, signal: ac.signal });
    await waitFor(() => peer.messages("mcpd/reload")[0], "the request to arrive");
    ac.abort("stop");
    const err = await failure(pending);
    expect([err.code, err.message]).toEqual(["MCPD_ABORTED", "Request aborted: stop"]);
    await allClosed();
  });

  it("refuses a line over maxLineBytes instead of holding it, and closes", async () => {
    peer.methods["mcpd/status"] = () => ({ blob: "x".repeat(10_000) });
    const err = await failure(requestControl("mcpd/status", undefined, { socketPath: peer.socketPath, maxLineBytes: 1_000 }));
    expect(err.code).toBe("MCPD_CONNECTION_LOST");
    expect(err.message).toMatch(/cannot be read: .*1000/);
    await allClosed();
  });

  it("timeout: Infinity is no deadline (regression: a timer that long fires at once)", async () => {
    fakeClock();
    let answer: (result: object) => void = () => {};
    peer.methods["mcpd/status"] = () => new Promise((r) => (answer = r));
    const call = track(requestControl("mcpd/status", undefined, { socketPath: peer.socketPath, timeout: Number.POSITIVE_INFINITY }));
    await waitFor(() => peer.messages("mcpd/status")[0], "the request to arrive");
    // A timer set for Infinity fires after 1 ms (Node's rule, and the fake clock's): 5 s is well past that,
    // and short of the 10 s connect deadline (the select's answer may not have reached the caller yet).
    // A timer that fires does so inside this call.
    vi.advanceTimersByTime(5_000);
    expect(call.error).toBeUndefined();
    answer({ daemon: { pid: 2 } });
    await waitFor(() => call.settled, "the answer");
    expect(call.error).toBeUndefined();
    expect(call.value).toEqual({ daemon: { pid: 2 } });
  });

  it.each([
    [{ timeout: 0 }, "timeout must be a positive number of ms, got 0"],
    [{ connectTimeout: Number.NaN }, "connectTimeout must be a positive number of ms, got NaN"],
    [{ maxLineBytes: 0 }, "maxLineBytes must be a positive integer, got 0"],
    [{ maxLineBytes: 1.5 }, "maxLineBytes must be a positive integer, got 1.5"],
    [{ control: "yes" as unknown as boolean }, 'control must be a boolean, got "yes"'],
  ])(
    "refuses a bad option %o with a TypeError naming it, connecting to nothing (regression: a bad maxLineBytes left a socket open)",
    async (bad, message) => {
      const err = await failure(requestControl("mcpd/status", undefined, { socketPath: peer.socketPath, ...bad }));
      expect(err).toBeInstanceOf(TypeError);
      expect(err.message).toBe(message);
      expect(peer.connections.size).toBe(0);
      expect(peer.received).toEqual([]);
    },
  );
});

describe("requestOnce", () => {
  it("sends the handshake and the request together, before any answer (one round trip), and resolves with the result", async () => {
    answerOnlyAfter("mcpd/select", "tools/call", { view: "aggregate" });
    peer.methods["tools/call"] = (params) => ({ content: [{ type: "text", text: params.arguments.text }] });
    const result = await requestOnce(
      "tools/call",
      { name: "echo", arguments: { text: "hi" } },
      { socketPath: peer.socketPath, timeout: 15_000, clientInfo: { name: "once", version: "1" } },
    );
    expect(result).toEqual({ content: [{ type: "text", text: "hi" }] });
    expect(peer.received.map((r) => r.msg.method)).toEqual(["mcpd/select", "initialize", "notifications/initialized", "tools/call"]);
    expect(peer.messages("initialize")[0]!.params.clientInfo).toEqual({ name: "once", version: "1" });
    await allClosed();
  });

  it("routes to a server with _meta['mcpd/server'], on a control connection when asked", async () => {
    peer.methods["tools/call"] = () => ({ content: [] });
    await requestOnce("tools/call", { name: "echo", arguments: {} }, { socketPath: peer.socketPath, server: "fx", control: true });
    expect(peer.messages("mcpd/select")[0]!.params).toEqual({ control: true });
    expect(peer.messages("tools/call")[0]!.params).toEqual({ name: "echo", arguments: {}, _meta: { "mcpd/server": "fx" } });
  });

  it("reports progress for its request, by the token it sent", async () => {
    peer.methods["tools/call"] = (params, conn) => {
      const token = params._meta.progressToken;
      conn.send({ method: "notifications/progress", params: { progressToken: token, progress: 1, total: 2 } });
      conn.send({ method: "notifications/progress", params: { progressToken: token, progress: 2, total: 2, message: "done" } });
      return { content: [] };
    };
    const seen: unknown[] = [];
    await requestOnce("tools/call", { name: "p" }, { socketPath: peer.socketPath, onProgress: (p) => seen.push(p) });
    expect(seen).toEqual([
      { progress: 1, total: 2 },
      { progress: 2, total: 2, message: "done" },
    ]);
  });

  it("aborting rejects with MCPD_ABORTED and sends notifications/cancelled for the request", async () => {
    peer.methods["tools/call"] = () => undefined;
    const ac = new AbortController();
    const pending = requestOnce("tools/call", { name: "slow" }, { socketPath: peer.socketPath, signal: ac.signal });
    const call = await waitFor(() => peer.messages("tools/call")[0], "the call to arrive");
    ac.abort(new Error("interrupted"));
    const err = await failure(pending);
    expect(err.code).toBe("MCPD_ABORTED");
    await waitFor(() => peer.messages("notifications/cancelled").find((m) => m.params.requestId === call.id), "notifications/cancelled");
    await allClosed();
  });

  it("progress restarts the deadline: a call longer than its timeout that keeps reporting progress completes", async () => {
    fakeClock();
    const seen: number[] = [];
    const served = servedByHand(seen);
    const call = track(
      requestOnce("tools/call", { name: "p" }, { socketPath: peer.socketPath, timeout: 1_500, onProgress: (p) => seen.push(p.progress) }),
    );
    await served.arrived();
    for (let i = 1; i <= 5; i++) await served.progress(call, 400, i);
    expect(call.error).toBeUndefined();
    served.answer({ content: [{ type: "text", text: "late" }] });
    await waitFor(() => call.settled, "the answer");
    expect(call.error).toBeUndefined();
    expect(call.value).toEqual({ content: [{ type: "text", text: "late" }] });
    expect(seen).toEqual([1, 2, 3, 4, 5]); // 2 s in all on the caller's clock, past the 1.5 s deadline
  });

  it("maxTotalTimeout caps a call that progress keeps alive: MCPD_REQUEST_TIMEOUT naming the cap, and the call is cancelled", async () => {
    fakeClock();
    const seen: number[] = [];
    const served = servedByHand(seen);
    const call = track(
      requestOnce(
        "tools/call",
        { name: "p" },
        { socketPath: peer.socketPath, timeout: 2_000, maxTotalTimeout: 800, onProgress: (p) => seen.push(p.progress) },
      ),
    );
    await served.arrived();
    // Progress every 50 ms keeps the 2 s deadline from ever passing; only the cap can end the call (at 800 ms).
    for (let i = 1; i <= 40 && !call.settled; i++) await served.progress(call, 50, i);
    expect(call.settled, "the call still ran after 2 s of progress").toBe(true);
    const err = call.error as McpdError;
    expect([err.code, err.message]).toEqual(["MCPD_REQUEST_TIMEOUT", "Request timeout after 800ms"]);
    expect(seen).toHaveLength(15); // progress 16 came at 800 ms: the cap, not the caller's
    const sent = peer.messages("tools/call")[0]!;
    await waitFor(() => peer.messages("notifications/cancelled").find((m) => m.params.requestId === sent.id), "notifications/cancelled");
  });

  it("the deadline passing rejects with MCPD_REQUEST_TIMEOUT and tells the daemon (notifications/cancelled with the reason)", async () => {
    peer.methods["tools/call"] = () => undefined;
    const err = await failure(requestOnce("tools/call", { name: "slow" }, { socketPath: peer.socketPath, timeout: 200 }));
    expect([err.code, err.message]).toEqual(["MCPD_REQUEST_TIMEOUT", "Request timeout after 200ms"]);
    const call = peer.messages("tools/call")[0]!;
    const cancelled = await waitFor(() => peer.messages("notifications/cancelled")[0], "notifications/cancelled");
    expect(cancelled.params).toEqual({ requestId: call.id, reason: "Request timeout after 200ms" });
    await allClosed();
  });

  it("skips a line it cannot read (another server's notification over maxLineBytes), as a session does, and gets its answer", async () => {
    peer.methods["tools/call"] = (_params, conn) => {
      conn.send({ method: "notifications/message", params: { level: "info", data: "x".repeat(5_000) } });
      return { content: [{ type: "text", text: "fine" }] };
    };
    const result = await requestOnce("tools/call", { name: "x" }, { socketPath: peer.socketPath, maxLineBytes: 1_000 });
    expect(result).toEqual({ content: [{ type: "text", text: "fine" }] });
  });

  it("with no deadline (timeout: Infinity), progress never gives the call up, maxTotalTimeout included (as a session's request)", async () => {
    fakeClock();
    const seen: number[] = [];
    const served = servedByHand(seen);
    const call = track(
      requestOnce(
        "tools/call",
        { name: "p" },
        { socketPath: peer.socketPath, timeout: Number.POSITIVE_INFINITY, maxTotalTimeout: 150, onProgress: (p) => seen.push(p.progress) },
      ),
    );
    await served.arrived();
    for (let i = 1; i <= 4; i++) await served.progress(call, 100, i); // 400 ms, past the 150 ms cap
    expect(call.error).toBeUndefined();
    served.answer({ content: [] });
    await waitFor(() => call.settled, "the answer");
    expect(call.error).toBeUndefined();
    expect(call.value).toEqual({ content: [] });
    expect(seen).toEqual([1, 2, 3, 4]);
  });

  it("answers a request from the daemon with -32601 (it declared nothing to serve) and goes on", async () => {
    peer.methods["tools/call"] = (_params, conn) => {
      conn.send({ id: "s1", method: "roots/list" });
      return waitFor(() => conn.received.find((m) => m.id === "s1"), "the answer to roots/list").then((answer) => ({
        content: [{ type: "text", text: String(answer.error?.code) }],
      }));
    };
    const result = await requestOnce("tools/call", { name: "x" }, { socketPath: peer.socketPath });
    expect(result).toEqual({ content: [{ type: "text", text: "-32601" }] });
  });

  it("a signal aborted already rejects with MCPD_ABORTED before connecting", async () => {
    const ac = new AbortController();
    ac.abort(new Error("no"));
    const err = await failure(requestOnce("tools/call", { name: "x" }, { socketPath: peer.socketPath, signal: ac.signal }));
    expect([err.code, err.message]).toEqual(["MCPD_ABORTED", "Request aborted: no"]);
    expect(peer.received).toEqual([]);
  });

  it("a failed select is the error, not the refusals that follow it", async () => {
    peer.methods["mcpd/select"] = () => ({ error: { code: -32602, message: "bad select", data: { mcpdCode: "MCPD_INVALID_PARAMS" } } });
    peer.methods["tools/call"] = () => ({ error: { code: -32600, message: "this connection has no view" } });
    const err = await failure(requestOnce("tools/call", { name: "x" }, { socketPath: peer.socketPath }));
    expect(err.message).toBe("bad select");
  });

  it("MCPD_DAEMON_UNAVAILABLE with the mcpd start hint when no daemon listens", async () => {
    const err = await failure(requestOnce("tools/list", undefined, { socketPath: path.join(dir, "none.sock") }));
    expect(err.code).toBe("MCPD_DAEMON_UNAVAILABLE");
    expect(err.message).toContain("mcpd start");
  });
});
