/**
 * The conformance fixture (tests/fixtures/servers/conformance-server.mjs) on its own against the
 * conformance suite 0.2.x (suite-2026.ts): the server scenarios that 2026-07-28 requires (37) and those
 * 2025-11-25 requires (30), over Streamable HTTP, both runs at once. The fixture serves both eras on one
 * endpoint (its 2026 half on the v2 SDK, its 2025 half on the v1 SDK), which makes it a trustworthy
 * backend when the same scenarios run through mcpd (conformance-2026-front-end.test.ts).
 *
 * The suite needs Node 22: without one (not Linux x64, or no install) this file skips, saying why.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { isAlive } from "../helpers/process.js";
import { type RunningFixture, startConformanceFixture } from "./server-scenarios.js";
import { explain, runRequirements, SERVER_2025, SERVER_2026, type SuiteRun } from "./suite-2026.js";

const node22 = inject("node22");
const runs: Partial<Record<"2026" | "2025", SuiteRun>> = {};
let fixture: RunningFixture | undefined;

describe.skipIf("skip" in node22)(
  `conformance 0.2.x server scenarios against the fixture${"skip" in node22 ? ` (skipped: ${node22.skip})` : ""}`,
  () => {
    const node = "path" in node22 ? node22.path : "";

    beforeAll(async () => {
      fixture = await startConformanceFixture();
      [runs["2026"], runs["2025"]] = await Promise.all([
        runRequirements(node, fixture.url, "2026-07-28"),
        runRequirements(node, fixture.url, "2025-11-25"),
      ]);
    }, 150_000);

    afterAll(async () => {
      await fixture?.stop();
      if (fixture !== undefined) expect(isAlive(fixture.pid)).toBe(false);
    });

    it.each(SERVER_2026)("2026-07-28: passes %s", (scenario) => {
      const run = runs["2026"]!;
      expect(run.results.get(scenario)?.outcome, explain(run, scenario)).toBe("passed");
    });

    it.each(SERVER_2025)("2025-11-25: passes %s", (scenario) => {
      const run = runs["2025"]!;
      expect(run.results.get(scenario)?.outcome, explain(run, scenario)).toBe("passed");
    });
  },
);
