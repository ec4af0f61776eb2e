/**
 * Fault injection, upstream stdio servers: real daemon, real fixture servers, several clients at once.
 * Every scenario checks that each call gets exactly one answer (a result or a clear error), that other
 * servers and clients are unaffected, that the broken server heals (or is reported failed with its
 * reason), and that no process is left behind. docs/reliability.md lists them with observed results.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fixture, readLog, startTestDaemon, until, type TestDaemon } from "../e2e/harness.js";
import {
  NotificationCounter,
  PidLedger,
  allReady,
  answers,
  expectSingleAnswers,
  faultServer,
  openClients,
  pidFromFile,
  sendCall,
  serverPid,
  serverStatus,
  status,
  textOf,
} from "./faults-harness.js";

let daemon: TestDaemon | undefined;
const ledger = new PidLedger();

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  ledger.killAll();
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

const roots: string[] = [];
/** A short temporary directory removed after the test. */
function mkRoot(): string {
  const r = mkdtempSync(join(tmpdir(), "mcpdf-"));
  roots.push(r);
  return r;
}

/** Stops the daemon and checks that it and every process the test saw are gone. */
async function stopAndExpectNothingLeft(d: TestDaemon): Promise<void> {
  ledger.add(d.proc.pid as number);
  await d.stop();
  daemon = undefined;
  await ledger.expectAllGone();
}

const FAST_RESTART = { restart: { initialDelayMs: 50, maxDelayMs: 200 } };

describe("faults: upstream stdio server", () => {
  it("crashes (SIGABRT) with 100 calls in flight from 4 clients: each of the 64 sent fails once with -32062, the 36 waiting for a slot go to the restarted server, b is unaffected", async () => {
    const d = (daemon = await startTestDaemon({ a: fixture("a", [], FAST_RESTART), b: fixture("b") }));
    const clients = await openClients(d, 4);
    const c0 = clients[0]!;
    const pidA = await serverPid(c0, "a");
    ledger.add(pidA, await serverPid(c0, "b"));

    // 64 take a's slots (maxConcurrency), then 36 more wait in its queue.
    const sent = clients.map((_, i) => Array.from({ length: 16 }, (_, j) => `slow-${i}-${j}`));
    for (const [i, c] of clients.entries()) for (const id of sent[i]!) sendCall(c, id, "a__slow", { ms: 60_000 });
    await until(async () => (await serverStatus(c0, "a")).inFlight === 64, "64 calls in flight to a");
    const waiting = clients.map((_, i) => Array.from({ length: 9 }, (_, j) => `wait-${i}-${j}`));
    for (const [i, c] of clients.entries()) for (const id of waiting[i]!) sendCall(c, id, "a__echo", { text: id });
    await until(async () => (await serverStatus(c0, "a")).inFlight === 100, "100 calls in flight to a");
    process.kill(pidA, "SIGABRT");

    for (const [i, c] of clients.entries()) {
      for (const m of (await answers(c, sent[i]!)).values()) {
        expect(m.error?.code, JSON.stringify(m)).toBe(-32062);
        expect(m.error.message).toMatch(/^Transport closed: process was killed by SIGABRT/);
      }
      // Never sent to the dead process: the queue waited for the new one.
      for (const [id, m] of await answers(c, waiting[i]!)) expect(textOf(m), JSON.stringify(m)).toBe(id);
    }
    // Other clients and the other server never noticed.
    for (const [i, c] of clients.entries())
      expect(textOf(await c.request("tools/call", { name: "b__echo", arguments: { text: `b${i}` } }))).toBe(`b${i}`);

    await until(async () => (await serverStatus(c0, "a")).state === "ready", "a ready again");
    // lastError may quote a server's output: only a control connection sees it.
    const a = await serverStatus(await d.control(), "a");
    expect(a.restarts).toBe(1);
    expect(a.lastError).toMatch(/SIGABRT/);
    const newPid = await serverPid(c0, "a");
    expect(newPid).not.toBe(pidA);
    ledger.add(newPid);
    expect(textOf(await c0.request("tools/call", { name: "a__echo", arguments: { text: "back" } }))).toBe("back");
    expect((await status(c0)).tables).toEqual({ progress: 0, progressDropped: 0, subscriptions: 0, relayed: 0, inFlight: 0 });
    for (const c of clients) expectSingleAnswers(c);
    await stopAndExpectNothingLeft(d);
  });

  it("hangs without answering: calls time out with -32061 at the configured timeout and notifications/cancelled reaches the server", async () => {
    const log = join(mkRoot(), "h.log");
    // timeout also bounds initialize: 1.5 s lets a node process start on a loaded machine.
    const d = (daemon = await startTestDaemon({ h: fixture("h", ["--log", log], { timeout: 1_500 }), b: fixture("b") }));
    const clients = await openClients(d, 4);
    const c0 = clients[0]!;
    await allReady(c0);
    ledger.add(await serverPid(c0, "h"), await serverPid(c0, "b"));

    const ids = clients.map((_, i) => Array.from({ length: 5 }, (_, j) => `hang-${i}-${j}`));
    for (const [i, c] of clients.entries()) for (const id of ids[i]!) sendCall(c, id, "h__slow", { ms: 600_000 });
    // The other server answers while those hang.
    expect(textOf(await clients[1]!.request("tools/call", { name: "b__echo", arguments: { text: "meanwhile" } }))).toBe("meanwhile");
    for (const [i, c] of clients.entries()) {
      for (const m of (await answers(c, ids[i]!)).values()) {
        expect(m.error?.code, JSON.stringify(m)).toBe(-32061);
        expect(m.error.message).toBe("Request timeout after 1500ms");
      }
    }
    // Each of the 20 upstream requests was cancelled, by its own upstream id.
    const received = () => readLog(log);
    await until(() => received().filter((m) => m.method === "notifications/cancelled").length === 20, "20 cancellations upstream");
    const callIds = received()
      .filter((m) => m.method === "tools/call" && m.params?.name === "slow")
      .map((m) => m.id);
    const cancelled = received()
      .filter((m) => m.method === "notifications/cancelled")
      .map((m) => m.params.requestId);
    expect(callIds).toHaveLength(20);
    expect([...cancelled].sort()).toEqual([...callIds].sort());

    const h = await serverStatus(c0, "h");
    expect(h.state).toBe("ready");
    expect(h.restarts).toBe(0);
    expect(textOf(await c0.request("tools/call", { name: "h__echo", arguments: { text: "still here" } }))).toBe("still here");
    expect((await status(c0)).tables.inFlight).toBe(0);
    for (const c of clients) expectSingleAnswers(c);
    await stopAndExpectNothingLeft(d);
  });

  it("stops answering anything (SIGSTOP): calls time out with -32061, health pings miss, the server is restarted", async () => {
    // timeout also bounds initialize: 2 s lets a node process start on a loaded machine.
    const d = (daemon = await startTestDaemon({
      z: fixture("z", [], { timeout: 2_000, healthCheckIntervalMs: 300, ...FAST_RESTART }),
      b: fixture("b"),
    }));
    const events = await d.raw();
    await events.request("mcpd/select", { events: true });
    await events.initialize();
    const clients = await openClients(d, 2);
    const c0 = clients[0]!;
    await allReady(c0);
    const pidZ = await serverPid(c0, "z");
    ledger.add(pidZ, await serverPid(c0, "b"));
    process.kill(pidZ, "SIGSTOP");
    try {
      const ids = clients.map((_, i) => [`stop-${i}-0`, `stop-${i}-1`]);
      for (const [i, c] of clients.entries()) for (const id of ids[i]!) sendCall(c, id, "z__echo", { text: "never" });
      // Whichever comes first: the call's own timeout, or the health check ending the session under it.
      for (const [i, c] of clients.entries()) {
        for (const m of (await answers(c, ids[i]!)).values()) {
          if (m.error?.code === -32062) expect(m.error.message).toMatch(/^Transport closed: restarting: 3 health pings missed/);
          else expect(m.error, JSON.stringify(m)).toMatchObject({ code: -32061, message: "Request timeout after 2000ms" });
        }
      }
      expect(textOf(await clients[1]!.request("tools/call", { name: "b__echo", arguments: { text: "fine" } }))).toBe("fine");
      const restarting = await events.waitFor(
        (m) => m.method === "notifications/mcpd/serverState" && m.params.server === "z" && m.params.state === "restarting",
        "z restarting",
        30_000,
      );
      expect(restarting.params.reason).toMatch(/^3 health pings missed/);
      await until(
        async () => {
          const z = await serverStatus(c0, "z");
          return z.state === "ready" && z.pid !== pidZ;
        },
        "z ready again with a new process",
        30_000,
      );
    } finally {
      // A stopped process cannot act on SIGTERM until it runs again (SIGKILL works regardless).
      if (ledger.alive().includes(pidZ)) process.kill(pidZ, "SIGCONT");
    }
    const newPid = await serverPid(c0, "z");
    expect(newPid).not.toBe(pidZ);
    ledger.add(newPid);
    await until(() => !ledger.alive().includes(pidZ), "the stopped server to be ended");
    for (const c of clients) expectSingleAnswers(c);
    await stopAndExpectNothingLeft(d);
  });

  it("writes noise and partial frames to stdout: every call still gets its own answer, the server is never restarted", async () => {
    const d = (daemon = await startTestDaemon({
      n: fixture("n", ["--noise"], { timeout: 10_000 }),
      t: faultServer("t", { timeout: 10_000 }),
    }));
    const clients = await openClients(d, 4);
    const c0 = clients[0]!;
    ledger.add(await serverPid(c0, "n"), await serverPid(c0, "t"));
    const ids = clients.map((_, i) => Array.from({ length: 25 }, (_, j) => `noise-${i}-${j}`));
    clients.forEach((c, i) => {
      for (const id of ids[i]!) sendCall(c, id, "n__echo", { text: id });
      // A garbage line over the 4 MiB limit, and a response written in 8 pieces 20 ms apart.
      sendCall(c, `huge-noise-${i}`, "n__noise", { bytes: 5 * 1024 * 1024 });
      sendCall(c, `trickle-${i}`, "t__trickle", { text: `piecewise ${i}`, pieces: 8 });
    });
    for (const [i, c] of clients.entries()) {
      const got = await answers(c, [...ids[i]!, `huge-noise-${i}`, `trickle-${i}`]);
      for (const id of ids[i]!) expect(textOf(got.get(id))).toBe(id);
      expect(textOf(got.get(`huge-noise-${i}`))).toBe("noise done");
      expect(textOf(got.get(`trickle-${i}`))).toBe(`piecewise ${i}`);
    }
    for (const name of ["n", "t"]) {
      const s = await serverStatus(c0, name);
      expect(s.state).toBe("ready");
      expect(s.restarts).toBe(0);
    }
    for (const c of clients) expectSingleAnswers(c);
    await stopAndExpectNothingLeft(d);
  });

  it("emits one 20 MiB frame (limit 4 MiB): that call fails at once with -32068 naming the sizes, other calls keep working", async () => {
    // timeout 20 s: an answer that only came from the timeout would arrive after answers() gives up.
    const d = (daemon = await startTestDaemon({ f: fixture("f", [], { timeout: 20_000 }), g: faultServer("g", { timeout: 20_000 }) }));
    const clients = await openClients(d, 4);
    const c0 = clients[0]!;
    const pids = [await serverPid(c0, "f"), await serverPid(c0, "g")];
    ledger.add(...pids);
    const MiB = 1024 * 1024;
    // f writes {"jsonrpc","id","result"}; g writes {"result","jsonrpc","id"} (the id after 20 MiB), as the TS SDK does.
    sendCall(c0, "big-f", "f__big", { bytes: 20 * MiB });
    sendCall(c0, "big-g", "g__big_result_first", { bytes: 20 * MiB });
    const others = clients.slice(1).map((c, i) => {
      const ids = Array.from({ length: 20 }, (_, j) => `echo-${i}-${j}`);
      for (const [j, id] of ids.entries()) sendCall(c, id, j % 2 ? "f__echo" : "g__echo", { text: id });
      return { c, ids };
    });
    const big = await answers(c0, ["big-f", "big-g"], 15_000);
    for (const id of ["big-f", "big-g"]) {
      const m = big.get(id);
      expect(m.error?.code, JSON.stringify(m)).toBe(-32068);
      expect(m.error.message).toMatch(/^Response to tools\/call of \d+ bytes exceeds the limit of 4194304 bytes$/);
      expect(Number(/of (\d+) bytes/.exec(m.error.message)![1])).toBeGreaterThan(20 * MiB);
    }
    for (const { c, ids } of others) {
      const got = await answers(c, ids);
      for (const id of ids) expect(textOf(got.get(id))).toBe(id);
    }
    // Same sessions, no restart; a frame under the limit still passes.
    for (const name of ["f", "g"]) {
      const s = await serverStatus(c0, name);
      expect(s.state).toBe("ready");
      expect(s.restarts).toBe(0);
    }
    expect(await serverPid(c0, "f")).toBe(pids[0]);
    expect(textOf(await c0.request("tools/call", { name: "f__big", arguments: { bytes: 3 * MiB } }))).toHaveLength(3 * MiB);
    expect((await status(c0)).tables.inFlight).toBe(0);
    for (const c of clients) expectSingleAnswers(c);
    await stopAndExpectNothingLeft(d);
  });

  it("closes stdout but keeps running: pending calls fail with -32062 naming it, later ones wait for the restart, the process is ended", async () => {
    const d = (daemon = await startTestDaemon({ s: faultServer("s", FAST_RESTART), b: fixture("b") }));
    const clients = await openClients(d, 4);
    const c0 = clients[0]!;
    const pidS = await serverPid(c0, "s");
    ledger.add(pidS, await serverPid(c0, "b"));
    sendCall(c0, "close", "s__close_stdout");
    const ids = clients.map((_, i) => Array.from({ length: 10 }, (_, j) => `after-${i}-${j}`));
    for (const [i, c] of clients.entries()) for (const id of ids[i]!) sendCall(c, id, "s__echo", { text: id });
    const closeAnswer = (await answers(c0, ["close"])).get("close");
    expect(closeAnswer.error?.code).toBe(-32062);
    expect(closeAnswer.error.message).toMatch(/^Transport closed: the server closed its stdout/);
    // Sent once the session is known to be dead, while its transport still ends the process (~2 s: it
    // ignores stdin EOF): never sent to the dead session, they wait for the restart and succeed.
    for (const [i, c] of clients.entries()) sendCall(c, `late-${i}`, "s__echo", { text: `late-${i}` });
    for (const [i, c] of clients.entries()) expect(textOf((await answers(c, [`late-${i}`])).get(`late-${i}`))).toBe(`late-${i}`);
    for (const [i, c] of clients.entries()) {
      // Sent right behind close_stdout: each is answered by the server or failed, never both, never neither.
      for (const [id, m] of await answers(c, ids[i]!)) {
        if (m.result) expect(textOf(m)).toBe(id);
        else expect(m.error.code, JSON.stringify(m)).toBe(-32062);
      }
    }
    expect(textOf(await clients[3]!.request("tools/call", { name: "b__echo", arguments: { text: "ok" } }))).toBe("ok");
    await until(() => !ledger.alive().includes(pidS), "the server that closed its stdout to be ended");
    await until(async () => {
      const st = await serverStatus(c0, "s");
      return st.state === "ready" && st.pid !== pidS;
    }, "s ready again with a new process");
    const newPid = await serverPid(c0, "s");
    expect(newPid).not.toBe(pidS);
    ledger.add(newPid);
    for (const c of clients) expectSingleAnswers(c);
    await stopAndExpectNothingLeft(d);
  });

  it("floods 100k notifications: every viewing client gets all of them, a client that filtered gets none, calls elsewhere go on", async () => {
    const d = (daemon = await startTestDaemon({ fl: fixture("fl"), b: fixture("b") }));
    const counters = await Promise.all([0, 1, 2].map(() => NotificationCounter.open(d.socketPath, '"logger":"flood"')));
    // Both set their level to error, so the info-level flood is not for them.
    const [caller, quiet] = await openClients(d, 2);
    for (const c of [caller!, quiet!]) expect((await c.request("logging/setLevel", { level: "error" })).result).toEqual({});
    ledger.add(await serverPid(caller!, "fl"), await serverPid(caller!, "b"));
    sendCall(caller!, "flood", "fl__flood", { count: 100_000, size: 16 });
    // While the flood runs, another client's calls to another server are answered.
    for (let i = 0; i < 20; i++)
      expect(textOf(await quiet!.request("tools/call", { name: "b__echo", arguments: { text: `q${i}` } }))).toBe(`q${i}`);
    expect(textOf((await answers(caller!, ["flood"], 60_000)).get("flood"))).toBe("flooded 100000");
    for (const n of counters) await until(() => n.count === 100_000, `100000 notifications (have ${n.count})`, 60_000);
    for (const c of [caller!, quiet!]) expect(c.messages.filter((m) => m.params?.logger === "flood")).toEqual([]);
    const fl = await serverStatus(caller!, "fl");
    expect(fl.state).toBe("ready");
    expect(fl.restarts).toBe(0);
    // Three counters and two clients; the control connection asking is not listed.
    expect((await status(await d.control())).clients).toHaveLength(5);
    for (const n of counters) n.close();
    await stopAndExpectNothingLeft(d);
  });

  it("exits during initialize: restarts with backoff, then failed with the reason; calls get -32060 naming it; a fixed config heals it", async () => {
    const policy = { restart: { maxRestarts: 2, initialDelayMs: 50, maxDelayMs: 100 } };
    const d = (daemon = await startTestDaemon({ e: fixture("e", ["--exit-on-init", "7"], policy), b: fixture("b") }));
    const [c0, c1] = await openClients(d, 2);
    ledger.add(await serverPid(c1!, "b"));
    await until(async () => (await serverStatus(c0!, "e")).state === "failed", "e failed");
    const e = await serverStatus(await d.control(), "e");
    expect(e.stateReason).toMatch(/process exited with code 7/);
    expect(e.stateReason).toMatch(/gave up after 2 restarts/);
    expect(e.lastStderr).toBe("exiting on initialize with code 7");
    expect(e.pid).toBeNull();
    const calls = [c0!, c1!].map((c, i) =>
      c.request("tools/call", { name: "echo", arguments: { text: "x" }, _meta: { "mcpd/server": "e" } }, `e-${i}`),
    );
    for (const m of await Promise.all(calls)) {
      expect(m.error?.code, JSON.stringify(m)).toBe(-32060);
      expect(m.error.message).toMatch(/"e".*failed/);
      expect(m.error.message).toContain("exiting on initialize with code 7");
    }
    expect(textOf(await c1!.request("tools/call", { name: "b__echo", arguments: { text: "b fine" } }))).toBe("b fine");
    d.writeConfig({ e: fixture("e", [], policy), b: fixture("b") });
    expect((await (await d.control()).request("mcpd/reload")).result.changed).toEqual(["e"]);
    await until(async () => (await serverStatus(c0!, "e")).state === "ready", "e ready after the fix");
    ledger.add(await serverPid(c0!, "e"));
    await stopAndExpectNothingLeft(d);
  });

  it("a server in a restart loop does not hold up a call to another server that is still starting (aggregate view)", async () => {
    // h fails at once, again and again, and is given up on after ~9 s (never earlier than 7.2 s, with
    // jitter: far longer than b takes to start even on a loaded machine); b needs a moment to start.
    const loop = { restart: { maxRestarts: 2, initialDelayMs: 3_000, maxDelayMs: 6_000 } };
    const d = (daemon = await startTestDaemon({
      h: fixture("h", ["--exit-at-start", "1"], loop),
      b: fixture("b", ["--init-delay", "300"]),
    }));
    const [c0] = await openClients(d, 1);
    // b__echo is not in the catalog until b is ready; the lookup used to wait for every starting or
    // restarting server (h until it failed, or 10 s), now only until the name shows up.
    const r = await c0!.request("tools/call", { name: "b__echo", arguments: { text: "not held up" } });
    expect(textOf(r)).toBe("not held up");
    // h is still in its loop, not given up on: the call did not wait for it. (Its first start may not have
    // failed yet on a loaded machine: "starting" says the same.)
    expect(["starting", "restarting"]).toContain((await serverStatus(c0!, "h")).state);
    ledger.add(await serverPid(c0!, "b"));
    await stopAndExpectNothingLeft(d);
  });

  it("never starts (bad command): reported failed with the spawn error, calls get -32060, others unaffected", async () => {
    const missing = "/nonexistent/mcpd-fault/no-such-server";
    const d = (daemon = await startTestDaemon({
      x: { command: missing, args: [], restart: { maxRestarts: 1, initialDelayMs: 50 } },
      b: fixture("b"),
    }));
    const [c0] = await openClients(d, 1);
    ledger.add(await serverPid(c0!, "b"));
    await until(async () => (await serverStatus(c0!, "x")).state === "failed", "x failed");
    const x = await serverStatus(c0!, "x");
    expect(x.commandFound).toBe(false);
    expect(x.stateReason).toContain(missing);
    expect(x.stateReason).toMatch(/ENOENT|not found|no such file/i);
    const m = await c0!.request("tools/call", { name: "echo", arguments: { text: "x" }, _meta: { "mcpd/server": "x" } });
    expect(m.error?.code).toBe(-32060);
    expect(m.error.message).toContain(missing);
    expect(textOf(await c0!.request("tools/call", { name: "b__echo", arguments: { text: "b" } }))).toBe("b");
    await stopAndExpectNothingLeft(d);
  });

  it("spawns a grandchild and ignores SIGTERM: a crash and the shutdown each end the whole group", async () => {
    const root = mkRoot();
    const gcFile = join(root, "gc.pid");
    const d = (daemon = await startTestDaemon({
      g: fixture("g", ["--spawn-grandchild", gcFile, "--ignore-sigterm"], FAST_RESTART),
      b: fixture("b"),
    }));
    const [c0] = await openClients(d, 1);
    ledger.add(await serverPid(c0!, "b"));
    const leader1 = await serverPid(c0!, "g");
    const gc1 = await pidFromFile(gcFile);
    ledger.add(leader1, gc1);

    // 1. The leader crashes with a call in flight; its grandchild (deaf to SIGTERM) must not survive it.
    sendCall(c0!, "pending", "g__slow", { ms: 60_000 });
    await until(async () => (await serverStatus(c0!, "g")).inFlight === 1, "call in flight");
    sendCall(c0!, "crash", "g__crash", { code: 9 });
    for (const m of (await answers(c0!, ["pending", "crash"])).values()) expect(m.error?.code).toBe(-32062);
    await until(() => !ledger.alive().includes(gc1) && !ledger.alive().includes(leader1), "leader 1 and grandchild 1 gone");
    await until(async () => (await serverStatus(c0!, "g")).state === "ready", "g ready again");
    const leader2 = await serverPid(c0!, "g");
    const gc2 = await until(async () => {
      const p = await pidFromFile(gcFile);
      return p !== gc1 ? p : undefined;
    }, "grandchild 2");
    ledger.add(leader2, gc2);

    expect(textOf(await c0!.request("tools/call", { name: "g__echo", arguments: { text: "alive" } }))).toBe("alive");

    // 2. Shutdown: the leader ignores stdin EOF and SIGTERM, so only SIGKILL ends it and its group.
    expectSingleAnswers(c0!);
    await stopAndExpectNothingLeft(d);
  });
});
