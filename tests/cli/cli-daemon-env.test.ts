/**
 * The environment of the daemon `mcpd start` launches: glibc's allocator is told to give memory back, so
 * the daemon's RSS returns near its baseline after a load (docs/reliability.md, daemon-wide memory
 * budget); the user's own settings win, and the servers never receive them (their environment is an
 * allowlist).
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { CliWorld, until } from "./cli-harness.js";

let world: CliWorld | undefined;
afterEach(async () => {
  await world?.dispose();
  world = undefined;
});

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
});
