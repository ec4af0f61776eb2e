/**
 * The tool-search quality set is the one pinned in docs/tool-search.md (its sha256), and every task of it
 * and of the tuning set names a tool of the recorded catalog, as `<server>__<tool>`.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const CATALOG = path.join(ROOT, "tests/fixtures/tool-catalog");
const TASKS = path.join(ROOT, "tests/fixtures/tool-search-tasks");

interface Task {
  task: string;
  tool: string;
  server?: string;
}

function catalogNames(): Set<string> {
  const names = new Set<string>();
  for (const file of readdirSync(CATALOG).filter((f) => f.endsWith(".json"))) {
    const record = JSON.parse(readFileSync(path.join(CATALOG, file), "utf8")) as { id: string; tools: Array<{ name: string }> };
    for (const t of record.tools) names.add(`${record.id}__${t.name}`);
  }
  return names;
}

function tasks(set: string): Task[] {
  return (JSON.parse(readFileSync(path.join(TASKS, `${set}.json`), "utf8")) as { tasks: Task[] }).tasks;
}

describe("tool-search fixtures", () => {
  it("the quality set is the one whose sha256 docs/tool-search.md pins", () => {
    const hash = createHash("sha256")
      .update(readFileSync(path.join(TASKS, "quality.json")))
      .digest("hex");
    const docs = readFileSync(path.join(ROOT, "docs/tool-search.md"), "utf8");
    expect(docs).toContain(`sha256 ${hash}  tests/fixtures/tool-search-tasks/quality.json`);
  });

  it("every task names a tool of the catalog (and its server when it names one); the sets share no tool", () => {
    const names = catalogNames();
    const quality = tasks("quality");
    const tuning = tasks("tuning");
    expect(quality.length).toBeGreaterThanOrEqual(100);
    for (const t of [...quality, ...tuning]) {
      expect(names.has(t.tool), t.tool).toBe(true);
      if (t.server !== undefined) expect(t.tool.startsWith(`${t.server}__`), t.tool).toBe(true);
    }
    const inQuality = new Set(quality.map((t) => t.tool));
    expect(tuning.filter((t) => inQuality.has(t.tool))).toEqual([]);
  });

  it("the catalog holds at least ten servers, each saying where its list came from", () => {
    const files = readdirSync(CATALOG).filter((f) => f.endsWith(".json"));
    expect(files.length).toBeGreaterThanOrEqual(10);
    for (const file of files) {
      const record = JSON.parse(readFileSync(path.join(CATALOG, file), "utf8")) as { source: { package: string; version: string } };
      expect(record.source.package, file).toMatch(/\S/);
      expect(record.source.version, file).toMatch(/^\d/);
    }
  });
});
