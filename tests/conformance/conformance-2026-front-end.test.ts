/**
 * The conformance suite 0.2.x (suite-2026.ts) through mcpd's HTTP front end, in the transparent view
 * (`/servers/<name>/mcp`) of the conformance fixture, reached through auth-relay.ts:
 *
 * - the fixture serving both eras, which mcpd finds to be a 2026-era server (its probe's
 *   `server/discover` is answered), behind mcpd over stdio and over Streamable HTTP: every server scenario
 *   2026-07-28 requires and every one 2025-11-25 requires (the 2025 ones through mcpd's translation of a
 *   2025 client to a 2026 server);
 * - the fixture serving only the 2025 era (`--era 2025`), over stdio and over HTTP: the 2026-07-28
 *   `tools-*`, `resources-*`, `prompts-*`, `completion-*` and `input-required-result-*` scenarios, through
 *   mcpd's translation of a 2026 client to a 2025 server.
 *
 * The fixture passes all of them on its own (conformance-2026-direct.test.ts), so a failure here is
 * mcpd's. The six CLI runs go three at a time. Without Node 22 this file skips, saying why.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startTestDaemon, type TestDaemon } from "../e2e/harness.js";
import { isAlive } from "../helpers/process.js";
import { httpFront } from "../http/http-harness.js";
import { type AuthRelay, authRelay } from "./auth-relay.js";
import { CONFORMANCE_FIXTURE, type RunningFixture, startConformanceFixture } from "./server-scenarios.js";
import { explain, type Revision, runRequirements, SERVER_2025, SERVER_2026, type SuiteRun, TRANSLATED_2026 } from "./suite-2026.js";

const node22 = inject("node22");
const fixtures: RunningFixture[] = [];
let daemon: TestDaemon | undefined;
let relay: AuthRelay | undefined;
const runs = new Map<string, SuiteRun>();

/**
 * The translation scenarios a 2025-era server cannot pass behind any relay, and why: what the check asks
 * for only the server itself could have given. Each is asserted to fail for exactly that reason.
 */
const NOT_TRANSLATABLE: readonly (readonly [scenario: string, problem: RegExp, why: string])[] = [
  [
    "input-required-result-basic-elicitation",
    /inputRequests missing expected key "user_name"/,
    'checks the key the 2026 server names its request by ("user_name"); a 2025 server\'s elicitation/create has no key, so mcpd names it "mcpd"',
  ],
  [
    "input-required-result-ignore-extra-params",
    /Server did not return complete result when valid inputResponses were provided alongside extra keys/,
    'sends a first call already carrying inputResponses["user_name"] (the 2026 server\'s own key) and no requestState: a 2025 server takes no answers before it asks, so it asks, and the call is input_required',
  ],
];

/** server name in mcpd -> how it is reached. */
const MODERN = { conf: "stdio", confhttp: "http" } as const;
const LEGACY = { legacy: "stdio", legacyhttp: "http" } as const;

describe.skipIf("skip" in node22)(
  `conformance 0.2.x server scenarios through mcpd${"skip" in node22 ? ` (skipped: ${node22.skip})` : ""}`,
  () => {
    const node = "path" in node22 ? node22.path : "";

    beforeAll(async () => {
      const [both, only2025] = await Promise.all([startConformanceFixture(), startConformanceFixture(["--era", "2025"])]);
      fixtures.push(both, only2025);
      daemon = await startTestDaemon({
        conf: { command: process.execPath, args: [CONFORMANCE_FIXTURE, "--stdio"] },
        confhttp: { type: "http", url: both.url },
        legacy: { command: process.execPath, args: [CONFORMANCE_FIXTURE, "--stdio", "--era", "2025"] },
        legacyhttp: { type: "http", url: only2025.url },
      });
      relay = await authRelay(await httpFront(daemon));
      const plan: [string, Revision][] = [
        ...Object.keys(MODERN).flatMap((name): [string, Revision][] => [
          [name, "2026-07-28"],
          [name, "2025-11-25"],
        ]),
        ...Object.keys(LEGACY).map((name): [string, Revision] => [name, "2026-07-28"]),
      ];
      // Three CLI runs at a time: all six at once load a 2-core machine past the suite's wait windows.
      const worker = async () => {
        for (let next = plan.shift(); next !== undefined; next = plan.shift()) {
          const [name, revision] = next;
          runs.set(`${name} ${revision}`, await runRequirements(node, `${relay!.url}/servers/${name}/mcp`, revision, 150_000));
        }
      };
      await Promise.all([worker(), worker(), worker()]);
    }, 400_000);

    afterAll(async () => {
      await relay?.close();
      await daemon?.stop();
      for (const fixture of fixtures) await fixture.stop();
      for (const fixture of fixtures) expect(isAlive(fixture.pid)).toBe(false);
    });

    describe.each(Object.entries(MODERN))("a 2026-era server (%s, over %s)", (name) => {
      it.each(SERVER_2026)("2026-07-28: passes %s", (scenario) => {
        const run = runs.get(`${name} 2026-07-28`)!;
        expect(run.results.get(scenario)?.outcome, explain(run, scenario)).toBe("passed");
      });
      it.each(SERVER_2025)("2025-11-25: passes %s", (scenario) => {
        const run = runs.get(`${name} 2025-11-25`)!;
        expect(run.results.get(scenario)?.outcome, explain(run, scenario)).toBe("passed");
      });
    });

    describe.each(Object.entries(LEGACY))("a 2025-era server (%s, over %s), through translation", (name) => {
      const translatable = TRANSLATED_2026.filter((s) => !NOT_TRANSLATABLE.some(([n]) => n === s));
      it.each(translatable)("2026-07-28: passes %s", (scenario) => {
        const run = runs.get(`${name} 2026-07-28`)!;
        expect(run.results.get(scenario)?.outcome, explain(run, scenario)).toBe("passed");
      });
      it.each(NOT_TRANSLATABLE)("2026-07-28: %s does not pass, as no relay can make it: %s", (scenario, problem) => {
        const run = runs.get(`${name} 2026-07-28`)!;
        const result = run.results.get(scenario);
        expect(result?.outcome, explain(run, scenario)).not.toBe("passed");
        expect(result?.problems.join("; "), explain(run, scenario)).toMatch(problem);
      });
    });
  },
);
