/**
 * The official conformance suite's 32 server scenarios against mcpd's HTTP front end, in the transparent
 * view (`/servers/<name>/mcp`) of the conformance fixture: once with the fixture behind mcpd over stdio,
 * once with it behind mcpd over Streamable HTTP, serving only the 2025 era (`--era 2025`; its 2026 half is
 * proven through mcpd by conformance-2026-front-end.test.ts). The same fixture passes the suite on its own
 * (fixture-direct.test.ts), so a failure here is mcpd's.
 * The suite's CLI reaches mcpd through tests/conformance/auth-relay.ts, which adds the bearer token.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestDaemon, startTestDaemon } from "../e2e/harness.js";
import { httpFront } from "../http/http-harness.js";
import { isAlive } from "../helpers/process.js";
import { type AuthRelay, authRelay } from "./auth-relay.js";
import {
  CONFORMANCE_FIXTURE,
  describeFailures,
  type RunningFixture,
  runServerSuite,
  SERVER_SCENARIOS,
  type ServerSuiteRun,
  startConformanceFixture,
} from "./server-scenarios.js";

let fixture: RunningFixture | undefined;
let daemon: TestDaemon | undefined;
let relay: AuthRelay | undefined;
const runs: Record<string, ServerSuiteRun> = {};

beforeAll(async () => {
  fixture = await startConformanceFixture(["--era", "2025"]);
  daemon = await startTestDaemon({
    conf: { command: process.execPath, args: [CONFORMANCE_FIXTURE, "--stdio", "--era", "2025"] },
    confhttp: { type: "http", url: fixture.url },
  });
  const r = await authRelay(await httpFront(daemon));
  relay = r;
  const [stdio, http] = await Promise.all([
    runServerSuite(`${r.url}/servers/conf/mcp`, undefined, { timeoutMs: 150_000 }),
    runServerSuite(`${r.url}/servers/confhttp/mcp`, undefined, { timeoutMs: 150_000 }),
  ]);
  runs.stdio = stdio;
  runs.http = http;
}, 200_000);

afterAll(async () => {
  await relay?.close();
  await daemon?.stop();
  await fixture?.stop();
  if (fixture !== undefined) expect(isAlive(fixture.pid)).toBe(false);
});

describe.each(["stdio", "http"])("conformance server scenarios through mcpd's HTTP front end, fixture behind mcpd over %s", (kind) => {
  it("ran all 32 scenarios", () => {
    const run = runs[kind] as ServerSuiteRun;
    expect(run.results.map((r) => r.scenario).sort(), run.output).toEqual([...SERVER_SCENARIOS].sort());
  });
  it.each([...SERVER_SCENARIOS])("passes %s", (scenario) => {
    const run = runs[kind] as ServerSuiteRun;
    const result = run.results.find((r) => r.scenario === scenario);
    expect(result?.outcome, describeFailures(run.results.filter((r) => r.scenario === scenario))).toBe("passed");
  });
});
