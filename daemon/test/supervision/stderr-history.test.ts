import { describe, expect, it } from "vitest";
import { StderrHistory, STDERR_MARKER_PREFIX } from "../../src/supervision/stderr-history.js";

describe("StderrHistory", () => {
  it("keeps each ended run's lines with a marker after it, the running one's lines last", () => {
    const h = new StderrHistory(100, 64 * 1024);
    h.endRun(["a1", "a2"], "process 1 exited with code 1", new Date("2026-01-01T00:00:00Z"));
    h.endRun([], "start failed: command not found (ENOENT)", new Date("2026-01-01T00:00:01Z"));
    expect(h.tail(10, ["live"])).toEqual([
      "a1",
      "a2",
      `${STDERR_MARKER_PREFIX}2026-01-01T00:00:00.000Z process 1 exited with code 1 ---`,
      `${STDERR_MARKER_PREFIX}2026-01-01T00:00:01.000Z start failed: command not found (ENOENT) ---`,
      "live",
    ]);
    expect(h.tail(2, ["live"])).toEqual([
      `${STDERR_MARKER_PREFIX}2026-01-01T00:00:01.000Z start failed: command not found (ENOENT) ---`,
      "live",
    ]);
    expect(h.tail(1, ["l1", "l2"])).toEqual(["l2"]);
    expect(h.tail(0)).toEqual([]);
  });

  it("is bounded in lines and bytes across runs; a line longer than a quarter of the byte bound is cut", () => {
    const h = new StderrHistory(50, 1_000);
    for (let run = 0; run < 20; run++)
      h.endRun(
        Array.from({ length: 10 }, (_, i) => `run ${run} line ${i}`),
        `run ${run} ended`,
      );
    const all = h.tail(1_000);
    expect(all.length).toBeLessThanOrEqual(50);
    expect(Buffer.byteLength(all.join(""))).toBeLessThanOrEqual(1_000);
    expect(all.at(-1)).toMatch(/run 19 ended ---$/);
    h.endRun(["é".repeat(5_000)], "big");
    const big = h.tail(2);
    expect(Buffer.byteLength(big[0] as string)).toBeLessThanOrEqual(250);
    expect(big[0]).toMatch(/^é+…\[truncated\]$/);
  });

  it("names the line that states the error of the last run, not the runtime's footer", () => {
    const h = new StderrHistory(100, 64 * 1024);
    expect(h.headline).toBeUndefined();
    h.endRun(["starting", "Error: boom: DATABASE_URL is not set", "    at main (file.js:1:1)", "", "Node.js v20.20.2"], "exited");
    expect(h.headline).toBe("Error: boom: DATABASE_URL is not set");
    h.endRun(["fatal: boom"], "exited");
    expect(h.headline).toBe("fatal: boom");
    // A run that wrote nothing keeps the last headline.
    h.endRun([], "start failed");
    expect(h.headline).toBe("fatal: boom");
  });
});
