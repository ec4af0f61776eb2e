import { getEventListeners } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { McpRemoteError, RequestTimeoutError, TransportClosedError, type JsonObject, type JsonRpcRequest } from "@mcpd/protocol";
import type { CloseInfo } from "../../src/transport.js";
import { Harness, callTool, initialize, isAlive, readLog, readPid, textOf, waitFor, waitForLogged } from "./stdio-helpers.js";

const h = new Harness();
const NODE_BIN = process.execPath;
afterEach(() => h.cleanup());

describe("StdioTransport: messaging", () => {
  it("initializes and calls a tool, with integer ids from 1", async () => {
    const { t, log } = await h.fixture(["--name", "alpha"]);
    const init = await initialize(t);
    expect(init.serverInfo.name).toBe("alpha");
    expect(init.protocolVersion).toBe("2025-11-25");
    expect(textOf(await callTool(t, "add", { a: 2, b: 40 }))).toBe("42");
    const requests = readLog(log).filter((m) => m.id !== undefined);
    expect(requests.map((m) => m.id)).toEqual([1, 2]);
    expect(readLog(log).map((m) => m.method)).toEqual(["initialize", "notifications/initialized", "tools/call"]);
    expect(t.info()).toMatchObject({ type: "stdio", mode: "stdio", pid: t.pid, droppedMessages: 0 });
  });

  it("correlates 1,000 concurrent requests answered out of order", async () => {
    const { t } = await h.fixture();
    await initialize(t);
    const order: number[] = [];
    const calls = Array.from({ length: 1000 }, (_, i) =>
      callTool(t, "slow", { ms: Math.floor(Math.random() * 200), text: `r${i}` }).then((r) => {
        order.push(i);
        return textOf(r);
      }),
    );
    const texts = await Promise.all(calls);
    for (const [i, text] of texts.entries()) expect(text).toBe(`r${i}`);
    // The server answered in its own order, not ours: correlation is by id, not by position.
    expect(order).not.toEqual([...order].sort((a, b) => a - b));
    expect(t.pendingCount).toBe(0);
  });

  it("skips garbage, partial JSON, non-JSON-RPC and a 10 MiB line between two valid responses", async () => {
    const { t } = await h.fixture();
    const errors: Error[] = [];
    t.onError = (err) => errors.push(err);
    await initialize(t);
    const first = callTool(t, "echo", { text: "before" });
    const second = callTool(t, "noise", { bytes: 10 * 1024 * 1024 });
    expect(textOf(await first)).toBe("before");
    expect(textOf(await second)).toBe("noise done");
    expect(textOf(await callTool(t, "echo", { text: "after" }))).toBe("after");
    // garbage line, partial JSON line, JSON that is not JSON-RPC, the oversized line.
    expect(t.info().droppedMessages).toBe(4);
    expect(errors.map((e) => (e as { code?: string }).code).sort()).toEqual(
      ["MCPD_MESSAGE_TOO_LARGE", "MCPD_PARSE_ERROR", "MCPD_PARSE_ERROR", "MCPD_PROTOCOL_VIOLATION"].sort(),
    );
    expect(t.readBufferedBytes).toBe(0);
    expect(t.connected).toBe(true);
  });

  it("keeps working when every response is preceded by noise (--noise)", async () => {
    const { t } = await h.fixture(["--noise"]);
    await initialize(t);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => callTool(t, "echo", { text: `n${i}` })));
    expect(results.map(textOf)).toEqual(Array.from({ length: 20 }, (_, i) => `n${i}`));
    // Three noise lines before each of the 21 responses (initialize + 20 calls).
    expect(t.info().droppedMessages).toBe(21 * 3);
  });

  it("delivers notifications to onNotification and answers errors as McpRemoteError", async () => {
    const { t } = await h.fixture();
    const seen: Array<[string, JsonObject | undefined]> = [];
    t.onNotification = (method, params) => seen.push([method, params]);
    await initialize(t);
    expect(textOf(await callTool(t, "log", { level: "warning", message: "hello" }))).toBe("logged");
    const progress = await t.request("tools/call", {
      name: "progress",
      arguments: { steps: 3, intervalMs: 1 },
      _meta: { progressToken: "tok" },
    });
    expect(textOf(progress)).toBe("done");
    expect(seen).toEqual([
      ["notifications/message", { level: "warning", logger: "fixture", data: "hello" }],
      ["notifications/progress", { progressToken: "tok", progress: 1, total: 3 }],
      ["notifications/progress", { progressToken: "tok", progress: 2, total: 3 }],
      ["notifications/progress", { progressToken: "tok", progress: 3, total: 3 }],
    ]);
    const err = await t.request("no/such/method").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpRemoteError);
    expect((err as McpRemoteError).rpcCode).toBe(-32601);
    expect((err as Error).message).toBe("MCP error -32601: Method not found: no/such/method");
  });
});

describe("StdioTransport: timeouts and cancellation", () => {
  it("times out with RequestTimeoutError, empties the pending map and sends notifications/cancelled", async () => {
    const { t, log } = await h.fixture();
    await initialize(t);
    const err = await callTool(t, "slow", { ms: 60_000, text: "late" }, { timeout: 100 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RequestTimeoutError);
    expect((err as RequestTimeoutError).code).toBe("MCPD_REQUEST_TIMEOUT");
    expect((err as Error).message).toBe("Request timeout after 100ms");
    expect(t.pendingCount).toBe(0);
    const call = readLog(log).find((m) => m.method === "tools/call");
    const cancel = await waitForLogged(log, (m) => m.method === "notifications/cancelled", "notifications/cancelled");
    expect(cancel.params).toEqual({ requestId: call?.id, reason: "Request timeout after 100ms" });
    // The transport stays usable.
    expect(textOf(await callTool(t, "echo", { text: "still here" }))).toBe("still here");
  });

  it("uses config.timeout when the call sets none, and timeout 0 disables the deadline", async () => {
    const { t } = await h.fixture([], {}, { timeout: 150 });
    // Node's start-up can take longer than 150 ms on a loaded machine: give the handshake its own deadline.
    await initialize(t, { timeout: 20_000 });
    const err = await callTool(t, "slow", { ms: 60_000 }).catch((e: unknown) => e);
    expect((err as Error).message).toBe("Request timeout after 150ms");
    expect(textOf(await callTool(t, "slow", { ms: 400, text: "no deadline" }, { timeout: 0 }))).toBe("no deadline");
    expect(textOf(await callTool(t, "slow", { ms: 400, text: "infinite" }, { timeout: Infinity }))).toBe("infinite");
  });

  it("cancels by request id without a signal: rejects with the reason and sends notifications/cancelled", async () => {
    const { t, log } = await h.fixture();
    await initialize(t);
    let id: number | string | undefined;
    const pending = t.request("tools/call", { name: "slow", arguments: { ms: 60_000 } }, { onRequestId: (i) => (id = i) });
    const call = await waitForLogged(log, (m) => m.method === "tools/call", "tools/call");
    expect(id).toBe(call.id);
    const reason = new Error("cancelled by id");
    expect(t.cancel(id!, reason)).toBe(true);
    await expect(pending).rejects.toBe(reason);
    expect(t.pendingCount).toBe(0);
    const cancel = await waitForLogged(log, (m) => m.method === "notifications/cancelled", "notifications/cancelled");
    expect(cancel.params).toMatchObject({ requestId: call.id, reason: "cancelled by id" });
    expect(t.cancel(id!, reason)).toBe(false);
  });

  it("rejects with the abort reason unchanged and sends notifications/cancelled", async () => {
    const { t, log } = await h.fixture();
    await initialize(t);
    const controller = new AbortController();
    const pending = callTool(t, "slow", { ms: 60_000 }, { signal: controller.signal });
    const call = await waitForLogged(log, (m) => m.method === "tools/call", "tools/call");
    const reason = { why: "user pressed stop" };
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(t.pendingCount).toBe(0);
    const cancel = await waitForLogged(log, (m) => m.method === "notifications/cancelled", "notifications/cancelled");
    expect(cancel.params?.requestId).toBe(call.id);
    expect(typeof cancel.params?.reason).toBe("string");

    // An Error reason is passed through as the same object too, and its message is the cancel reason.
    const c2 = new AbortController();
    const p2 = callTool(t, "slow", { ms: 60_000, text: "x" }, { signal: c2.signal });
    await waitFor(() => readLog(log).filter((m) => m.method === "tools/call").length === 2);
    const errReason = new Error("stop now");
    c2.abort(errReason);
    await expect(p2).rejects.toBe(errReason);
    await waitFor(() => readLog(log).some((m) => m.method === "notifications/cancelled" && m.params?.reason === "stop now"));
  });

  it("rejects an already-aborted signal at once without sending anything", async () => {
    const { t, log } = await h.fixture();
    await initialize(t);
    const reason = new Error("gave up before starting");
    await expect(callTool(t, "echo", { text: "never-sent" }, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(t.pendingCount).toBe(0);
    await t.request("ping");
    await waitForLogged(log, (m) => m.method === "ping", "ping");
    expect(JSON.stringify(readLog(log))).not.toContain("never-sent");
  });

  it("puts one abort listener on a signal shared by many requests and removes it when they settle", async () => {
    const { t } = await h.fixture();
    await initialize(t);
    const shared = new AbortController().signal;
    const calls = Array.from({ length: 300 }, (_, i) => callTool(t, "slow", { ms: 100, text: `s${i}` }, { signal: shared }));
    expect(getEventListeners(shared, "abort")).toHaveLength(1);
    expect((await Promise.all(calls)).map(textOf)).toEqual(Array.from({ length: 300 }, (_, i) => `s${i}`));
    await expect(callTool(t, "slow", { ms: 60_000 }, { signal: shared, timeout: 50 })).rejects.toMatchObject({
      code: "MCPD_REQUEST_TIMEOUT",
    });
    expect(getEventListeners(shared, "abort")).toHaveLength(0);

    // Aborting a shared signal fails every request that uses it, and only those.
    const controller = new AbortController();
    const aborted = [1, 2, 3].map(() => callTool(t, "slow", { ms: 60_000 }, { signal: controller.signal }).catch((e: unknown) => e));
    const other = callTool(t, "slow", { ms: 200, text: "unaffected" });
    controller.abort("all three");
    expect(await Promise.all(aborted)).toEqual(["all three", "all three", "all three"]);
    expect(textOf(await other)).toBe("unaffected");
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    expect(t.pendingCount).toBe(0);
  });

  it("never cancels initialize (timeout or abort); late answers are dropped and counted", async () => {
    const { t, log } = await h.fixture(["--init-delay", "1000"]);
    const params = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } };
    await expect(t.request("initialize", params, { timeout: 100 })).rejects.toBeInstanceOf(RequestTimeoutError);
    const controller = new AbortController();
    const aborted = t.request("initialize", params, { signal: controller.signal });
    await waitFor(() => readLog(log).filter((m) => m.method === "initialize").length === 2);
    controller.abort("stop");
    await expect(aborted).rejects.toBe("stop");
    expect(t.pendingCount).toBe(0);
    // Both late initialize answers arrive for ids nobody waits for: dropped, counted.
    await waitFor(() => t.info().droppedMessages === 2, { message: "two dropped late answers" });
    await t.request("ping");
    expect(readLog(log).some((m) => m.method === "notifications/cancelled")).toBe(false);
  });
});

describe("StdioTransport: server-to-client requests", () => {
  it("hands ping, roots/list, sampling and elicitation to onRequest and sends the answer back", async () => {
    const { t } = await h.fixture();
    const asked: JsonRpcRequest[] = [];
    t.onRequest = async (request) => {
      asked.push(request);
      switch (request.method) {
        case "roots/list":
          return { roots: [{ uri: "file:///tmp/project", name: "project" }] };
        case "sampling/createMessage":
          return { role: "assistant", content: { type: "text", text: "sampled!" }, model: "m" };
        case "elicitation/create":
          return { action: "accept", content: { name: "Ada" } };
        default:
          return {};
      }
    };
    await initialize(t);
    expect(textOf(await callTool(t, "ping_client"))).toBe("pong ok");
    expect(JSON.parse(textOf(await callTool(t, "roots")))).toEqual({ roots: [{ uri: "file:///tmp/project", name: "project" }] });
    expect(textOf(await callTool(t, "sample", { prompt: "hi" }))).toBe("sampled!");
    expect(JSON.parse(textOf(await callTool(t, "elicit")))).toEqual({ action: "accept", content: { name: "Ada" } });
    expect(asked.map((r) => r.method)).toEqual(["ping", "roots/list", "sampling/createMessage", "elicitation/create"]);
    expect(asked.every((r) => typeof r.id === "number")).toBe(true);
  });

  it("answers -32601 when no handler is set, and forwards a handler's error", async () => {
    const { t, log } = await h.fixture();
    await initialize(t);
    const result = await callTool(t, "roots");
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe("client error -32601: Method not found: roots/list");
    const answer = await waitForLogged(log, (m) => m.id !== undefined && m.method === undefined && m.error !== undefined, "error answer");
    expect(answer.error?.code).toBe(-32601);

    t.onRequest = async () => {
      throw new McpRemoteError({ code: -32000, message: "user declined" });
    };
    expect(textOf(await callTool(t, "ping_client"))).toBe("client error -32000: user declined");
  });
});

describe("StdioTransport: unexpected exit", () => {
  it("fails pending requests promptly with TransportClosedError naming the exit code and stderr", async () => {
    const { t } = await h.fixture([], { closeGraceMs: 2_000 });
    const closes: CloseInfo[] = [];
    t.onClose = (info) => closes.push(info);
    await initialize(t);
    const slow = callTool(t, "slow", { ms: 60_000 }).catch((e: unknown) => e);
    const started = Date.now();
    const crash = await callTool(t, "crash", { code: 7 }).catch((e: unknown) => e);
    const elapsed = Date.now() - started;
    expect(crash).toBeInstanceOf(TransportClosedError);
    const closed = crash as TransportClosedError;
    expect(closed.code).toBe("MCPD_TRANSPORT_CLOSED");
    expect(closed.message).toMatch(/^Transport closed: process exited with code 7; stderr: .*crashing now/);
    expect(closed.reason).toContain("crashing now");
    expect(await slow).toBeInstanceOf(TransportClosedError);
    // Generous bound (the machine is loaded); the grace timers (2 s each) must not be on this path.
    expect(elapsed).toBeLessThan(2_000);
    expect(t.connected).toBe(false);
    await expect(t.request("ping")).rejects.toBeInstanceOf(TransportClosedError);
    await t.close();
    expect(closes).toHaveLength(1);
    expect(closes[0]).toMatchObject({ expected: false, exitCode: 7, signal: null });
    expect(closes[0]?.stderrTail?.at(-1)).toBe("crashing now");
    expect(closes[0]?.reason).toContain("process exited with code 7");
    expect(t.stderrTail(1)).toEqual(["crashing now"]);
  });

  it("fails pending requests promptly even when a grandchild holds the pipes, then ends the grandchild", async () => {
    const dir = await h.tempDir();
    const pidFile = `${dir}/grandchild.pid`;
    const { t } = await h.fixture(["--spawn-grandchild", pidFile], { closeGraceMs: 2_500 });
    const grandchild = Number(await waitFor(() => readPid(pidFile)));
    h.pids.push(grandchild);
    const closed = new Promise<CloseInfo>((resolve) => (t.onClose = resolve));
    await initialize(t);
    const started = Date.now();
    const err = await callTool(t, "crash", { code: 5 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportClosedError);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect((err as Error).message).toContain("code 5");
    const info = await closed;
    expect(info.exitCode).toBe(5);
    // onClose fires once everything, the SIGTERM-ignoring grandchild included, is gone.
    expect(isAlive(grandchild)).toBe(false);
  });

  it("reports a server that dies at start through onClose with its stderr", async () => {
    const { t } = await h.fixture(["--exit-at-start", "9"]);
    const info = await new Promise<CloseInfo>((resolve) => (t.onClose = resolve));
    expect(info).toMatchObject({ expected: false, exitCode: 9 });
    expect(info.stderrTail).toContain("fatal: boom");
    await expect(t.request("initialize")).rejects.toThrow(/^Transport closed: process exited with code 9; stderr: fatal: boom/);
  });
});

describe("StdioTransport: broken pipes", () => {
  it("treats the end of stdout as the end of the server, even while the process lives on", async () => {
    // Reads one line, then closes its stdout and keeps running (ignoring stdin EOF): SIGTERM must end it.
    const script = `process.stdin.once("data", () => require("fs").closeSync(1)); setInterval(() => {}, 1e6);`;
    const t = h.make({ command: NODE_BIN, args: ["-e", script] }, { closeGraceMs: 300 });
    const closed = new Promise<CloseInfo>((resolve) => (t.onClose = resolve));
    await t.connect();
    const err = await t.request("ping").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportClosedError);
    expect((err as Error).message).toBe("Transport closed: the server closed its stdout");
    const info = await closed;
    expect(info).toMatchObject({ expected: false, reason: "the server closed its stdout", exitCode: null, signal: "SIGTERM" });
  });

  it("closes the transport on EPIPE instead of crashing, and reports it to onError", async () => {
    const script = `require("fs").closeSync(0); process.stderr.write("stdin closed\\n"); setInterval(() => {}, 1e6);`;
    const t = h.make({ command: NODE_BIN, args: ["-e", script] }, { closeGraceMs: 300 });
    const errors: Error[] = [];
    t.onError = (e) => errors.push(e);
    const closed = new Promise<CloseInfo>((resolve) => (t.onClose = resolve));
    await t.connect();
    await waitFor(() => t.stderrTail().includes("stdin closed"), { message: "child closed its stdin" });
    const err = await t.request("ping", { pad: "x".repeat(256 * 1024) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportClosedError);
    expect((err as Error).message).toContain("stdin failed: EPIPE");
    expect(errors.map((e) => (e as NodeJS.ErrnoException).code)).toContain("EPIPE");
    expect((await closed).expected).toBe(false);
  });
});

describe("StdioTransport: close", () => {
  it("close() rejects pending with `Transport closed`, ends the child by stdin EOF, is idempotent and fires onClose once", async () => {
    const { t } = await h.fixture();
    const closes: CloseInfo[] = [];
    t.onClose = (info) => closes.push(info);
    await initialize(t);
    const pending = callTool(t, "slow", { ms: 60_000 }).catch((e: unknown) => e);
    const a = t.close();
    const b = t.close();
    expect(b).toBe(a);
    const err = await pending;
    expect(err).toBeInstanceOf(TransportClosedError);
    expect((err as Error).message).toBe("Transport closed");
    await a;
    await t.close();
    expect(closes).toEqual([
      { reason: "closed by client", expected: true, exitCode: 0, signal: null, stderrTail: ["fixture fixture ready"] },
    ]);
    expect(isAlive(t.pid)).toBe(false);
    await expect(t.notify("notifications/initialized")).rejects.toBeInstanceOf(TransportClosedError);
    await expect(t.connect()).rejects.toBeInstanceOf(TransportClosedError);
  });

  it("request() before connect() fails with TransportClosedError", async () => {
    const t = h.make({ command: process.execPath, args: ["-e", "0"] });
    await expect(t.request("ping")).rejects.toThrow("Transport closed: not connected");
    await t.close();
  });
});
