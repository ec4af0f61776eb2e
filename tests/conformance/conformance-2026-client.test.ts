/**
 * The conformance suite 0.2.x's client scenarios (suite-2026.ts) with mcpd's upstream client: the client
 * the suite runs is client-2026.mjs, which starts a real mcpd with the scenario's server as its one HTTP
 * server and drives it as a 2025-era client of that server's transparent view, so what the scenario's
 * server judges is what mcpd sends (the era probe, the 2026 envelope, Mcp-Method / Mcp-Name / Mcp-Param-*
 * headers, tools with invalid x-mcp-header annotations dropped, input_required rounds, SSE resumption).
 * Every client scenario both revisions require but `auth/*` (which tests/conformance/conformance.test.ts
 * and the OAuth work cover), six at a time. Without Node 22 this file skips, saying why.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, inject, it } from "vitest";
import { createTempDir } from "../helpers/process.js";
import { scenarioResult } from "./server-scenarios.js";
import { readSuiteChecks, type Revision, runSuiteCli } from "./suite-2026.js";

const CLIENT = join(dirname(fileURLToPath(import.meta.url)), "client-2026.mjs");
const node22 = inject("node22");

/** The non-auth client scenarios each revision requires (`conformance list --client --requirements <revision>`). */
const CLIENT_SCENARIOS: readonly (readonly [Revision, string])[] = [
  ["2026-07-28", "tools_call"],
  ["2026-07-28", "request-metadata"],
  ["2026-07-28", "sep-2322-client-request-state"],
  ["2026-07-28", "http-standard-headers"],
  ["2026-07-28", "http-custom-headers"],
  ["2026-07-28", "http-invalid-tool-headers"],
  ["2026-07-28", "json-schema-ref-no-deref"],
  ["2025-11-25", "initialize"],
  ["2025-11-25", "tools_call"],
  ["2025-11-25", "elicitation-sep1034-client-defaults"],
  ["2025-11-25", "sse-retry"],
];

/** Runs one client scenario at `revision`; its verdict (from checks.json) and the CLI's output. */
async function runClientScenario(node: string, revision: Revision, scenario: string) {
  const out = await createTempDir("mcpd-conformance26-client-");
  try {
    const args = ["client", "--command", `${process.execPath} ${CLIENT}`, "--scenario", scenario, "--spec-version", revision];
    const { code, output } = await runSuiteCli(node, [...args, "--timeout", "60000", "-o", out.path], 120_000);
    const checks = (await readSuiteChecks(out.path)).get(scenario) ?? [];
    return { code, output, result: scenarioResult(scenario, checks) };
  } finally {
    await out.remove();
  }
}

/** Every scenario run, at most `limit` at once (each starts a CLI, a scenario server and an mcpd). */
async function runAll(node: string, limit: number) {
  const results = new Map<string, Awaited<ReturnType<typeof runClientScenario>>>();
  const queue = [...CLIENT_SCENARIOS];
  const worker = async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift())
      results.set(next.join(" "), await runClientScenario(node, ...next));
  };
  await Promise.all(Array.from({ length: limit }, worker));
  return results;
}

describe.skipIf("skip" in node22)(
  `conformance 0.2.x client scenarios with mcpd's upstream client${"skip" in node22 ? ` (skipped: ${node22.skip})` : ""}`,
  () => {
    const node = "path" in node22 ? node22.path : "";
    let runs: Awaited<ReturnType<typeof runAll>>;

    it("runs them all", { timeout: 300_000 }, async () => {
      runs = await runAll(node, 6);
      expect(runs.size).toBe(CLIENT_SCENARIOS.length);
    });

    it.each(CLIENT_SCENARIOS)("%s: passes %s", (revision, scenario) => {
      const run = runs.get(`${revision} ${scenario}`)!;
      const why = `${run.result.problems.join("; ")}\n${run.output.slice(-6000)}`;
      expect(run.result.outcome, why).toBe("passed");
      expect(run.output, why).toMatch(/OVERALL: PASSED/);
      expect(run.code, why).toBe(0);
    });
  },
);
