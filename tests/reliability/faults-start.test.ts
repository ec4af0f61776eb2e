/**
 * Fault injection, servers that cannot start or cannot settle: a spawn that fails for lack of file
 * descriptors, a command that is missing or not executable, a server that exits at once every time, and
 * one that sends `notifications/tools/list_changed` after every response. Real daemon (or the built
 * transport in a child process under a low fd limit), real fixture servers.
 */
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FIXTURE, ROOT, fixture, startTestDaemon, until, type TestDaemon } from "../e2e/harness.js";
import { fixturePath } from "../helpers/process.js";
import { PidLedger, serverPid, serverStatus, status, textOf } from "./faults-harness.js";

let daemon: TestDaemon | undefined;
const ledger = new PidLedger();
const roots: string[] = [];

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  ledger.killAll();
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function mkRoot(): string {
  const r = mkdtempSync(join(tmpdir(), "mcpds-"));
  roots.push(r);
  return r;
}

/** Runs a command line under `sh`, bounded; resolves with its exit code and output. */
function sh(command: string, timeoutMs = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", command], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    if (child.pid !== undefined) ledger.add(child.pid);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${command} did not finish in ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A tools/call to `server` through the aggregate view's `_meta` routing. */
function callOn(server: string, id: string) {
  return { name: "echo", arguments: { text: "x" }, _meta: { "mcpd/server": server }, id };
}

const occurrences = (text: string, needle: string): number => text.split(needle).length - 1;

describe("faults: servers that cannot start", () => {
  it("regression: a spawn that fails with EMFILE (no file descriptors left) rejects the start with SpawnError naming EMFILE; the process does not crash", async () => {
    const script = join(ROOT, "tests/fixtures/faults/spawn-under-emfile.mjs");
    const r = await sh(`ulimit -n 64 && exec "${process.execPath}" "${script}"`);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout.trim());
    // Before the fix: "Cannot read properties of undefined (reading 'on')" and an uncaught 'error' event.
    expect(report.uncaught).toEqual([]);
    expect(report.rejected).toBe(true);
    expect(report).toMatchObject({ name: "SpawnError", code: "MCPD_SPAWN_FAILED", errno: "EMFILE" });
    expect(report.message).toContain(process.execPath);
    expect(report.message).toMatch(/EMFILE/);
    // Nothing leaked that would keep the next start from working once descriptors are free again.
    expect(report.after).toBe("ready");
  });

  it("regression: a missing or non-executable command goes straight to failed (no restarts), calls fail at once naming it, and mcpd/restart or a config change retries", async () => {
    const dir = mkRoot();
    const missing = join(dir, "no-such-server");
    const script = join(dir, "server.sh");
    // A valid server once it is executable: a shell script that execs the fixture.
    writeFileSync(script, `#!/bin/sh\nexec "${process.execPath}" "${FIXTURE}" --name y\n`, { mode: 0o644 });
    // A slow backoff: before the fix these would restart (and a call would wait) until the breaker trips.
    const policy = { restart: { maxRestarts: 3, initialDelayMs: 2_000, maxDelayMs: 4_000 } };
    const d = (daemon = await startTestDaemon({ x: { command: missing, ...policy }, y: { command: script, ...policy }, b: fixture("b") }));
    const c = await d.control();
    await c.initialize();
    ledger.add(await serverPid(c, "b"));
    await until(
      async () => (await serverStatus(c, "x")).state === "failed" && (await serverStatus(c, "y")).state === "failed",
      "x and y failed",
    );
    const x = await serverStatus(c, "x");
    const y = await serverStatus(c, "y");
    expect(x.restarts).toBe(0);
    expect(y.restarts).toBe(0);
    expect(x.stateReason).toContain(missing);
    expect(x.stateReason).toMatch(/command not found \(ENOENT\)/);
    expect(y.stateReason).toContain(script);
    expect(y.stateReason).toMatch(/EACCES/);

    const mx = await c.request("tools/call", callOn("x", "cx"));
    expect(mx.error?.code, JSON.stringify(mx)).toBe(-32060);
    expect(mx.error.message).toContain(missing);
    expect(mx.error.message).toMatch(/ENOENT/);
    const my = await c.request("tools/call", callOn("y", "cy"));
    expect(my.error?.code, JSON.stringify(my)).toBe(-32060);
    expect(my.error.message).toMatch(/EACCES/);
    // Still failed, still no restart behind the scenes.
    expect((await serverStatus(c, "y")).restarts).toBe(0);

    // mcpd restart retries: the script is executable now.
    chmodSync(script, 0o755);
    const restarted = await c.request("mcpd/restart", { server: "y" });
    expect(restarted.result?.restarted, JSON.stringify(restarted)).toEqual(["y"]);
    await until(async () => (await serverStatus(c, "y")).state === "ready", "y ready after mcpd restart");
    ledger.add(await serverPid(c, "y"));

    // A config change retries too.
    d.writeConfig({ x: fixture("x", [], policy), y: { command: script, ...policy }, b: fixture("b") });
    expect((await c.request("mcpd/reload")).result.changed).toEqual(["x"]);
    await until(async () => (await serverStatus(c, "x")).state === "ready", "x ready after the config change");
    ledger.add(await serverPid(c, "x"));
  });

  it("regression: calls to a server whose every start fails answer at once with its exit code and stderr line (once), listings do not wait, restarts go on", async () => {
    // Restarts far enough apart that "at once" is visible as "before the next attempt".
    const policy = { restart: { maxRestarts: 5, initialDelayMs: 3_000, maxDelayMs: 6_000 } };
    const d = (daemon = await startTestDaemon({ loop: fixture("loop", ["--exit-at-start", "7"], policy), b: fixture("b") }));
    const c = await d.control();
    await c.initialize();
    ledger.add(await serverPid(c, "b"));
    const first = await until(async () => {
      const s = await serverStatus(c, "loop");
      return s.state === "restarting" && s.restarts >= 1 ? s : undefined;
    }, "loop's first start failed");
    const restarts = first.restarts as number;

    const m = await c.request("tools/call", callOn("loop", "c1"));
    expect(m.error?.code, JSON.stringify(m)).toBe(-32060);
    expect(m.error.message).toMatch(/"loop"/);
    expect(m.error.message).toMatch(/exited with code 7/);
    expect(occurrences(m.error.message, "fatal: boom"), m.error.message).toBe(1);

    // Listings: the control method and the aggregate view answer without waiting for loop.
    const tools = await c.request("mcpd/tools");
    expect(tools.result.tools.map((t: { exposedName: string }) => t.exposedName)).toContain("b__echo");
    const list = await c.request("tools/list");
    expect(list.result.tools.map((t: { name: string }) => t.name)).toContain("b__echo");

    // All of it was answered before the next attempt failed: the restart count has not moved...
    const now = await serverStatus(c, "loop");
    expect(now.restarts, "answered before the next restart attempt").toBe(restarts);
    // ...and the restarts go on in the background.
    await until(async () => (await serverStatus(c, "loop")).restarts > restarts, "loop restarted again", 30_000);
    const again = await c.request("tools/call", callOn("loop", "c2"));
    expect(again.error?.code).toBe(-32060);
    expect(occurrences(again.error.message, "fatal: boom"), again.error.message).toBe(1);
  });

  it("regression: a server that sends tools/list_changed after every response becomes ready, its tools/list requests are rate-limited, the state says why, and mcpd/enable returns", async () => {
    const storm = { command: process.execPath, args: [fixturePath("list-changed-storm.mjs"), "--name", "storm"] };
    const d = (daemon = await startTestDaemon({ storm, b: fixture("b") }));
    const c = await d.control();
    await c.initialize();
    await until(async () => (await serverStatus(c, "storm")).state === "ready", "storm ready");
    ledger.add(await serverPid(c, "b"));
    expect(textOf(await c.request("tools/call", { name: "storm__echo", arguments: { text: "calm" } }))).toBe("calm");
    const count = async (): Promise<number> => Number(textOf(await c.request("tools/call", { name: "storm__list_count", arguments: {} })));
    const before = await count();
    const t0 = Date.now();
    await until(() => Date.now() - t0 >= 3_000, "a 3 s window", 10_000, 100);
    const during = (await count()) - before;
    const windowMs = Date.now() - t0;
    // Rate-limited: at most one re-read per second (plus the one in progress). Unbounded before the fix
    // (hundreds in 3 s; the server never left `starting`).
    expect(during, `${during} tools/list in ${windowMs} ms`).toBeLessThanOrEqual(Math.ceil(windowMs / 1_000) + 2);
    expect((await serverStatus(c, "storm")).stateReason).toMatch(/list_changed/);

    // Disable and enable: enable returns once the server is ready again.
    expect((await c.request("mcpd/disable", { server: "storm" })).result.state).toBe("disabled");
    const enabled = await c.request("mcpd/enable", { server: "storm" });
    expect(enabled.result?.state, JSON.stringify(enabled)).toBe("ready");
    expect((await status(c)).servers.find((s: { name: string }) => s.name === "storm").state).toBe("ready");
  });
});
