/**
 * A vitest reporter that prints, at the end of a run, the ten test files that took longest, so CI shows
 * where the suite's time goes. Times are each file's own (its tests and hooks, plus collecting it), not
 * wall time: files run in parallel.
 */
import type { Reporter, TestModule } from "vitest/node";

/** How many files the summary names. */
const SHOWN = 10;

export default class SlowestFilesReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const rows = testModules
      .map((m) => {
        const d = m.diagnostic();
        return { file: m.relativeModuleId, ms: d.duration + d.collectDuration };
      })
      .sort((a, b) => b.ms - a.ms)
      .slice(0, SHOWN);
    if (rows.length === 0) return;
    const lines = rows.map((r) => `  ${(r.ms / 1000).toFixed(1).padStart(6)} s  ${r.file}`);
    process.stdout.write(`\nThe ${rows.length} slowest test files:\n${lines.join("\n")}\n`);
  }
}
