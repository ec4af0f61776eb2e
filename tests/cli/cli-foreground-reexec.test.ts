/**
 * `mcpd start --foreground` (as Docker, supervisord or a user runs it, from a plain node) runs the daemon
 * as its child, started once with the settings every daemon mcpd launches has: glibc's allocator told to
 * give memory back and node's flags (docs/operations.md, "The daemon's memory"). The process started
 * passes signals on and exits with the daemon's exit code; `mcpd status` and the pid file name the
 * daemon's own pid. A node that already has the settings, or MCPD_FOREGROUND_REEXEC=0, runs it in place.
 */
import { readFileSync } from "node:fs";
import { DAEMON_NODE_FLAGS } from "@mcpd/daemon";
import { afterEach, describe, expect, it } from "vitest";
import { readProcStat } from "@mcpd/transports/procfs";
import { CliWorld, alive, until } from "./cli-harness.js";

let world: CliWorld | undefined;
afterEach(async () => {
  await world?.dispose();
  world = undefined;
});

function environOf(pid: number): Map<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean);
  return new Map(entries.map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]));
}

function cmdlineOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
}

/** A world whose environment is a plain shell's: no NODE_OPTIONS and no MALLOC_* settings of its own. */
function plainWorld(): CliWorld {
  const w = new CliWorld();
  for (const k of Object.keys(w.env))
    if (k.startsWith("MALLOC_") || k === "NODE_OPTIONS" || k === "MCPD_FOREGROUND_REEXEC") delete w.env[k];
  w.writeConfig({ fx: w.fixture("fx") });
  return w;
}

/** Starts `mcpd start --foreground`; resolves with it, its stderr so far, and the daemon's pid once the socket answers. */
async function foreground(w: CliWorld, env = w.env, nodeArgs: string[] = []) {
  const fg = w.spawn(["start", "--foreground"], { env, nodeArgs });
  let err = "";
  fg.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    fg.once("exit", (code, signal) => r({ code, signal })),
  );
  await until(async () => (await w.run(["status"])).code === 0, "the foreground daemon to answer", 30_000);
  const daemonPid = JSON.parse((await w.run(["status", "--json"])).stdout).daemon.pid as number;
  return { fg, daemonPid, exited, stderr: () => err };
}

function ppidOf(pid: number): number | undefined {
  return readProcStat(pid)?.ppid;
}

describe.skipIf(process.platform !== "linux")("mcpd start --foreground: the daemon's settings (reads /proc, Linux only)", () => {
  it("regression: a foreground start from a plain node gives the daemon the allocator settings and node flags (it ran without them: RSS stayed 150 MiB up after a load of slow lines); signals reach it, and the exit code comes back", {
    timeout: 120_000,
  }, async () => {
    const w = (world = plainWorld());
    const { fg, daemonPid, exited, stderr } = await foreground(w);
    // The daemon is the started process's child, with the settings in its environment and on its command line.
    expect(daemonPid).not.toBe(fg.pid);
    expect(ppidOf(daemonPid)).toBe(fg.pid);
    expect(Number(readFileSync(`${w.mcpdHome}/mcpd.pid`, "utf8"))).toBe(daemonPid);
    const env = environOf(daemonPid);
    expect([env.get("MALLOC_MMAP_THRESHOLD_"), env.get("MALLOC_TRIM_THRESHOLD_")]).toEqual(["65536", "131072"]);
    const args = cmdlineOf(daemonPid);
    const script = args.findIndex((a) => a.endsWith("mcpd.js"));
    for (const flag of DAEMON_NODE_FLAGS) expect(args.slice(1, script)).toContain(flag);
    // Its servers get neither the settings nor the marker.
    const server = await until(() => w.processes().find((p) => p !== daemonPid && p !== fg.pid), "the server to start");
    expect([...environOf(server).keys()].filter((k) => k.startsWith("MALLOC_") || k === "MCPD_FOREGROUND_PARENT")).toEqual([]);
    // SIGHUP to the process started reloads the daemon; SIGTERM stops it, and both exit 0.
    fg.kill("SIGHUP");
    await until(() => /config reloaded/.test(stderr()), "the reload the forwarded SIGHUP asked for");
    expect(alive(daemonPid)).toBe(true);
    fg.kill("SIGTERM");
    expect(await exited).toEqual({ code: 0, signal: null });
    await until(() => !alive(daemonPid), "the daemon gone");
    expect(stderr()).toMatch(/mcpd stopped/);
  });

  it("a daemon killed by a signal ends the started process by the same signal", { timeout: 120_000 }, async () => {
    const w = (world = plainWorld());
    const { fg, daemonPid, exited } = await foreground(w);
    expect(daemonPid).not.toBe(fg.pid);
    process.kill(daemonPid, "SIGKILL");
    expect(await exited).toEqual({ code: null, signal: "SIGKILL" });
  });

  it("a daemon whose started process was killed (SIGKILL) stops by itself", { timeout: 120_000 }, async () => {
    const w = (world = plainWorld());
    const { fg, daemonPid, exited } = await foreground(w);
    expect(daemonPid).not.toBe(fg.pid);
    fg.kill("SIGKILL");
    expect((await exited).signal).toBe("SIGKILL");
    await until(() => !alive(daemonPid), "the orphaned daemon to stop", 30_000);
    await until(() => w.processes().length === 0, "its server gone too");
  });

  it("runs the daemon as a child only when node lacks a setting: in place when it has them all (a service file), or with MCPD_FOREGROUND_REEXEC=0", {
    timeout: 120_000,
  }, async () => {
    const w = (world = plainWorld());
    const plain = await foreground(w);
    expect(plain.daemonPid).not.toBe(plain.fg.pid);
    plain.fg.kill("SIGTERM");
    expect((await plain.exited).code).toBe(0);
    const withAll = { ...w.env, MALLOC_MMAP_THRESHOLD_: "65536", MALLOC_TRIM_THRESHOLD_: "131072" };
    const a = await foreground(w, withAll, [...DAEMON_NODE_FLAGS]);
    expect(a.daemonPid).toBe(a.fg.pid);
    a.fg.kill("SIGTERM");
    expect((await a.exited).code).toBe(0);
    const b = await foreground(w, { ...w.env, MCPD_FOREGROUND_REEXEC: "0" });
    expect(b.daemonPid).toBe(b.fg.pid);
    expect(environOf(b.daemonPid).has("MALLOC_MMAP_THRESHOLD_")).toBe(false);
    b.fg.kill("SIGTERM");
    expect((await b.exited).code).toBe(0);
  });
});
