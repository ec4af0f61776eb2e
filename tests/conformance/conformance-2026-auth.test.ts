/**
 * The MCP conformance suite 0.2.0-alpha.12 (devDependency `conformance-2026`) against mcpd's upstream
 * OAuth client (tests/conformance/auth-client.mjs: HttpTransport with its OAuth client, speaking the 2026
 * wire when the suite runs a scenario at 2026-07-28). `conformance client --requirements <revision>` runs
 * every client scenario the revision requires, and the extensions beside them; this test holds mcpd to
 * every `auth/*` one of them for 2026-07-28 and 2025-11-25, and to the two client-credentials extensions.
 * The other scenarios of those sets (tools, headers, elicitation) are another client's and not judged
 * here. The suite needs Node 22 (tests/helpers/node22-setup.ts).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, inject, it } from "vitest";
import { isAlive } from "../helpers/process.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const AUTH_CLIENT = join(HERE, "auth-client.mjs");
const SUITE = join(dirname(createRequire(import.meta.url).resolve("conformance-2026/package.json")), "dist/index.js");
const node22 = inject("node22");

/** The client-credentials extensions (run beside every requirement set, never scored by it). */
const CLIENT_CREDENTIALS = ["auth/client-credentials-jwt", "auth/client-credentials-basic"];

const running = new Set<ChildProcess>();
// After all, not after each: the two revisions run at once, and a suite ends on its own when its test does.
afterAll(async () => {
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

function suite(binary: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, [SUITE, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    running.add(child);
    let output = "";
    child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, output }));
  });
}

/** The `auth/*` client scenarios a revision requires, as the suite lists them. */
async function requiredAuthScenarios(binary: string, revision: string): Promise<string[]> {
  const { code, output } = await suite(binary, ["list", "--client", "--requirements", revision]);
  expect(code, output).toBe(0);
  const required = output.slice(output.indexOf("Client scenarios"), output.indexOf("Run and reported"));
  return [...required.matchAll(/^\s+- (auth\/\S+)$/gm)].map((m) => m[1]!);
}

describe.skipIf("skip" in node22)(
  `conformance 0.2.0-alpha.12 auth scenarios${"skip" in node22 ? ` (skipped: ${node22.skip})` : ""}`,
  () => {
    const binary = "path" in node22 ? node22.path : "";

    // How each revision's scenarios run. 2026-07-28: `--requirements`, which runs them all, the two
    // client-credentials extensions beside them. 2025-11-25: the auth suite at that version, whose auth
    // scenarios are exactly the required ones with the same checks, without the set's other scenarios
    // (another client's: one of them waits a minute for an elicitation this client never answers).
    const RUNS = {
      "2026-07-28": { args: ["--requirements", "2026-07-28"], extensions: CLIENT_CREDENTIALS },
      "2025-11-25": { args: ["--suite", "auth", "--spec-version", "2025-11-25"], extensions: [] },
    } as const;

    // The two revisions at once (each suite is mostly waiting on its scenarios' servers).
    it.concurrent.each([
      ["2026-07-28", 25],
      ["2025-11-25", 14],
    ] as const)(
      "passes every auth scenario required for %s (%i); with 2026-07-28, the two client-credentials extensions",
      // The suite runs its scenarios in parallel; on a loaded 2-core machine a browser round-trip may miss
      // its deadline. A failure of mcpd's fails every attempt, so one retry hides nothing else.
      { timeout: 300_000, retry: 1 },
      async (revision, count) => {
        const required = await requiredAuthScenarios(binary, revision);
        expect(required).toHaveLength(count);
        const run = RUNS[revision];
        const { output } = await suite(binary, [
          "client",
          "--command",
          `${process.execPath} ${AUTH_CLIENT}`,
          ...run.args,
          "--timeout",
          "90000",
        ]);
        const summary = output.slice(output.indexOf("=== SUITE SUMMARY ==="));
        for (const scenario of [...required, ...run.extensions]) {
          expect(summary, output).toMatch(new RegExp(`^✓ ${scenario}: \\d+ passed, 0 failed$`, "m"));
        }
      },
    );
  },
);
