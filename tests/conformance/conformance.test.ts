/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance 0.1.13) against a client built on
 * HttpTransport (tests/conformance/client.mjs): `conformance client --command "node client.mjs"
 * --scenario <name>` starts the scenario's test server, runs the client with its URL, and exits 0 only
 * when every check passed (warnings count as failures).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { isAlive } from "../helpers/process.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const CLIENT = join(HERE, "client.mjs");

function conformanceBin(): string {
  const require = createRequire(import.meta.url);
  const entry = join(dirname(require.resolve("@modelcontextprotocol/conformance/package.json")), "dist", "index.js");
  if (!existsSync(entry)) throw new Error(`conformance CLI not found at ${entry}`);
  return entry;
}

const running = new Set<ChildProcess>();
afterEach(async () => {
  for (const child of running) {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    }
    expect(isAlive(child.pid)).toBe(false);
  }
  running.clear();
});

function runScenario(scenario: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [conformanceBin(), "client", "--command", `${process.execPath} ${CLIENT}`, "--scenario", scenario, "--timeout", "30000"],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    running.add(child);
    let output = "";
    child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, output }));
  });
}

async function expectPass(scenario: string): Promise<void> {
  expect(existsSync(join(HERE, "..", "..", "transports", "dist", "index.js")), "run `npx tsc -b` first").toBe(true);
  const { code, output } = await runScenario(scenario);
  expect(code, output).toBe(0);
  expect(output).toMatch(/OVERALL: PASSED/);
  expect(output).toMatch(/0 failed, 0 warnings/);
}

describe("MCP conformance client scenarios (HttpTransport)", () => {
  it.each(["initialize", "tools_call"])("passes %s", expectPass);
  // The suite's sse-retry check demands the reconnect land 450-700 ms after the stream closes (retry: 500).
  // We reconnect at ~500 ms, but on a loaded 2-core machine a timer can slip past the window; a failure
  // that is not timing fails every attempt, so a retry hides nothing else.
  it("passes sse-retry", { retry: 2 }, () => expectPass("sse-retry"));
});
