/**
 * The environment of the daemon `mcpd start` launches: glibc's allocator is told to give memory back, so
 * the daemon's RSS returns near its baseline after a load (docs/reliability.md, daemon-wide memory
 * budget); the user's own settings win, and the servers never receive them (their environment is an
 * allowlist). Its node flags: V8's young generation is capped (docs/operations.md, "The daemon's memory"),
 * unless the user's NODE_OPTIONS sets that flag itself.
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { CliWorld, until } from "./cli-harness.js";

let world: CliWorld | undefined;
afterEach(async () => {
  await world?.dispose();
  world = undefined;
});

/** The command line of a running process, from /proc/<pid>/cmdline. */
function cmdlineOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
}

/** The environment of a running process, from /proc/<pid>/environ. */
function environOf(pid: number): Map<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean);
  return new Map(entries.map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]));
}

describe.skipIf(process.platform !== "linux")("mcpd start: the daemon's environment (reads /proc, Linux only)", () => {
  it("regression: the daemon runs with glibc told to give memory back (its RSS stayed 3.4x its baseline after a load); servers do not inherit it", async () => {
    const w = (world = new CliWorld());
    w.writeConfig({ fx: w.fixture("fx") });
    expect((await w.run(["start"])).code).toBe(0);
    const daemon = w.daemonPid() as number;
    const env = environOf(daemon);
    expect([env.get("MALLOC_MMAP_THRESHOLD_"), env.get("MALLOC_TRIM_THRESHOLD_")]).toEqual(["65536", "131072"]);
    const server = await until(() => w.processes().find((p) => p !== daemon), "the server to start");
    expect(environOf(server).has("MALLOC_MMAP_THRESHOLD_")).toBe(false);
    expect((await w.run(["stop"])).code).toBe(0);
  });

  it("keeps a threshold the user set", async () => {
    const w = (world = new CliWorld());
    w.writeConfig({ fx: w.fixture("fx") });
    expect((await w.run(["start"], { env: { ...w.env, MALLOC_MMAP_THRESHOLD_: "16384" } })).code).toBe(0);
    const env = environOf(w.daemonPid() as number);
    expect([env.get("MALLOC_MMAP_THRESHOLD_"), env.get("MALLOC_TRIM_THRESHOLD_")]).toEqual(["16384", "131072"]);
    expect((await w.run(["stop"])).code).toBe(0);
  });

  it("regression: the daemon runs with V8's young generation capped (--max-semi-space-size=2: it grew to 16 MB semi-spaces and kept them, ~10 MB of RSS with 1,000 clients)", async () => {
    const w = (world = new CliWorld());
    w.writeConfig({ fx: w.fixture("fx") });
    expect((await w.run(["start"])).code).toBe(0);
    const args = cmdlineOf(w.daemonPid() as number);
    // A node flag: before the script, where node reads it, not among mcpd's own arguments.
    const script = args.findIndex((a) => a.endsWith("mcpd.js"));
    expect(script).toBeGreaterThan(0);
    expect(args.slice(1, script)).toContain("--max-semi-space-size=2");
    expect((await w.run(["stop"])).code).toBe(0);
  });

  it("keeps a semi-space size the user set in NODE_OPTIONS (a command-line flag would override it)", async () => {
    const w = (world = new CliWorld());
    w.writeConfig({ fx: w.fixture("fx") });
    expect((await w.run(["start"], { env: { ...w.env, NODE_OPTIONS: "--max-semi-space-size=8" } })).code).toBe(0);
    const daemon = w.daemonPid() as number;
    expect(cmdlineOf(daemon).some((a) => a.startsWith("--max-semi-space-size"))).toBe(false);
    expect(environOf(daemon).get("NODE_OPTIONS")).toBe("--max-semi-space-size=8");
    expect((await w.run(["stop"])).code).toBe(0);
  });
});
