/**
 * `mcpd logs SERVER` and the stderr fields of `mcpd status --json`: what a server wrote to stderr is kept
 * (bounded) across its restarts, with a marker at each, so the reason it failed is never lost.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CliWorld, ROOT, until } from "./cli-harness.js";

const THROW = join(ROOT, "tests/fixtures/servers/throw-at-start.mjs");

let world: CliWorld;
afterEach(async () => {
  await world?.dispose();
});

async function statusJson(w: CliWorld): Promise<any> {
  const r = await w.run(["status", "--json"]);
  if (r.code !== 0) throw new Error(`status failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

describe("mcpd logs SERVER", () => {
  it("regression: a server that wrote two lines and threw ends failed; mcpd logs shows the Error line and the lines before it, run after run with a marker between; lastStderr is set for a ready server", async () => {
    world = new CliWorld();
    world.writeConfig({
      // One restart: two runs, and then failed. The era is set: with "auto", a server that exits before it
      // answers the era probe gets one more run, in the 2025 era (docs/protocol.md, Eras upstream).
      boom: {
        command: process.execPath,
        args: [THROW],
        restart: { maxRestarts: 1, initialDelayMs: 50, maxDelayMs: 100 },
        protocolEra: "2025",
      },
      ok: world.fixture("ok"),
    });
    expect((await world.run(["start"])).code).toBe(0);
    const s = await until(
      async () => {
        const st = await statusJson(world);
        const byName = Object.fromEntries(st.servers.map((x: any) => [x.name, x]));
        return byName.boom?.state === "failed" && byName.ok?.state === "ready" ? byName : undefined;
      },
      "boom failed and ok ready",
      30_000,
    );

    // A ready server that has written to stderr (the fixture says "fixture ok ready" at start).
    expect(s.ok.lastStderr).toBe("fixture ok ready");
    // The failed one: the line that says why, not Node's version footer.
    expect(s.boom.lastStderr).toBe("Error: boom: DATABASE_URL is not set");
    // And the reason quotes it (it used to quote the stack's last frame, a blank line and the version).
    expect(s.boom.stateReason).toContain("exited with code 1; stderr: Error: boom: DATABASE_URL is not set");

    const r = await world.run(["logs", "boom"]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split("\n");
    const errors = lines.flatMap((l, i) => (l === "Error: boom: DATABASE_URL is not set" ? [i] : []));
    // Both runs are there, each with its two lines before the error.
    expect(errors.length, r.stdout).toBe(2);
    for (const i of errors) {
      const before = lines.slice(0, i);
      expect(before.lastIndexOf("throw-at-start: loading settings")).toBeGreaterThanOrEqual(0);
      expect(before.lastIndexOf("throw-at-start: connecting to the database")).toBeGreaterThan(
        before.lastIndexOf("throw-at-start: loading settings"),
      );
    }
    // A marker between the runs, naming how the first one ended.
    const between = lines.slice(errors[0], errors[1]);
    expect(
      between.some((l) => /^--- mcpd: .*exited with code 1/.test(l)),
      r.stdout,
    ).toBe(true);
    expect(lines.filter((l) => l === "throw-at-start: loading settings")).toHaveLength(2);

    // -n bounds it: the last lines only, still ending with the last run's end.
    const short = await world.run(["logs", "boom", "-n", "3"]);
    expect(short.stdout.trimEnd().split("\n")).toHaveLength(3);

    // Still the same after a manual restart of a server that starts fine (its history is kept too).
    const okLogs = await world.run(["logs", "ok"]);
    expect(okLogs.stdout).toContain("fixture ok ready");
    expect((await world.run(["restart", "ok"])).code).toBe(0);
    await until(async () => (await statusJson(world)).servers.find((x: any) => x.name === "ok")?.state === "ready", "ok ready again");
    const after = (await world.run(["logs", "ok"])).stdout.split("\n");
    expect(after.filter((l) => l === "fixture ok ready")).toHaveLength(2);
    expect(after.some((l) => l.startsWith("--- mcpd: "))).toBe(true);
  });
});
