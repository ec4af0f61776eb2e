/**
 * A crash loses no log line: the daemon's log writer is asynchronous (pino's sonic-boom), and what it holds
 * when the daemon crashes is written before the process ends, with a fatal line naming the error. A real
 * daemon in a real process (tests/fixtures/faults/daemon-crash.mjs) that logs and then crashes.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ROOT } from "../cli/cli-harness.js";

const CRASHER = resolve(ROOT, "tests/fixtures/faults/daemon-crash.mjs");
const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});

/** Runs the crashing daemon in `home` until it exits; resolves with its exit code and stderr. */
function crash(home: string): Promise<{ code: number | null; stderr: string }> {
  const config = join(home, "config.json");
  writeFileSync(config, JSON.stringify({ mcpServers: {} }));
  const env = { ...process.env, MCPD_HOME: home, MCPD_CONFIG: config, MCPD_SOCKET: join(home, "mcpd.sock") };
  const child = spawn(process.execPath, [CRASHER], { env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((done, fail) => {
    child.once("error", fail);
    child.once("exit", (code) => done({ code, stderr }));
  });
}

describe("a crash and the log", () => {
  it("regression: the lines logged just before a crash are on disk, followed by a fatal line naming the error (the asynchronous writer is flushed at the crash)", async () => {
    const home = mkdtempSync(join(tmpdir(), "mcpd-crash-"));
    homes.push(home);
    const r = await crash(home);
    // Node's own report of the crash is untouched: the log's hook is a monitor, not a handler.
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain("deliberate crash after a reload");
    const lines = readFileSync(join(home, "mcpd.log"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { level: number; msg: string; err?: { message: string } });
    const msgs = lines.map((l) => l.msg);
    expect(msgs).toContain("mcpd started");
    expect(msgs).toContain("config reloaded");
    const fatal = lines.find((l) => l.level === 60);
    expect(fatal, msgs.join(" | ")).toMatchObject({ msg: "mcpd crashed", err: { message: "deliberate crash after a reload" } });
    // The fatal line comes after the reload's lines (a write of earlier lines still under way may land later).
    expect(msgs.lastIndexOf("mcpd crashed")).toBeGreaterThan(msgs.indexOf("config reloaded"));
  });
});
