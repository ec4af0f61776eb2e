/**
 * Paths and small helpers every part of the benchmark harness shares. Plain ESM, no dependencies.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
/** Where profiles and quick-run reports go (gitignored). */
export const OUT_DIR = join(ROOT, "tests/bench/out");
export const MCPD_BIN = join(ROOT, "daemon/bin/mcpd.js");
/** The benchmark's own minimal MCP server (tools/call costs the server almost nothing). */
export const FAST_SERVER = join(ROOT, "tests/bench/fixtures/fast-server.mjs");
/** A process that copies bytes between its stdio and a child's: one extra hop that does no work. */
export const PASS_THROUGH = join(ROOT, "tests/bench/fixtures/pass-through.mjs");
/** The SDK McpServer over Streamable HTTP, for the HTTP upstream scenario. */
export const HTTP_SERVER = join(ROOT, "tests/bench/fixtures/http-server.mjs");
/** The test suite's full-featured fixture server (realistic start-up and memory of a small Node server). */
export const MCP_FIXTURE = join(ROOT, "tests/fixtures/servers/mcp-fixture.mjs");
export const EVERYTHING = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
export const MEMORY = join(ROOT, "node_modules/@modelcontextprotocol/server-memory/dist/index.js");
export const CLIENT_WORKER = join(ROOT, "tests/bench/workers/client-worker.mjs");
export const AGENT_WORKER = join(ROOT, "tests/bench/workers/agent.mjs");
export const ROUTER_PROFILE_WORKER = join(ROOT, "tests/bench/workers/router-profile.mjs");

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `cond` every `intervalMs` until it returns a truthy value; throws naming `what` after `timeoutMs`.
 * Benchmarks wait for events, never for fixed delays.
 */
export async function until(cond, what, timeoutMs = 30_000, intervalMs = 20) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const v = await cond();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${last.message}` : ""}`);
    await sleep(intervalMs);
  }
}

/** A short temporary directory (Unix socket paths must stay under ~100 bytes). Not tracked: see Resources.tempDir. */
export function makeTempDir(prefix = "mcpdb-") {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(dir) {
  rmSync(dir, { recursive: true, force: true });
}

/** Runs `fn` over `items` with at most `limit` running at once; rejects on the first failure. */
export async function mapLimit(items, limit, fn) {
  const out = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  });
  await Promise.all(lanes);
  return out;
}
