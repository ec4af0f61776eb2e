import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Tool } from "@mcpd/protocol";
import { ToolCache } from "../../src/supervision/tool-cache.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tools(n: number, tag: string): Tool[] {
  return Array.from({ length: n }, (_, i) => ({ name: `${tag}_${i}`, description: "x".repeat(200), inputSchema: { type: "object" } }));
}

describe("ToolCache", () => {
  it("regression: concurrent writes of one server's tools (two refreshes at start, two caches) never fail and leave valid JSON", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcpd-cache-"));
    dirs.push(dir);
    const a = new ToolCache(dir);
    const b = new ToolCache(dir);
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 20; i++) writes.push((i % 2 === 0 ? a : b).write("srv", "h1", tools(50, `w${i}`)));
    // Before the fix every write of a process used the same temporary name: ENOENT on rename.
    const results = await Promise.allSettled(writes);
    expect(results.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
    const parsed = JSON.parse(readFileSync(join(dir, "srv-h1.tools.json"), "utf8"));
    expect(parsed.tools).toHaveLength(50);
    expect((await a.read("srv", "h1"))?.tools).toHaveLength(50);
    // No temporary file is left behind.
    expect(readdirSync(dir)).toEqual(["srv-h1.tools.json"]);
  });
});
