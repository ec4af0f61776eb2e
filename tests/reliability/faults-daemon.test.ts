/**
 * Fault injection, mcpd itself: `kill -9` of the daemon, `mcpd stop` under load, a broken config on
 * reload. Real detached daemons started with the real CLI (tests/cli/cli-harness.ts), real fixture
 * servers; every process of the test's world is accounted for at the end.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RawClient } from "../e2e/harness.js";
import { CliWorld, alive, until } from "../cli/cli-harness.js";
import { answers, expectSingleAnswers, pidFromFile, sendCall, serversByName, serverStatus, status, textOf } from "./faults-harness.js";

let world: CliWorld | undefined;
const clients: RawClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await world?.dispose();
  world = undefined;
});

async function client(w: CliWorld, server?: string): Promise<RawClient> {
  const c = await RawClient.open(join(w.mcpdHome, "mcpd.sock"));
  clients.push(c);
  if (server !== undefined) await c.request("mcpd/select", { server });
  await c.initialize();
  return c;
}

async function allReady(c: RawClient): Promise<void> {
  await until(async () => (await status(c)).servers.every((s: any) => s.state === "ready"), "every server ready");
}

describe("faults: mcpd itself", () => {
  it("kill -9 with servers running (one still initializing), then mcpd start: every orphan, grandchild included, is ended; no server runs twice", async () => {
    const w = (world = new CliWorld());
    const gcFile = join(w.root, "gc.pid");
    w.writeConfig({
      a: w.fixture("a"),
      b: w.fixture("b"),
      // Outlives stdin EOF and SIGTERM, and so does its grandchild.
      g: w.fixture("g", ["--spawn-grandchild", gcFile, "--ignore-sigterm"]),
      // Still initializing when the daemon dies (an npx cold start): it must be on record all the same.
      slow: w.fixture("slow", ["--init-delay", "600000", "--ignore-sigterm"]),
    });
    expect((await w.run(["start"])).code).toBe(0);
    const oldDaemon = w.daemonPid() as number;
    const gc1 = await pidFromFile(gcFile);
    // Every server's script runs (each logged the initialize it received; slow never answers it). A
    // fixture whose process exists but whose script has not yet written its first stderr line when the
    // daemon dies fails on the closed pipe instead of staying behind as an orphan.
    await until(
      () => ["a", "b", "g", "slow"].every((n) => w.received(n).some((m) => m.method === "initialize")),
      "every server to receive initialize",
    );
    const before = await until(() => {
      const p = w.processes();
      return p.length === 6 ? p : undefined;
    }, "the daemon, 4 servers and a grandchild");
    expect(before).toContain(gc1);
    // a, b and g ready first: a server that answers initialize after the daemon died gets EPIPE and exits
    // by itself (the fixture exits on a stdout error), which would leave fewer orphans than the test expects.
    await until(async () => {
      const st = JSON.parse((await w.run(["status", "--json"])).stdout);
      return ["a", "b", "g"].every((n) => st.servers.find((x: { name: string }) => x.name === n)?.state === "ready");
    }, "a, b and g to be ready");

    process.kill(oldDaemon, "SIGKILL");
    await until(() => !alive(oldDaemon), "the daemon to die");
    // a and b leave on stdin EOF; g, its grandchild and slow do not: the orphans.
    const orphans = await until(() => {
      const p = w.processes();
      return p.length === 3 ? p : undefined;
    }, "only the orphans to remain");
    expect(orphans).toContain(gc1);

    const start = await w.run(["start"]);
    expect(start.code, start.stderr).toBe(0);
    const newDaemon = w.daemonPid() as number;
    expect(newDaemon).not.toBe(oldDaemon);
    await until(() => orphans.every((p) => !alive(p)), "the orphans to be ended");
    await until(() => w.processes().length === 6, "the new daemon, 4 servers and a grandchild");
    for (const p of before) expect(alive(p), `old process ${p}`).toBe(false);

    // A second start finds the daemon; exactly one process per server either way.
    const again = await w.run(["start"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`mcpd is already running (pid ${newDaemon})`);
    const byName = serversByName(w);
    expect([...byName.keys()].sort()).toEqual(["a", "b", "g", "slow"]);
    for (const [name, pids] of byName) expect(pids, name).toHaveLength(1);
    const s = JSON.parse((await w.run(["status", "--json"])).stdout);
    for (const srv of s.servers.filter((x: any) => x.state === "ready")) expect(byName.get(srv.name)).toEqual([srv.pid]);

    const stop = await w.run(["stop"]);
    expect(stop.code).toBe(0);
    await until(() => w.processes().length === 0, "no process left");
  });

  it("mcpd stop with 1,000 calls in flight from 4 clients: each answered once, by its result or -32065; nothing left", async () => {
    const w = (world = new CliWorld());
    w.writeConfig({ a: w.fixture("a", [], { maxConcurrency: 1000 }), b: w.fixture("b", [], { maxConcurrency: 1000 }) });
    expect((await w.run(["start"])).code).toBe(0);
    const daemonPid = w.daemonPid() as number;
    const cs = [await client(w), await client(w), await client(w), await client(w)];
    await allReady(cs[0]!);
    const serverPids = (await status(cs[0]!)).servers.map((s: any) => s.pid as number);

    // Per client: 125 short calls (1 s: they finish within the 5 s shutdown grace) and 125 that cannot (60 s).
    const ids = cs.map((_, i) => Array.from({ length: 250 }, (_, j) => `${j % 2 ? "long" : "short"}-${i}-${j}`));
    for (const [i, c] of cs.entries()) {
      for (const [j, id] of ids[i]!.entries())
        sendCall(c, id, j % 4 < 2 ? "a__slow" : "b__slow", { ms: id.startsWith("short") ? 1_000 : 60_000 });
    }
    const answered = (): number =>
      cs.reduce((n, c) => n + c.messages.filter((m) => typeof m.id === "string" && /^(short|long)-/.test(m.id)).length, 0);
    await until(async () => (await status(cs[0]!)).tables.inFlight + answered() === 1000, "all 1000 calls received by the daemon");

    const stop = await w.run(["stop"]);
    expect(stop.code, stop.stderr).toBe(0);
    expect(stop.stdout).toContain(`mcpd stopped (pid ${daemonPid})`);
    for (const [i, c] of cs.entries()) {
      for (const [id, m] of await answers(c, ids[i]!)) {
        if (id.startsWith("short")) expect(textOf(m)).toBe("slept 1000");
        else
          expect(m.error, JSON.stringify(m)).toMatchObject({
            code: -32065,
            message: "mcpd is shutting down",
            data: { mcpdCode: "MCPD_SHUTTING_DOWN" },
          });
      }
      expectSingleAnswers(c);
    }
    expect(alive(daemonPid)).toBe(false);
    for (const p of serverPids) expect(alive(p)).toBe(false);
    await until(() => w.processes().length === 0, "no process left");
  });

  it("config file replaced with invalid JSON, then mcpd reload: exit 1 naming the problem, the old config keeps running", async () => {
    const w = (world = new CliWorld());
    w.writeConfig({ a: w.fixture("a"), b: w.fixture("b") });
    expect((await w.run(["start"])).code).toBe(0);
    const c = await client(w);
    await allReady(c);
    const pids = (await status(c)).servers.map((s: any) => s.pid);

    writeFileSync(w.configFile, '{ "mcpServers": { "a": { "command": ');
    const r = await w.run(["reload"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(w.configFile);
    expect(r.stderr).toMatch(/config\.json:1:\d+: invalid JSON/);
    // SIGHUP takes the same path: logged, nothing changes.
    process.kill(w.daemonPid() as number, "SIGHUP");
    await until(
      () => readFileSync(join(w.mcpdHome, "mcpd.log"), "utf8").includes("reload failed; keeping the old config"),
      "the failed SIGHUP reload in the log",
    );

    const after = await status(c);
    expect(after.servers.map((s: any) => [s.name, s.state, s.pid])).toEqual([
      ["a", "ready", pids[0]],
      ["b", "ready", pids[1]],
    ]);
    expect(textOf(await c.request("tools/call", { name: "a__echo", arguments: { text: "still" } }))).toBe("still");
    expect((await serverStatus(c, "b")).restarts).toBe(0);

    // Fixed, it applies.
    w.writeConfig({ a: w.fixture("a"), b: w.fixture("b"), c: w.fixture("c") });
    const fixed = await w.run(["reload"]);
    expect(fixed.code).toBe(0);
    expect(fixed.stdout).toContain("added: c");
    expect((await w.run(["stop"])).code).toBe(0);
    await until(() => w.processes().length === 0, "no process left");
  });
});
