/**
 * Shared test helpers: waiting for conditions, process liveness, a process's memory and open files,
 * temporary directories, fixture paths.
 * Imported by tests across packages: keep it small and stable.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export { openFds, residentBytes } from "./procfs.mjs";

/** Directory of the fixture MCP servers (`tests/fixtures/servers`). */
export const FIXTURE_SERVERS_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "servers");

/** Absolute path of a fixture server script, e.g. `fixturePath("mcp-fixture.mjs")`. */
export function fixturePath(name: string): string {
  return join(FIXTURE_SERVERS_DIR, name);
}

export interface WaitForOptions {
  /** Give up after this many ms (default 20000). */
  timeoutMs?: number;
  /** Poll every this many ms (default 20). */
  intervalMs?: number;
  /** Named in the timeout error. */
  message?: string;
}

// The real clock and timer, taken before any test can fake them (vi.useFakeTimers): waitFor keeps polling,
// and gives up, in real time while a test drives the code under test by a fake clock.
const realNow = Date.now;
const realSetTimeout = globalThis.setTimeout;

/**
 * Polls `condition` until it returns a truthy value (awaited when a promise) and resolves with it.
 * Throws after `timeoutMs`, naming `message` and the last error the condition threw, if any.
 * Use this instead of fixed sleeps: it waits for the event, with a generous upper bound. It is the one
 * poll the tests have (tests/test-hygiene.test.ts): the interval is how often it looks, not how long a
 * test waits. It runs on the real clock even while a test fakes timers.
 */
export async function waitFor<T>(condition: () => T | Promise<T>, options: WaitForOptions = {}): Promise<NonNullable<T>> {
  const { timeoutMs = 20_000, intervalMs = 20, message = "condition" } = options;
  const deadline = realNow() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      lastError = err;
    }
    if (realNow() >= deadline) {
      const detail = lastError ? ` (last error: ${(lastError as Error)?.message ?? String(lastError)})` : "";
      throw new Error(`waitFor: ${message} not met within ${timeoutMs}ms${detail}`);
    }
    await new Promise((resolve) => realSetTimeout(resolve, intervalMs));
  }
}

/**
 * True when process `pid` exists and is not a zombie. Zombies count as dead: where PID 1 does not reap
 * orphans (containers, our CI VMs) a killed grandchild stays a zombie forever.
 */
export function isAlive(pid: number | undefined): boolean {
  if (pid === undefined || !Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it exists but is not ours.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  if (process.platform !== "linux") return true;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

/** A temporary directory; `remove()` deletes it and everything in it. */
export interface TempDir {
  path: string;
  remove(): Promise<void>;
}

/**
 * Creates a short-named directory under os.tmpdir() (short enough for Unix socket paths).
 * Remove it in afterEach/afterAll.
 */
export async function createTempDir(prefix = "mcpd-"): Promise<TempDir> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}
