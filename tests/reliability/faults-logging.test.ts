/**
 * Logging can never end the daemon: log lines that cannot be written (a full disk) are held up to a bound
 * and the rest dropped and counted; a closed terminal or pipe moves the log to its file; the daemon keeps
 * serving, shows the count in `mcpd status`, and writes again once it can. Real daemons started by the
 * real CLI, a real full file system (a tiny tmpfs).
 */
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readProcStat } from "@mcpd/transports/procfs";
import { afterEach, describe, expect, it } from "vitest";
import { CliWorld, alive, until } from "../cli/cli-harness.js";
import { RawClient } from "../e2e/harness.js";

const worlds: CliWorld[] = [];
const mounts: string[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) {
    await w.run(["stop"], { timeoutMs: 30_000 }).catch(() => {});
    // Lazily: a daemon that did not stop may still hold its log open there.
    for (const m of mounts.splice(0)) if (spawnSync("umount", [m]).status !== 0) spawnSync("umount", ["-l", m]);
    await w.dispose();
  }
});

function world(): CliWorld {
  const w = new CliWorld();
  worlds.push(w);
  w.writeConfig({ fx: w.fixture("fx") });
  return w;
}

/** Why a tmpfs cannot be mounted here (not root, or refused by a container's policy), or undefined. */
function tmpfsRefused(): string | undefined {
  const probe = mkdtempSync(join(tmpdir(), "mcpd-mnt-"));
  try {
    const r = spawnSync("mount", ["-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", probe]);
    if (r.status !== 0) return `mount -t tmpfs refused: ${String(r.stderr || r.error?.message).trim()}`;
    spawnSync("umount", [probe]);
    return undefined;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}
const noTmpfs = tmpfsRefused();

interface StatusDaemon {
  pid: number;
  logFile: string | null;
  logDroppedLines: number;
  logWriteError: { message: string; at: string; ongoing: boolean } | null;
}

async function daemonStatus(w: CliWorld): Promise<StatusDaemon> {
  const r = await w.run(["status", "--json"]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout).daemon as StatusDaemon;
}

async function fxReady(w: CliWorld): Promise<void> {
  await until(
    async () => JSON.parse((await w.run(["status", "--json"])).stdout).servers.every((s: { state: string }) => s.state === "ready"),
    "fx ready",
    30_000,
    100,
  );
}

/** Calls fx's echo over the socket; resolves with the text it answered. */
async function echo(c: RawClient, text: string): Promise<string> {
  const r = await c.request("tools/call", { name: "fx__echo", arguments: { text } });
  expect(r.error, JSON.stringify(r.error)).toBeUndefined();
  return r.result.content[0].text;
}

describe("logging never ends the daemon", () => {
  it.skipIf(noTmpfs !== undefined)(
    `regression: a full disk under the state directory (ENOSPC) does not end the daemon: it keeps answering, counts the lines past what it holds in mcpd status, and logs again once space returns${noTmpfs ? ` (skipped: ${noTmpfs})` : ""}`,
    async () => {
      const w = world();
      mkdirSync(w.mcpdHome, { mode: 0o700 });
      // Room for what the daemon holds while the disk is full (1 MiB), once the filler is gone.
      expect(spawnSync("mount", ["-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", w.mcpdHome]).status).toBe(0);
      mounts.push(w.mcpdHome);
      // trace: every message in and out is logged, so each call below writes tens of KiB of log.
      const start = await w.run(["start", "--log-level", "trace"]);
      expect(start.code, start.stderr).toBe(0);
      await fxReady(w);
      const pid = (await daemonStatus(w)).pid;
      const c = await RawClient.open(join(w.mcpdHome, "mcpd.sock"));
      try {
        await c.initialize();
        const filler = join(w.mcpdHome, "filler");
        const fd = openSync(filler, "w");
        try {
          for (;;) writeSync(fd, Buffer.alloc(4096, 0x61));
        } catch (err) {
          expect((err as NodeJS.ErrnoException).code).toBe("ENOSPC");
        } finally {
          closeSync(fd);
        }

        // Each call logs more than the page the log may still have room in, and the lines are held (1 MiB)
        // until the ones past that bound are dropped.
        const big = "b".repeat(64 * 1024);
        let full = await daemonStatus(w);
        for (let i = 0; i < 60 && full.logDroppedLines === 0; i++) {
          expect(await echo(c, big)).toBe(big);
          full = await daemonStatus(w);
        }
        expect(alive(pid), "the daemon died of a full disk").toBe(true);
        expect(full.pid).toBe(pid);
        expect(full.logDroppedLines).toBeGreaterThan(0);
        // (Not necessarily `ongoing`: a short line may still fit the room a big one could not use.)
        expect(full.logWriteError).toMatchObject({ message: expect.stringMatching(/ENOSPC/) });
        const human = await w.run(["status"]);
        expect(human.stdout).toMatch(/log: \d+ lines? dropped/);

        rmSync(filler);
        expect(await echo(c, "after-space-returned")).toBe("after-space-returned");
        const log = join(w.mcpdHome, "mcpd.log");
        await until(() => readFileSync(log, "utf8").includes("after-space-returned"), "the log to be written again");
        const text = readFileSync(log, "utf8");
        expect(text).toMatch(/"dropped":\d+.*the lines past the bound were dropped/);
        // Every line is whole: a line cut short by the full disk was completed.
        for (const l of text.split("\n").filter(Boolean)) expect(() => JSON.parse(l), l.slice(0, 100)).not.toThrow();
        // With room again, nothing more is dropped.
        const after = await daemonStatus(w);
        expect(after.logDroppedLines).toBeGreaterThanOrEqual(full.logDroppedLines);
        expect(after.logWriteError?.ongoing).toBe(false);
        expect(await echo(c, big)).toBe(big);
        expect((await daemonStatus(w)).logDroppedLines).toBe(after.logDroppedLines);
      } finally {
        c.close();
      }
      const stop = await w.run(["stop"]);
      expect(stop.code, stop.stderr).toBe(0);
      expect(existsSync(join(w.mcpdHome, "mcpd.sock"))).toBe(false);
    },
  );

  it("regression: `mcpd start --foreground 2>&1 | head` whose reader goes away (EPIPE on stdout and stderr) keeps serving, logs to its file, and stops cleanly", async () => {
    const w = world();
    const daemon = w.spawn(["start", "--foreground", "--log-level", "debug"]);
    let early = "";
    daemon.stderr?.on("data", (d: Buffer) => (early += d.toString()));
    await until(() => early.includes("mcpd started") || daemon.exitCode !== null, "daemon started", 30_000);
    expect(daemon.exitCode, early).toBeNull();
    await fxReady(w);
    // What `head -2` does when it has its lines: closes the reading end of the pipe.
    daemon.stdout?.destroy();
    daemon.stderr?.destroy();

    // Every connection logs at debug level: these writes hit the closed pipe.
    for (let i = 0; i < 3; i++) {
      const r = await w.run(["call", "fx", "echo", "--arg", `text="still here ${i}"`]);
      expect(r, "the daemon died of a closed stderr").toMatchObject({ code: 0, stdout: `still here ${i}\n` });
    }
    expect(daemon.exitCode).toBeNull();
    const st = await daemonStatus(w);
    // The daemon is the process started or, as from a plain node, its child (cli-foreground-reexec).
    expect(st.pid === daemon.pid || readProcStat(st.pid)?.ppid === daemon.pid).toBe(true);
    // Its lines now go to the log file, from the first one that could not be written to the pipe.
    const log = join(w.mcpdHome, "mcpd.log");
    expect(st.logFile).toBe(log);
    expect(st.logDroppedLines).toBe(0);
    await until(() => existsSync(log) && readFileSync(log, "utf8").includes("client connected"), "daemon logging to its file");
    expect(readFileSync(log, "utf8")).toMatch(/stderr cannot be written; logging to .*mcpd\.log from now on/);

    const stop = await w.run(["stop"]);
    expect(stop.code, stop.stderr).toBe(0);
    await until(() => daemon.exitCode !== null, "daemon exit", 30_000);
    expect(daemon.exitCode).toBe(0);
    expect(existsSync(join(w.mcpdHome, "mcpd.sock")), "stale socket").toBe(false);
    expect(existsSync(join(w.mcpdHome, "mcpd.pid")), "stale pid file").toBe(false);
    expect(readFileSync(log, "utf8")).toContain("mcpd stopped");
  });
});
