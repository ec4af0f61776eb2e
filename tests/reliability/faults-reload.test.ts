/**
 * Fault injection, reloads: a reload racing shutdown, reloads overlapping each other, a reload asked for
 * while one runs. Real detached daemons started with the real CLI (tests/cli/cli-harness.ts), real fixture
 * servers, control connections opened as the CLI opens them; every process of the test's world is
 * accounted for at the end.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RawClient } from "../e2e/harness.js";
import { CliWorld, alive, until } from "../cli/cli-harness.js";
import { allReady, serversByName, status } from "./faults-harness.js";

let world: CliWorld | undefined;
const clients: RawClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await world?.dispose();
  world = undefined;
});

/** A world whose daemons serve HTTP on a free port (the default, 7767, may be taken by another test). */
function httpWorld(): CliWorld {
  const w = new CliWorld();
  w.env.MCPD_HTTP_PORT = "0";
  return w;
}

/** A connection that declared itself a control connection, as the CLI's do. */
async function control(w: CliWorld): Promise<RawClient> {
  const c = await RawClient.open(join(w.mcpdHome, "mcpd.sock"));
  clients.push(c);
  const r = await c.request("mcpd/select", { control: true });
  if (!r.result) throw new Error(`mcpd/select {control: true} failed: ${JSON.stringify(r.error)}`);
  return c;
}

/** Starts the world's daemon with `mcpd start`; resolves with its pid, its HTTP port and a control connection once every server is ready. */
async function startDaemon(w: CliWorld): Promise<{ pid: number; port: number; c: RawClient }> {
  const start = await w.run(["start"]);
  expect(start.code, start.stderr).toBe(0);
  const c = await control(w);
  await allReady(c);
  const url = (await status(c)).http?.url as string | null;
  if (!url) throw new Error(`the HTTP front end is not listening: ${JSON.stringify((await status(c)).http)}`);
  return { pid: w.daemonPid() as number, port: Number(new URL(url).port), c };
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

/** A request sent now; the promise settles with its answer, or with "closed" when the connection ends first. */
function ask(c: RawClient, method: string, id: string): Promise<any> {
  c.send({ jsonrpc: "2.0", id, method });
  const answer = (): any => c.messages.find((m) => m.id === id && ("result" in m || "error" in m));
  return until(
    () => answer() ?? (c.socket.destroyed || c.socket.readableEnded ? "closed" : undefined),
    `the answer to ${method} (${id})`,
    60_000,
  );
}

/** What a daemon gone by shutdown must leave: no process of the world, no HTTP listener, no socket or pid file. */
async function expectGone(w: CliWorld, pid: number, port: number): Promise<void> {
  await until(() => !alive(pid), `the daemon (pid ${pid}) to exit`);
  await until(() => w.processes().length === 0, "no process of the world left");
  expect(await listening(port), `something still listens on HTTP port ${port}`).toBe(false);
  expect(existsSync(join(w.mcpdHome, "mcpd.sock"))).toBe(false);
  expect(existsSync(join(w.mcpdHome, "mcpd.pid"))).toBe(false);
  expect((await w.run(["status"])).code).toBe(3);
}

/** Lines of the daemon's log whose message is `msg`. */
function logLines(w: CliWorld, msg: string): number {
  const file = join(w.mcpdHome, "mcpd.log");
  if (!existsSync(file)) return 0;
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.includes(`"msg":${JSON.stringify(msg)}`)).length;
}

describe("faults: reloads", () => {
  it("regression (a reload racing shutdown left a daemon with no socket serving HTTP): mcpd/shutdown while a reload starts an added server ends the daemon, the server and HTTP; mcpd start works again", async () => {
    const w = (world = httpWorld());
    w.writeConfig({ a: w.fixture("a") });
    const { pid, port, c } = await startDaemon(w);
    // b answers initialize only once this file exists (never here): the reload is still starting it.
    w.writeConfig({ a: w.fixture("a"), b: w.fixture("b", ["--init-wait-file", join(w.root, "never")], { timeout: 600_000 }) });
    const reload = ask(c, "mcpd/reload", "reload");
    await until(() => w.received("b").some((m) => m.method === "initialize"), "the reload to be starting b");

    expect((await (await control(w)).request("mcpd/shutdown")).result).toEqual({ ok: true });
    // Abandoned: the caller hears that mcpd is shutting down (answered before the connections close).
    expect(await reload).toMatchObject({
      error: { code: -32065, message: "mcpd is shutting down", data: { mcpdCode: "MCPD_SHUTTING_DOWN" } },
    });
    await expectGone(w, pid, port);

    w.writeConfig({ a: w.fixture("a") });
    const again = await startDaemon(w);
    expect((await w.run(["stop"])).code).toBe(0);
    await expectGone(w, again.pid, again.port);
  });

  it("regression (same): mcpd/reload adding a server and mcpd/shutdown sent at once, three times on one home: nothing is left each time", async () => {
    const w = (world = httpWorld());
    for (let trial = 0; trial < 3; trial++) {
      w.writeConfig({ a: w.fixture("a") });
      const { pid, port, c } = await startDaemon(w);
      w.writeConfig({ a: w.fixture("a"), [`b${trial}`]: w.fixture(`b${trial}`) });
      const other = await control(w);
      const reload = ask(c, "mcpd/reload", `reload-${trial}`);
      const shutdown = ask(other, "mcpd/shutdown", `shutdown-${trial}`);
      const [r, s] = await Promise.all([reload, shutdown]);
      if (s !== "closed") expect(s.result, JSON.stringify(s)).toEqual({ ok: true });
      // Either it finished before the shutdown began, or it was abandoned.
      if (r !== "closed" && r.error) expect(r.error, JSON.stringify(r)).toMatchObject({ code: -32065 });
      await expectGone(w, pid, port);
    }
  });

  it("regression (overlapping reloads started each added server twice and orphaned one copy): four mcpd/reload at once, twice: one process per server, all in status, none left once removed or stopped", async () => {
    const w = (world = httpWorld());
    w.writeConfig({ a: w.fixture("a") });
    const { c } = await startDaemon(w);
    const cs = [c, await control(w), await control(w), await control(w)];
    for (const round of [1, 2]) {
      const names = [1, 2, 3, 4].map((i) => `s${round}${i}`);
      w.writeConfig({ a: w.fixture("a"), ...Object.fromEntries(names.map((n) => [n, w.fixture(n)])) });
      const results = await Promise.all(cs.map((x, i) => ask(x, "mcpd/reload", `r${round}-${i}`)));
      for (const r of results) expect(r.error, JSON.stringify(r)).toBeUndefined();
      // Each server was added by exactly one reload.
      for (const n of names)
        expect(
          results.filter((r) => r.result.added.includes(n)),
          n,
        ).toHaveLength(1);
      await allReady(c);
      const st = await status(c);
      expect(st.servers.map((s: any) => s.name).sort()).toEqual(["a", ...names]);
      const byName = serversByName(w);
      for (const n of names) expect(byName.get(n), n).toEqual([st.servers.find((s: any) => s.name === n).pid]);

      // A reload removing them leaves none of them running.
      w.writeConfig({ a: w.fixture("a") });
      expect((await ask(c, "mcpd/reload", `remove-${round}`)).result.removed.sort()).toEqual(names);
      await until(() => names.every((n) => !serversByName(w).has(n)), `no process of ${names.join(", ")}`);
    }
    w.writeConfig({ a: w.fixture("a"), t: w.fixture("t") });
    await Promise.all(cs.map((x, i) => ask(x, "mcpd/reload", `t-${i}`)));
    expect((await w.run(["stop"])).code).toBe(0);
    await until(() => w.processes().length === 0, "no process left after mcpd stop");
  });

  it("a reload asked for while one runs waits for it, then reads the config file as it is then; callers waiting meanwhile share that one reload", async () => {
    const w = (world = httpWorld());
    const go = join(w.root, "go");
    const b = w.fixture("b", ["--init-wait-file", go], { timeout: 600_000 });
    w.writeConfig({ a: w.fixture("a") });
    const { c } = await startDaemon(w);
    const [c2, c3] = [await control(w), await control(w)];
    const order: string[] = [];
    const track = (p: Promise<any>, name: string): Promise<any> =>
      p.then((r) => {
        order.push(name);
        return r;
      });

    w.writeConfig({ a: w.fixture("a"), b });
    const r1 = track(ask(c, "mcpd/reload", "r1"), "r1");
    await until(() => w.received("b").some((m) => m.method === "initialize"), "the first reload to be starting b");
    const queued = "reload waits for the one in progress";
    // Asked for now, with the file unchanged since the first reload read it...
    const r2 = track(ask(c2, "mcpd/reload", "r2"), "r2");
    await until(() => logLines(w, queued) === 1 || order.includes("r2"), "the second reload to wait (or to answer)");
    expect(order, "the second reload answered while the first was still starting b").toEqual([]);
    // ...but the file changes before it starts: it must apply the new content.
    w.writeConfig({ a: w.fixture("a"), b, c: w.fixture("c") });
    const r3 = track(ask(c3, "mcpd/reload", "r3"), "r3");
    await until(() => logLines(w, queued) === 2 || order.includes("r3"), "the third reload to wait (or to answer)");
    expect(order).toEqual([]);

    writeFileSync(go, "");
    const [a1, a2, a3] = await Promise.all([r1, r2, r3]);
    expect(order[0]).toBe("r1");
    expect(a1.result).toMatchObject({ added: ["b"], removed: [], changed: [] });
    expect(a2.result).toMatchObject({ added: ["c"], removed: [], changed: [], unchanged: ["a", "b"] });
    expect(a3.result).toEqual(a2.result);
    await allReady(c);
    expect((await status(c)).servers.map((s: any) => s.name)).toEqual(["a", "b", "c"]);
    for (const n of ["a", "b", "c"]) expect(serversByName(w).get(n), n).toHaveLength(1);
    expect((await w.run(["stop"])).code).toBe(0);
    await until(() => w.processes().length === 0, "no process left after mcpd stop");
  });
});
