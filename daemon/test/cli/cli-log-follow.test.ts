import { appendFileSync, mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { getEventListeners } from "node:events";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitFor } from "../../../tests/helpers/process.js";
import { followFile, newTailLines, pause, tailFile } from "../../src/cli/log-follow.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcpd-logf-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function until(cond: () => boolean, what: string): Promise<void> {
  await waitFor(cond, { message: what });
}

describe("tailFile", () => {
  it("returns the last N lines of a large file, and undefined when it is missing", async () => {
    const file = join(dir, "a.log");
    writeFileSync(file, Array.from({ length: 20_000 }, (_, i) => `line ${i}`).join("\n") + "\n");
    const t = await tailFile(file, 3);
    expect(t?.lines).toEqual(["line 19997", "line 19998", "line 19999"]);
    expect(t?.size).toBe(statSync(file).size);
    expect((await tailFile(file, 50_000))?.lines.length).toBe(20_000);
    expect(await tailFile(join(dir, "missing.log"), 3)).toBeUndefined();
  });
});

describe("followFile", () => {
  it("prints appended lines, waits for a partial line to end, and starts over after rotation", async () => {
    const file = join(dir, "b.log");
    writeFileSync(file, "old\n");
    const start = (await tailFile(file, 1))!;
    const seen: string[] = [];
    const ac = new AbortController();
    const done = followFile(file, start, (l) => seen.push(l), ac.signal);
    appendFileSync(file, "one\ntw");
    await until(() => seen.length === 1, "one");
    appendFileSync(file, "o\n");
    await until(() => seen.length === 2, "two");
    renameSync(file, `${file}.1`);
    writeFileSync(file, "fresh\n");
    await until(() => seen.length === 3, "the rotated file's line");
    ac.abort();
    await done;
    expect(seen).toEqual(["one", "two", "fresh"]);
  });
});

describe("abort listeners (regression: `mcpd logs -f` printed MaxListenersExceededWarning after 3 s)", () => {
  it("followFile keeps at most one abort listener on its signal however many polls it makes", async () => {
    const file = join(dir, "c.log");
    writeFileSync(file, "");
    const start = (await tailFile(file, 0))!;
    const seen: string[] = [];
    const ac = new AbortController();
    const done = followFile(file, start, (l) => seen.push(l), ac.signal, { pollMs: 1 });
    // Each line is seen only by a later poll than the one before it: 30 lines, at least 30 polls.
    for (let i = 0; i < 30; i++) {
      appendFileSync(file, `line ${i}\n`);
      await until(() => seen.length === i + 1, `line ${i}`);
      expect(getEventListeners(ac.signal, "abort").length).toBeLessThanOrEqual(1);
    }
    ac.abort();
    await done;
    expect(getEventListeners(ac.signal, "abort")).toEqual([]);
  });

  it("pause removes its listener when the time is up, and ends at once on abort", async () => {
    const ac = new AbortController();
    for (let i = 0; i < 20; i++) await pause(1, ac.signal);
    expect(getEventListeners(ac.signal, "abort")).toEqual([]);
    const pending = pause(60_000, ac.signal);
    expect(getEventListeners(ac.signal, "abort").length).toBe(1);
    ac.abort();
    await pending;
    expect(getEventListeners(ac.signal, "abort")).toEqual([]);
    await pause(60_000, ac.signal); // already aborted: returns at once
  });
});

describe("newTailLines", () => {
  it("finds what is new in a sliding tail", () => {
    expect(newTailLines([], ["a", "b"])).toEqual(["a", "b"]);
    expect(newTailLines(["a", "b", "c"], ["b", "c", "d", "e"])).toEqual(["d", "e"]);
    expect(newTailLines(["a", "b"], ["a", "b"])).toEqual([]);
    expect(newTailLines(["a", "b"], ["x", "y"])).toEqual(["x", "y"]);
    expect(newTailLines(["x", "x"], ["x", "x", "x"])).toEqual(["x"]);
  });
});
