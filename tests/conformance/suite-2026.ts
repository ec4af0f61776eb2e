/**
 * The official MCP conformance suite 0.2.x (`conformance-2026`, @modelcontextprotocol/conformance
 * 0.2.0-alpha.12) for any test: it runs on Node 22 (`inject("node22")`, tests/helpers/node22-setup.ts).
 * `runRequirements(node, url, revision)` runs the server scenarios a revision requires
 * (`server --url URL --requirements <revision>`, one CLI process, a few seconds) and reports each
 * scenario from the `checks.json` files the CLI writes, as tests/conformance/server-scenarios.ts does for
 * 0.1.13: a WARNING is a failure, a scenario with only INFO checks is not a pass.
 *
 * The scenario lists below are the ones `conformance list --requirements <revision>` prints as required
 * (frozen at the revision's release); the CLI also runs scenarios it never scores (extensions such as
 * tasks-*, pending ones): their results are reported but no test asserts them.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { createTempDir } from "../helpers/process.js";
import { type ConformanceCheck, type ScenarioResult, scenarioResult } from "./server-scenarios.js";

export type Revision = "2026-07-28" | "2025-11-25";

/** The server scenarios 2026-07-28 requires (37). */
export const SERVER_2026 = [
  "server-stateless",
  "completion-complete",
  "tools-list",
  "tools-call-simple-text",
  "tools-call-image",
  "tools-call-audio",
  "tools-call-embedded-resource",
  "tools-call-mixed-content",
  "tools-call-error",
  "tools-call-with-progress",
  "server-sse-multiple-streams",
  "resources-list",
  "resources-read-text",
  "resources-read-binary",
  "resources-templates-read",
  "sep-2164-resource-not-found",
  "prompts-list",
  "prompts-get-simple",
  "prompts-get-with-args",
  "prompts-get-embedded-resource",
  "prompts-get-with-image",
  "dns-rebinding-protection",
  "caching",
  "input-required-result-basic-elicitation",
  "input-required-result-basic-sampling",
  "input-required-result-basic-list-roots",
  "input-required-result-request-state",
  "input-required-result-multiple-input-requests",
  "input-required-result-multi-round",
  "input-required-result-missing-input-response",
  "input-required-result-non-tool-request",
  "input-required-result-result-type",
  "input-required-result-unsupported-methods",
  "input-required-result-tampered-state",
  "input-required-result-capability-check",
  "input-required-result-ignore-extra-params",
  "input-required-result-validate-input",
] as const;

/** The server scenarios 2025-11-25 requires (30). */
export const SERVER_2025 = [
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
  "elicitation-sep1034-defaults",
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

/** The 2026-07-28 scenarios a 2025-era server must pass through mcpd's translation. */
export const TRANSLATED_2026 = SERVER_2026.filter((s) => /^(tools|resources|prompts|completion|input-required-result)-/.test(s));

/** The CLI's entry file. */
export function suiteBin(): string {
  const entry = join(dirname(createRequire(import.meta.url).resolve("conformance-2026/package.json")), "dist", "index.js");
  if (!existsSync(entry)) throw new Error(`conformance 0.2.x CLI not found at ${entry}`);
  return entry;
}

export interface SuiteRun {
  /** The CLI's exit code; null when it was killed at the deadline. */
  code: number | null;
  /** Everything the CLI printed (stdout and stderr), for failure messages. */
  output: string;
  /** scenario -> its result, for every scenario the CLI wrote checks for. */
  results: Map<string, ScenarioResult>;
}

/** Runs the CLI once on `node`, killed at `timeoutMs`; resolves with its exit code and output. */
export function runSuiteCli(
  node: string,
  args: string[],
  timeoutMs: number,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, [suiteBin(), ...args], { stdio: ["ignore", "pipe", "pipe"], env });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => {
      output += `\n[suite-2026] conformance CLI (pid ${child.pid}) killed: still running after ${timeoutMs} ms\n`;
      child.kill("SIGKILL");
    }, timeoutMs);
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

/** scenario -> checks, from the `server-<scenario>-<timestamp>/checks.json` (client: `<scenario>-<timestamp>`) directories the CLI wrote. */
export async function readSuiteChecks(dir: string): Promise<Map<string, ConformanceCheck[]>> {
  const found = new Map<string, ConformanceCheck[]>();
  for (const entry of await readdir(dir)) {
    const match = /^(?:server-)?(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/.exec(entry);
    const file = join(dir, entry, "checks.json");
    if (match === null || !existsSync(file)) continue;
    found.set(match[1]!, JSON.parse(await readFile(file, "utf8")) as ConformanceCheck[]);
  }
  return found;
}

/**
 * What a scenario says when something did not come within a fixed window it waits for: server-stateless
 * reads a tools/call's or a listen's stream for 500 to 1500 ms (through mcpd a list change reaches a listen
 * after mcpd re-read the list, at most once a second); tools-call-with-logging counts the log
 * messages 200 ms after the call's answer (a 2025 session's log messages come on the call's own stream
 * now, before its answer, when it is the session's one call in flight to the server; they came on the GET
 * stream, in no order with the answer: kept here in case a scenario runs calls side by side). On a loaded machine a
 * correct reply can miss the window; a failure that is not timing fails every attempt, so one more run
 * hides nothing.
 */
const MISSED_WINDOW =
  /failed to yield frame structures|Failed to receive progressive stream chunk|Failed to open or receive frames|tracking frames are missing|failed to return communication frames|carried no notification frames|no notifications\/(tools|prompts)\/list_changed arrived on the open subscription stream|Expected at least 3 log messages, got [12]$/;

/** How many more runs a scenario that only missed wait windows gets. */
const WINDOW_RETRIES = 2;

/** Runs the CLI with `args` plus an output directory; scenario -> result, for every scenario it wrote checks for. */
async function runWithChecks(node: string, args: string[], timeoutMs: number): Promise<SuiteRun> {
  const outDir = await createTempDir("mcpd-conformance26-");
  try {
    const { code, output } = await runSuiteCli(node, [...args, "-o", outDir.path], timeoutMs);
    const results = new Map<string, ScenarioResult>();
    for (const [scenario, checks] of await readSuiteChecks(outDir.path)) results.set(scenario, scenarioResult(scenario, checks));
    return { code, output, results };
  } finally {
    await outDir.remove();
  }
}

/**
 * Runs the server scenarios `revision` requires against `url` (one CLI process); a scenario that failed
 * only because a reply missed one of the suite's fixed wait windows ({@link MISSED_WINDOW}) is run again
 * on its own (at most {@link WINDOW_RETRIES} times), and the last run's result is kept.
 */
export async function runRequirements(node: string, url: string, revision: Revision, timeoutMs = 120_000): Promise<SuiteRun> {
  const run = await runWithChecks(node, ["server", "--url", url, "--requirements", revision], timeoutMs);
  for (const scenario of [...run.results.keys()]) {
    for (let attempt = 0; attempt < WINDOW_RETRIES; attempt++) {
      const result = run.results.get(scenario)!;
      if (result.outcome === "passed" || !result.problems.every((p) => MISSED_WINDOW.test(p))) break;
      const again = await runWithChecks(node, ["server", "--url", url, "--scenario", scenario, "--spec-version", revision], timeoutMs);
      run.output += `\n[suite-2026] ${scenario} missed a wait window (${result.problems.join("; ")}); run again:\n${again.output}`;
      const retried = again.results.get(scenario);
      if (retried !== undefined) run.results.set(scenario, retried);
    }
  }
  return run;
}

/** One scenario's verdict line for an assertion message: its problems, or that the CLI wrote none. */
export function explain(run: SuiteRun, scenario: string): string {
  const result = run.results.get(scenario);
  if (result === undefined) return `${scenario}: no results (the CLI did not run it)\n${run.output.slice(-4000)}`;
  return `${scenario}: ${result.outcome}; ${result.problems.join("; ")}`;
}
