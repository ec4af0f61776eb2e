/**
 * What `mcpd status`, `mcpd logs` and `mcpd tools` report about a running daemon, against real fixture
 * servers: a server still starting, a disabled one, a lazy one never started, followed logs.
 */
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CliWorld, until } from "./cli-harness.js";
import { RawClient } from "../e2e/harness.js";

let world: CliWorld;
afterEach(async () => {
  await world?.dispose();
});

type Status = { servers: Array<{ name: string; state: string; pid: number | null }>; clients: Array<{ name: string | null }> };

async function status(w: CliWorld): Promise<Status> {
  const r = await w.run(["status", "--json"]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Status;
}

/** The pids of this world's processes whose command line contains `marker`. */
function pidsWith(w: CliWorld, marker: string): number[] {
  return w.processes().filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").includes(marker);
    } catch {
      return false;
    }
  });
}

/** Opens and closes one connection to the daemon: at debug level, that logs "client connected". */
function touchSocket(w: CliWorld): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = connect(join(w.mcpdHome, "mcpd.sock"));
    s.once("connect", () => {
      s.end();
      resolve();
    });
    s.once("error", reject);
  });
}

const count = (text: string, needle: string): number => text.split(needle).length - 1;

describe("mcpd status", () => {
  it("regression: a starting server is not a problem and shows its started process's pid; disabled is said once; the CLI is no client", async () => {
    world = new CliWorld();
    world.writeConfig({
      fx: world.fixture("fx"),
      // Answers initialize only after two minutes: it stays `starting` for the whole test.
      slow: world.fixture("slow", ["--init-delay", "120000"], { timeout: 180_000 }),
      off: world.fixture("off", [], { enabled: false }),
    });
    expect((await world.run(["start"])).code).toBe(0);
    const [slowPid] = await until(() => {
      const p = pidsWith(world, "slow");
      return p.length === 1 ? p : undefined;
    }, "the slow server's process");
    await until(async () => (await status(world)).servers.find((s) => s.name === "fx")?.state === "ready", "fx ready");

    const s = await status(world);
    expect(s.servers.find((x) => x.name === "slow")).toMatchObject({ state: "starting", pid: slowPid });
    // Only the asking CLI is connected, and it is not listed.
    expect(s.clients).toEqual([]);
    const agent = await RawClient.open(join(world.mcpdHome, "mcpd.sock"));
    try {
      await agent.initialize();
      expect((await status(world)).clients.map((c) => c.name)).toEqual(["raw"]);
    } finally {
      agent.close();
    }

    expect((await world.run(["disable", "fx"])).code).toBe(0);
    const human = await world.run(["status"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(new RegExp(`^slow +starting +stdio +${slowPid} `, "m"));
    expect(human.stdout).toMatch(/^fx +disabled /m);
    expect(human.stdout).toMatch(/^off +disabled /m);
    // Neither starting nor disabled is a problem line; disabled never reads "disabled: disabled".
    expect(human.stdout).not.toMatch(/^ +slow: /m);
    expect(human.stdout).not.toContain("disabled: disabled");
    // A disabled server's one line says who disabled it and how to enable it.
    expect(count(human.stdout, "  off: ")).toBe(1);
    expect(human.stdout).toMatch(/^ +off: disabled in the config file .*mcpd enable off/m);
    expect(count(human.stdout, "  fx: ")).toBe(1);
    expect(human.stdout).toMatch(/^ +fx: disabled by mcpd disable at .*mcpd enable fx/m);
    expect(human.stdout).toContain("Clients: none connected");
  });
});

describe("mcpd logs", () => {
  it("regression: -n 0 is accepted; a server that has written nothing is said so in one line", async () => {
    world = new CliWorld();
    world.writeConfig({ fx: world.fixture("fx"), idle: world.fixture("idle", [], { startup: "lazy" }) });
    expect((await world.run(["start"])).code).toBe(0);
    await until(async () => (await world.run(["logs", "fx"])).stdout.includes("fixture fx ready"), "fx's stderr");

    for (const args of [
      ["logs", "-n", "0"],
      ["logs", "fx", "-n", "0"],
    ]) {
      const r = await world.run(args);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
      expect(r.stdout, args.join(" ")).toBe("");
    }
    const idle = await world.run(["logs", "idle"]);
    expect(idle.code, idle.stderr).toBe(0);
    expect(idle.stdout).toBe("");
    expect(idle.stderr).toBe('mcpd: server "idle" has written nothing to stderr yet\n');
    // An unknown server is still an error, not "nothing written".
    const unknown = await world.run(["logs", "nope"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/nope/);
  });

  it("regression: -f polls on without piling up abort listeners (MaxListenersExceededWarning after 3 s)", {
    timeout: 120_000,
  }, async () => {
    world = new CliWorld();
    world.writeConfig({ fx: world.fixture("fx") });
    expect((await world.run(["start", "--log-level", "debug"])).code).toBe(0);
    const agent = await RawClient.open(join(world.mcpdHome, "mcpd.sock"));
    try {
      await agent.initialize();
      await until(async () => (await agent.request("tools/call", { name: "fx__echo", arguments: { text: "up" } })).result, "fx to answer");

      // -n 0: only what comes after the start, like `tail -n 0 -f`.
      const daemonLog = world.spawn(["logs", "-f", "-n", "0"]);
      const serverLog = world.spawn(["logs", "fx", "-f", "-n", "0"]);
      const out = { daemon: "", server: "", daemonErr: "", serverErr: "" };
      daemonLog.stdout?.on("data", (d: Buffer) => (out.daemon += d.toString()));
      daemonLog.stderr?.on("data", (d: Buffer) => (out.daemonErr += d.toString()));
      serverLog.stdout?.on("data", (d: Buffer) => (out.server += d.toString()));
      serverLog.stderr?.on("data", (d: Buffer) => (out.serverErr += d.toString()));
      // A follower prints nothing of what was there when it started, and we cannot see when that was:
      // cause lines until each follower has printed one.
      for (let k = 1; !out.server.includes("sync-"); k++) {
        if (k > 50 || serverLog.exitCode !== null) throw new Error(`the server follower printed nothing; stderr: ${out.serverErr}`);
        await agent.request("tools/call", { name: "fx__stderr", arguments: { text: `sync-${k}` } });
        await until(() => out.server.includes("sync-"), "a sync line", 2_000).catch(() => {});
      }
      for (let k = 1; !out.daemon.includes("client connected"); k++) {
        if (k > 50 || daemonLog.exitCode !== null) throw new Error(`the daemon log follower printed nothing; stderr: ${out.daemonErr}`);
        await touchSocket(world);
        await until(() => out.daemon.includes("client connected"), "a daemon log line", 2_000).catch(() => {});
      }

      // Each new line is printed by a later poll than the one before: 21 rounds, at least 21 polls each.
      const base = count(out.daemon, "client connected");
      for (let i = 1; i <= 21; i++) {
        await touchSocket(world);
        await agent.request("tools/call", { name: "fx__stderr", arguments: { text: `round-${i}` } });
        await until(() => count(out.daemon, "client connected") >= base + i, `daemon log line ${i}`, 30_000);
        await until(() => out.server.includes(`round-${i}\n`), `server stderr line ${i}`, 30_000);
      }
      expect(out.daemonErr).not.toContain("MaxListenersExceededWarning");
      expect(out.serverErr).not.toContain("MaxListenersExceededWarning");
      // Nothing from before the start was printed.
      expect(out.daemon).not.toContain("mcpd started");
      expect(out.server).not.toContain("fixture fx ready");
      expect(out.server.split("\n")[0]).toMatch(/^sync-\d+$/);

      for (const p of [daemonLog, serverLog]) {
        const exited = new Promise((r) => p.once("exit", r));
        p.kill("SIGINT");
        await exited;
        expect(p.exitCode).toBe(0);
      }
    } finally {
      agent.close();
    }
  });
});

describe("mcpd tools", () => {
  it("regression: lists a lazy server's tools, as an agent's aggregate tools/list does", async () => {
    world = new CliWorld();
    world.writeConfig({ fx: world.fixture("fx"), lazy: world.fixture("lazy", [], { startup: "lazy" }) });
    expect((await world.run(["start"])).code).toBe(0);
    await until(async () => (await status(world)).servers.find((s) => s.name === "fx")?.state === "ready", "fx ready");
    expect((await status(world)).servers.find((s) => s.name === "lazy")?.state).toBe("stopped");

    const human = await world.run(["tools"]);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/^lazy__echo +lazy +echo/m);
    const cli = (JSON.parse((await world.run(["tools", "--json"])).stdout) as Array<{ exposedName: string }>).map((t) => t.exposedName);

    const agent = await RawClient.open(join(world.mcpdHome, "mcpd.sock"));
    try {
      await agent.initialize();
      const listed = (await agent.request("tools/list")).result.tools.map((t: { name: string }) => t.name);
      expect(listed).toContain("lazy__echo");
      expect([...cli].sort()).toEqual([...listed].sort());
    } finally {
      agent.close();
    }
  });
});
