/**
 * The server half of the official MCP conformance suite (@modelcontextprotocol/conformance 0.1.13), for
 * any test that has a Streamable HTTP URL to prove: `runServerSuite(url)` runs all 32 server scenarios in
 * one CLI process (`conformance server --url URL --suite all`, a few seconds) and reports each scenario;
 * `startConformanceFixture()` starts tests/fixtures/servers/conformance-server.mjs over HTTP, the server
 * built to pass them (CONFORMANCE_FIXTURE is its path, for `--stdio` behind mcpd).
 *
 * Results come from the `checks.json` the CLI writes per scenario (`-o DIR`), not from its exit code or
 * summary: both count only FAILURE checks, so a scenario with warnings still exits 0 and prints a tick.
 * Here a WARNING is a failure, as in tests/conformance/conformance.test.ts for the client scenarios.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { createTempDir, fixturePath, isAlive, waitFor } from "../helpers/process.js";

/** The 32 server scenarios of conformance 0.1.13, in the order `--suite all` runs them. */
export const SERVER_SCENARIOS = [
  "server-initialize",
  "logging-set-level",
  "ping",
  "completion-complete",
  "tools-list",
  "tools-call-simple-text",
  "tools-call-image",
  "tools-call-audio",
  "tools-call-embedded-resource",
  "tools-call-mixed-content",
  "tools-call-with-logging",
  "tools-call-error",
  "tools-call-with-progress",
  "tools-call-sampling",
  "tools-call-elicitation",
  "json-schema-2020-12",
  "elicitation-sep1034-defaults",
  "server-sse-polling",
  "server-sse-multiple-streams",
  "elicitation-sep1330-enums",
  "resources-list",
  "resources-read-text",
  "resources-read-binary",
  "resources-templates-read",
  "resources-subscribe",
  "resources-unsubscribe",
  "prompts-list",
  "prompts-get-simple",
  "prompts-get-with-args",
  "prompts-get-embedded-resource",
  "prompts-get-with-image",
  "dns-rebinding-protection",
] as const;

/** Absolute path of the conformance fixture server (`--stdio` or `--http [--port N]`). */
export const CONFORMANCE_FIXTURE = fixturePath("conformance-server.mjs");

/** One check as the CLI writes it to checks.json. */
export interface ConformanceCheck {
  id: string;
  name: string;
  description: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";
  errorMessage?: string;
  details?: unknown;
}

/**
 * passed: at least one SUCCESS, no FAILURE, no WARNING. failed: a FAILURE, or no results at all.
 * warned: WARNINGs and no FAILURE. inconclusive: only INFO checks (the scenario found nothing to test,
 * e.g. server-sse-polling when tools/call is answered with JSON instead of SSE); not a pass either.
 */
export type ScenarioOutcome = "passed" | "failed" | "warned" | "inconclusive";

export interface ScenarioResult {
  scenario: string;
  outcome: ScenarioOutcome;
  passed: number;
  failed: number;
  warnings: number;
  /** `STATUS Name: message` for every FAILURE and WARNING check, or why there are no checks. */
  problems: string[];
  checks: ConformanceCheck[];
}

export interface ServerSuiteRun {
  /** The CLI's exit code (the first non-zero one when scenarios ran one process each); null when killed. */
  code: number | null;
  /** Everything the CLI printed (stdout and stderr), for failure messages. */
  output: string;
  /** One per scenario asked for (all 32 by default, plus any scenario a newer CLI added), in run order. */
  results: ScenarioResult[];
}

export interface RunServerSuiteOptions {
  /** Kill the CLI after this many ms; scenarios it had not finished are failed (default 90000). */
  timeoutMs?: number;
}

/** The CLI's entry file. */
export function conformanceBin(): string {
  const require = createRequire(import.meta.url);
  const entry = join(dirname(require.resolve("@modelcontextprotocol/conformance/package.json")), "dist", "index.js");
  if (!existsSync(entry)) throw new Error(`conformance CLI not found at ${entry}`);
  return entry;
}

/** What one scenario's checks amount to. */
export function scenarioResult(scenario: string, checks: ConformanceCheck[]): ScenarioResult {
  const count = (status: ConformanceCheck["status"]) => checks.filter((c) => c.status === status).length;
  const passed = count("SUCCESS");
  const failed = count("FAILURE");
  const warnings = count("WARNING");
  const problems = checks
    .filter((c) => c.status === "FAILURE" || c.status === "WARNING")
    .map((c) => `${c.status} ${c.name}: ${c.errorMessage ?? c.description}`);
  let outcome: ScenarioOutcome = "passed";
  if (failed > 0) outcome = "failed";
  else if (warnings > 0) outcome = "warned";
  else if (passed === 0) {
    outcome = "inconclusive";
    problems.push(`no check passed or failed (${checks.length} INFO-only checks): the scenario tested nothing`);
  }
  return { scenario, outcome, passed, failed, warnings, problems, checks };
}

/** One line per scenario that did not pass: `scenario: outcome; problem; problem`. Empty when all passed. */
export function describeFailures(results: readonly ScenarioResult[]): string {
  return results
    .filter((r) => r.outcome !== "passed")
    .map((r) => `${r.scenario}: ${r.outcome}; ${r.problems.join("; ")}`)
    .join("\n");
}

/** Runs the CLI once; resolves with its exit code (null when killed at `deadline`) and output. */
function runCli(args: string[], deadline: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [conformanceBin(), ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(
      () => {
        output += `\n[server-scenarios] conformance CLI (pid ${child.pid}) killed: still running at the deadline\n`;
        child.kill("SIGKILL");
      },
      Math.max(0, deadline - Date.now()),
    );
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** scenario -> checks, from the `server-<scenario>-<timestamp>/checks.json` directories the CLI wrote. */
async function readChecks(dir: string): Promise<Map<string, ConformanceCheck[]>> {
  const found = new Map<string, ConformanceCheck[]>();
  for (const entry of await readdir(dir)) {
    const match = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/.exec(entry);
    const file = join(dir, entry, "checks.json");
    if (match === null || !existsSync(file)) continue;
    found.set(match[1]!, JSON.parse(await readFile(file, "utf8")) as ConformanceCheck[]);
  }
  return found;
}

/**
 * Runs the conformance server scenarios against `url` and reports each. Without `scenarios`, all of them
 * in one CLI process; with a list, one process per scenario, in order. Throws on a name the suite does not
 * have. The CLI's process is always gone when this settles; its output directory is removed.
 */
export async function runServerSuite(
  url: string,
  scenarios?: readonly string[],
  options: RunServerSuiteOptions = {},
): Promise<ServerSuiteRun> {
  const unknown = (scenarios ?? []).filter((s) => !(SERVER_SCENARIOS as readonly string[]).includes(s));
  if (unknown.length > 0) throw new Error(`unknown server scenario(s) ${unknown.join(", ")}; known: ${SERVER_SCENARIOS.join(", ")}`);
  const deadline = Date.now() + (options.timeoutMs ?? 90_000);
  const outDir = await createTempDir("mcpd-conformance-");
  try {
    let code: number | null = 0;
    let output = "";
    const runs = scenarios === undefined ? [["--suite", "all"]] : scenarios.map((s) => ["--scenario", s]);
    for (const selection of runs) {
      const run = await runCli(["server", "--url", url, ...selection, "-o", outDir.path], deadline);
      output += run.output;
      if (code === 0) code = run.code;
    }
    const checks = await readChecks(outDir.path);
    const wanted: string[] = [...(scenarios ?? SERVER_SCENARIOS)];
    for (const name of checks.keys()) if (!wanted.includes(name)) wanted.push(name);
    const results = wanted.map((name) => {
      const found = checks.get(name);
      if (found !== undefined) return scenarioResult(name, found);
      const result = scenarioResult(name, []);
      return { ...result, outcome: "failed" as const, problems: ["no results: the CLI did not finish this scenario (see output)"] };
    });
    return { code, output, results };
  } finally {
    await outDir.remove();
  }
}

/** The conformance fixture running over Streamable HTTP. */
export interface RunningFixture {
  /** `http://127.0.0.1:<port>/mcp` */
  url: string;
  pid: number;
  /** Kills it (SIGKILL) and waits until the process is gone. */
  stop(): Promise<void>;
}

/**
 * Starts `conformance-server.mjs --http --port 0` (plus `extraArgs`, e.g. `--era 2025`) and waits (up to
 * 30 s) for the URL it prints.
 */
export async function startConformanceFixture(extraArgs: readonly string[] = []): Promise<RunningFixture> {
  const args = [CONFORMANCE_FIXTURE, "--http", "--port", "0", ...extraArgs];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
    await waitFor(() => !isAlive(child.pid), { message: `conformance fixture pid ${child.pid} gone` });
  };
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let stdout = "";
      const timer = setTimeout(
        () => reject(new Error(`the conformance fixture printed no LISTENING line within 30 s: ${stderr.trim()}`)),
        30_000,
      );
      child.stdout.on("data", (d: Buffer) => {
        stdout += d.toString();
        const match = /^LISTENING (\S+)$/m.exec(stdout);
        if (match !== null) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`the conformance fixture exited (${signal ?? code}) before listening: ${stderr.trim()}`));
      });
      child.once("error", (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    return { url, pid: child.pid!, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
