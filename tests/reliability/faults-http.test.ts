/**
 * Fault injection, upstream HTTP servers: the real daemon talks to the HTTP fixture
 * (tests/fixtures/http/http-fixture.mjs, hosted in this test process) and a stdio fixture beside it.
 * Each fault is switched on at runtime; every call must get one clear answer, the other server and the
 * other clients must not notice, and the HTTP server must heal or be reported with its reason.
 */
import { createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { startHttpFixture, type HttpFixture } from "../fixtures/http/http-fixture.mjs";
import { fixture, startTestDaemon, until, type TestDaemon } from "../e2e/harness.js";
import {
  PidLedger,
  allReady,
  answers,
  expectSingleAnswers,
  openClients,
  sendCall,
  serverPid,
  serverStatus,
  status,
  textOf,
} from "./faults-harness.js";

let daemon: TestDaemon | undefined;
let http: HttpFixture | undefined;
const ledger = new PidLedger();

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await http?.close();
  http = undefined;
  ledger.killAll();
});

async function stopAndExpectNothingLeft(d: TestDaemon): Promise<void> {
  ledger.add(d.proc.pid as number);
  await d.stop();
  daemon = undefined;
  await ledger.expectAllGone();
}

/** A daemon with the HTTP fixture as `h` and a stdio fixture as `b`, plus `n` clients, all ready. */
async function setup(n: number, fixtureOptions: Record<string, unknown> = {}, hExtra: Record<string, unknown> = {}) {
  const f = (http = await startHttpFixture(fixtureOptions));
  const d = (daemon = await startTestDaemon({ h: { type: "http", url: f.url, ...hExtra }, b: fixture("b") }));
  const clients = await openClients(d, n);
  await allReady(clients[0]!);
  ledger.add(await serverPid(clients[0]!, "b"));
  return { f, d, clients, c0: clients[0]! };
}

const call = (c: Awaited<ReturnType<typeof setup>>["c0"], name: string, args: Record<string, unknown> = {}) =>
  c.request("tools/call", { name, arguments: args });

describe("faults: upstream HTTP server", () => {
  it("answers 500: each call fails with -32067 naming status and body, b is unaffected, calls succeed once it recovers", async () => {
    const { f, d, clients, c0 } = await setup(3);
    f.set({ status: { code: 500, body: "internal kaboom", method: "tools/call" } });
    const ids = clients.map((_, i) => [`e-${i}-0`, `e-${i}-1`, `e-${i}-2`]);
    for (const [i, c] of clients.entries()) for (const id of ids[i]!) sendCall(c, id, "h__echo", { text: id });
    for (const [i, c] of clients.entries()) {
      for (const m of (await answers(c, ids[i]!)).values()) {
        expect(m.error, JSON.stringify(m)).toMatchObject({ code: -32067, message: "HTTP 500: internal kaboom", data: { status: 500 } });
      }
    }
    expect(textOf(await call(clients[1]!, "b__echo", { text: "b ok" }))).toBe("b ok");
    f.set({ status: undefined });
    expect(textOf(await call(c0, "h__echo", { text: "back" }))).toBe("back");
    // lastError is in the full status: a control connection's.
    const h = await serverStatus(await d.control(), "h");
    expect(h).toMatchObject({ state: "ready", restarts: 0, lastError: "HTTP 500: internal kaboom" });
    for (const c of clients) expectSingleAnswers(c);
    await stopAndExpectNothingLeft(d);
  });

  it("resets connections: each call fails with -32062 naming the network error, then calls succeed on new connections", async () => {
    const { f, d, clients, c0 } = await setup(2);
    f.set({ reset: true });
    const ids = clients.map((_, i) => [`r-${i}-0`, `r-${i}-1`]);
    for (const [i, c] of clients.entries()) for (const id of ids[i]!) sendCall(c, id, "h__echo", { text: id });
    for (const [i, c] of clients.entries()) {
      for (const m of (await answers(c, ids[i]!)).values()) {
        expect(m.error?.code, JSON.stringify(m)).toBe(-32062);
        expect(m.error.message).toMatch(/^Transport closed: network error talking to "h": .+ \((UND_ERR_SOCKET|ECONNRESET)\)$/);
      }
    }
    expect(textOf(await call(c0, "b__echo", { text: "b ok" }))).toBe("b ok");
    f.set({ reset: false });
    expect(textOf(await call(c0, "h__echo", { text: "back" }))).toBe("back");
    expect(await serverStatus(c0, "h")).toMatchObject({ state: "ready" });
    for (const c of clients) expectSingleAnswers(c);
    await stopAndExpectNothingLeft(d);
  });

  it("never sends headers: calls time out with -32061 at the configured timeout and notifications/cancelled reaches the server", async () => {
    const { f, d, clients, c0 } = await setup(2, {}, { timeout: 1_500 });
    f.set({ hang: "tools/call" });
    const ids = clients.map((_, i) => [`hang-${i}-0`, `hang-${i}-1`]);
    for (const [i, c] of clients.entries()) for (const id of ids[i]!) sendCall(c, id, "h__echo", { text: id });
    // Other methods of the same server still answer meanwhile.
    const listed = await c0.request("tools/list", { _meta: { "mcpd/server": "h" } });
    expect(listed.result.tools.map((t: any) => t.name)).toContain("echo");
    for (const [i, c] of clients.entries()) {
      for (const m of (await answers(c, ids[i]!)).values()) {
        expect(m.error, JSON.stringify(m)).toMatchObject({ code: -32061, message: "Request timeout after 1500ms" });
      }
    }
    const posted = f.received("POST", "tools/call").map((r) => r.body.id);
    expect(posted).toHaveLength(4);
    await until(() => f.cancelled.length === 4, "4 notifications/cancelled");
    expect(f.cancelled.map((c) => c.requestId).sort()).toEqual([...posted].sort());
    f.set({ hang: false });
    expect(textOf(await call(c0, "h__echo", { text: "back" }))).toBe("back");
    for (const c of clients) expectSingleAnswers(c);
    await stopAndExpectNothingLeft(d);
  });

  it("drops an SSE reply mid-stream: with event ids the stream is resumed and the call succeeds; without, it fails with a clear error", async () => {
    const { f, d, c0 } = await setup(1, { mode: "sse", eventIds: true });
    f.set({ drop: { afterEvents: 2, mode: "end", times: 1 } });
    const resumed = await c0.request("tools/call", { name: "h__progress", arguments: { steps: 4 }, _meta: { progressToken: "tok" } });
    expect(textOf(resumed)).toBe("done 4 steps");
    expect(f.requests.some((r) => r.method === "GET" && r.headers["last-event-id"] !== undefined)).toBe(true);
    expect(c0.messages.filter((m) => m.method === "notifications/progress").map((m) => m.params.progress)).toEqual([1, 2, 3, 4]);

    f.set({ eventIds: false, drop: { afterEvents: 1, mode: "reset", times: 1 } });
    const dropped = await c0.request("tools/call", { name: "h__progress", arguments: { steps: 4 }, _meta: { progressToken: "tok2" } });
    expect(dropped.error, JSON.stringify(dropped)).toMatchObject({ code: -32062, data: { mcpdCode: "MCPD_NO_RESPONSE" } });
    expect(dropped.error.message).toMatch(/^No response received for request ID \d+$/);
    expect(textOf(await call(c0, "h__echo", { text: "next" }))).toBe("next");
    expect(await serverStatus(c0, "h")).toMatchObject({ state: "ready" });
    expectSingleAnswers(c0);
    await stopAndExpectNothingLeft(d);
  });

  it("expires the session (404): the transport re-initializes once and the calls succeed", async () => {
    const { f, d, clients, c0 } = await setup(2);
    const inits = f.received("POST", "initialize").length;
    f.expireSessions();
    const ids = clients.map((_, i) => [`x-${i}-0`, `x-${i}-1`]);
    for (const [i, c] of clients.entries()) for (const id of ids[i]!) sendCall(c, id, "h__echo", { text: id });
    for (const [i, c] of clients.entries()) {
      for (const [id, m] of await answers(c, ids[i]!)) expect(textOf(m)).toBe(id);
    }
    expect(f.received("POST", "initialize").length).toBe(inits + 1);
    expect(await serverStatus(c0, "h")).toMatchObject({ state: "ready", restarts: 0 });
    for (const c of clients) expectSingleAnswers(c);
    await stopAndExpectNothingLeft(d);
  });

  it("refused at start, available later: the restart loop heals it without anyone asking", async () => {
    // A port that refuses: bound and released.
    const port = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, "127.0.0.1", () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const d = (daemon = await startTestDaemon({
      h: { type: "http", url: `http://127.0.0.1:${port}/mcp`, restart: { maxRestarts: 100, initialDelayMs: 50, maxDelayMs: 300 } },
      b: fixture("b"),
    }));
    const [c0] = await openClients(d, 1);
    await until(async () => (await serverStatus(c0!, "h")).restarts >= 2, "a few refused attempts");
    const refused = await serverStatus(c0!, "h");
    expect(refused.state).toBe("restarting");
    expect(refused.stateReason).toMatch(/ECONNREFUSED|refused/i);
    expect(textOf(await call(c0!, "b__echo", { text: "b ok" }))).toBe("b ok");
    http = await startHttpFixture({ port });
    await until(async () => (await serverStatus(c0!, "h")).state === "ready", "h ready once the server listens");
    expect(textOf(await call(c0!, "h__echo", { text: "healed" }))).toBe("healed");
    ledger.add(await serverPid(c0!, "b"));
    await stopAndExpectNothingLeft(d);
  });

  it("answers 401 with a Bearer challenge: needs-auth naming `mcpd auth h`, its calls fail with -32076, other servers unaffected", async () => {
    const challenge = 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"';
    const f = (http = await startHttpFixture({ status: { code: 401, body: "unauthorized", headers: { "www-authenticate": challenge } } }));
    const d = (daemon = await startTestDaemon({ h: { type: "http", url: f.url }, b: fixture("b") }));
    const [c0] = await openClients(d, 1);
    await until(async () => (await serverStatus(c0!, "h")).state === "needs-auth", "h needs-auth");
    const h = await serverStatus(await d.control(), "h");
    expect(h.stateReason).toBe("no access token yet: run `mcpd auth h`");
    expect(h.restarts).toBe(0);
    const m = await c0!.request("tools/call", { name: "echo", arguments: {}, _meta: { "mcpd/server": "h" } });
    expect(m.error?.code).toBe(-32076);
    expect(m.error.message).toBe('Server "h" needs authorization (no access token yet): run `mcpd auth h`');
    expect(m.error.data).toMatchObject({ mcpdCode: "MCPD_AUTH_REQUIRED", server: "h", command: "mcpd auth h" });
    expect(textOf(await call(c0!, "b__echo", { text: "b ok" }))).toBe("b ok");
    ledger.add(await serverPid(c0!, "b"));
    await stopAndExpectNothingLeft(d);
  });

  it('answers 401 with WWW-Authenticate to a server with "auth": false: reported failed, with the status and the challenge in stateReason and lastError', async () => {
    const challenge = 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"';
    const f = (http = await startHttpFixture({ status: { code: 401, body: "unauthorized", headers: { "www-authenticate": challenge } } }));
    const d = (daemon = await startTestDaemon({
      h: { type: "http", url: f.url, auth: false, restart: { maxRestarts: 1, initialDelayMs: 50 } },
      b: fixture("b"),
    }));
    const [c0] = await openClients(d, 1);
    await until(async () => (await serverStatus(c0!, "h")).state === "failed", "h failed");
    const h = await serverStatus(await d.control(), "h");
    expect(h.stateReason).toContain("HTTP 401: unauthorized");
    expect(h.stateReason).toContain(`[WWW-Authenticate: ${challenge}]`);
    expect(h.lastError).toContain(`WWW-Authenticate: ${challenge}`);
    const m = await c0!.request("tools/call", { name: "echo", arguments: {}, _meta: { "mcpd/server": "h" } });
    expect(m.error?.code).toBe(-32060);
    expect(m.error.message).toContain("HTTP 401");
    expect(textOf(await call(c0!, "b__echo", { text: "b ok" }))).toBe("b ok");
    expect((await status(c0!)).servers.find((s: any) => s.name === "b").state).toBe("ready");
    ledger.add(await serverPid(c0!, "b"));
    await stopAndExpectNothingLeft(d);
  });
});
