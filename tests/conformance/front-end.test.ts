/**
 * The official conformance suite's 32 server scenarios against mcpd's HTTP front end, in the transparent
 * view (`/servers/<name>/mcp`) of the conformance fixture: once with the fixture behind mcpd over stdio,
 * once with it behind mcpd over Streamable HTTP. The same fixture passes the suite on its own
 * (fixture-direct.test.ts), so a failure here is mcpd's.
 *
 * The suite's CLI cannot send headers, and every request to mcpd needs the bearer token; a relay on
 * loopback adds `Authorization` to each request and passes everything else (Host and Origin included,
 * so the DNS-rebinding scenario reaches mcpd's own checks) through unchanged, streaming both ways.
 */
import { type IncomingMessage, request as httpRequest, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestDaemon, startTestDaemon } from "../e2e/harness.js";
import { type HttpFrontInfo, httpFront } from "../http/http-harness.js";
import { isAlive } from "../helpers/process.js";
import {
  CONFORMANCE_FIXTURE,
  describeFailures,
  type RunningFixture,
  runServerSuite,
  SERVER_SCENARIOS,
  type ServerSuiteRun,
  startConformanceFixture,
} from "./server-scenarios.js";

/** A loopback relay to `target` that adds the bearer token to every request. */
function authRelay(target: HttpFrontInfo): Promise<{ server: Server; url: string }> {
  const to = new URL(target.origin);
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const upstream = httpRequest(
      {
        host: to.hostname,
        port: to.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, authorization: `Bearer ${target.token}` },
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    res.on("close", () => upstream.destroy());
    req.pipe(upstream);
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })),
  );
}

let fixture: RunningFixture | undefined;
let daemon: TestDaemon | undefined;
let relay: Server | undefined;
const runs: Record<string, ServerSuiteRun> = {};

beforeAll(async () => {
  fixture = await startConformanceFixture();
  daemon = await startTestDaemon({
    conf: { command: process.execPath, args: [CONFORMANCE_FIXTURE, "--stdio"] },
    confhttp: { type: "http", url: fixture.url },
  });
  const r = await authRelay(await httpFront(daemon));
  relay = r.server;
  const [stdio, http] = await Promise.all([
    runServerSuite(`${r.url}/servers/conf/mcp`, undefined, { timeoutMs: 150_000 }),
    runServerSuite(`${r.url}/servers/confhttp/mcp`, undefined, { timeoutMs: 150_000 }),
  ]);
  runs.stdio = stdio;
  runs.http = http;
}, 200_000);

afterAll(async () => {
  await new Promise((r) => (relay ? relay.close(() => r(undefined)) : r(undefined)));
  relay?.closeAllConnections();
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
