/**
 * The conformance fixture (tests/fixtures/servers/conformance-server.mjs) on its own, with nothing in
 * front of it: all 32 server scenarios of the official conformance suite pass against its Streamable HTTP
 * mode, and its stdio mode (how mcpd spawns it) serves the same tools. This is what makes the fixture a
 * trustworthy backend when the same suite later runs against mcpd's HTTP front end.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isAlive, waitFor } from "../helpers/process.js";
import {
  CONFORMANCE_FIXTURE,
  type ConformanceCheck,
  describeFailures,
  type RunningFixture,
  runServerSuite,
  SERVER_SCENARIOS,
  type ServerSuiteRun,
  scenarioResult,
  startConformanceFixture,
} from "./server-scenarios.js";

const SUITE_TIMEOUT_MS = 150_000;

let fixture: RunningFixture | undefined;
let suite: ServerSuiteRun;

beforeAll(async () => {
  fixture = await startConformanceFixture();
  suite = await runServerSuite(fixture.url, undefined, { timeoutMs: 120_000 });
}, SUITE_TIMEOUT_MS);

afterAll(async () => {
  await fixture?.stop();
  if (fixture !== undefined) expect(isAlive(fixture.pid)).toBe(false);
});

describe("conformance server scenarios against the fixture over Streamable HTTP (one CLI run)", () => {
  it("ran exactly the 32 known scenarios", () => {
    expect(
      suite.results.map((r) => r.scenario),
      suite.output,
    ).toEqual([...SERVER_SCENARIOS]);
  });

  it.each(SERVER_SCENARIOS)("passes %s", (scenario) => {
    const result = suite.results.find((r) => r.scenario === scenario);
    expect(result?.outcome, result === undefined ? `${scenario}: no result` : describeFailures([result])).toBe("passed");
  });
});

describe("runServerSuite's verdicts", () => {
  const check = (status: ConformanceCheck["status"], name = status.toLowerCase()): ConformanceCheck => ({
    id: name,
    name,
    description: `${name} check`,
    status,
    ...(status === "FAILURE" || status === "WARNING" ? { errorMessage: `${name} went wrong` } : {}),
  });

  it("counts a warning, and a scenario with only INFO checks, as not passing", () => {
    expect(scenarioResult("s", [check("INFO"), check("SUCCESS")]).outcome).toBe("passed");
    expect(scenarioResult("s", [check("SUCCESS"), check("FAILURE"), check("WARNING")])).toMatchObject({
      outcome: "failed",
      problems: ["FAILURE failure: failure went wrong", "WARNING warning: warning went wrong"],
    });
    expect(scenarioResult("s", [check("SUCCESS"), check("WARNING")])).toMatchObject({ outcome: "warned", warnings: 1 });
    expect(scenarioResult("s", [check("INFO")]).outcome).toBe("inconclusive");
  });

  it("reports a scenario a server fails, one CLI process per named scenario", { timeout: SUITE_TIMEOUT_MS }, async () => {
    // The fixture serves only /mcp: every request to another path is a 404, so initialize fails.
    const wrong = fixture!.url.replace(/\/mcp$/, "/not-mcp");
    const run = await runServerSuite(wrong, ["ping", "dns-rebinding-protection"], { timeoutMs: 120_000 });
    expect(
      run.results.map((r) => [r.scenario, r.outcome]),
      run.output,
    ).toEqual([
      ["ping", "failed"],
      ["dns-rebinding-protection", "failed"],
    ]);
    expect(describeFailures(run.results)).toMatch(/^ping: failed; FAILURE Ping: /m);
  });

  it("refuses a scenario name the suite does not have", async () => {
    await expect(runServerSuite(fixture!.url, ["ping", "no-such-scenario"])).rejects.toThrow(
      /unknown server scenario\(s\) no-such-scenario/,
    );
  });
});

describe("the fixture's stdio mode", () => {
  it("answers initialize and tools/list over stdio with the same tools as over HTTP, and test_reconnection still answers", async () => {
    const overHttp = new Client({ name: "fixture-direct-http", version: "1.0.0" });
    await overHttp.connect(new StreamableHTTPClientTransport(new URL(fixture!.url)));
    const httpTools = (await overHttp.listTools()).tools;
    await overHttp.close();

    const stdio = new StdioClientTransport({ command: process.execPath, args: [CONFORMANCE_FIXTURE, "--stdio"], stderr: "pipe" });
    const overStdio = new Client({ name: "fixture-direct-stdio", version: "1.0.0" });
    await overStdio.connect(stdio);
    const pid = stdio.pid;
    try {
      expect(overStdio.getServerVersion()).toEqual({ name: "conformance-fixture", version: "1.0.0" });
      const stdioTools = (await overStdio.listTools()).tools;
      expect(stdioTools.map((t) => t.name)).toContain("test_reconnection");
      expect(stdioTools).toEqual(httpTools);
      // Over HTTP this tool closes its SSE stream mid-call; over stdio there is no stream to close.
      expect(await overStdio.callTool({ name: "test_reconnection", arguments: {} })).toEqual({
        content: [{ type: "text", text: "Reconnection test completed successfully" }],
      });
    } finally {
      await overStdio.close();
    }
    await waitFor(() => !isAlive(pid ?? undefined), { message: `stdio fixture pid ${pid} gone` });
  });
});
