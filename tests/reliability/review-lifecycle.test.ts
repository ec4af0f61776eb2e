/**
 * The daemon's life as one process among others: daemons started at once for one user (exactly one may
 * run), and a foreground daemon whose stderr nobody reads. Real daemons started with the real CLI
 * (tests/cli/cli-harness.ts), real fixture servers; every process of a test's world is ended at the end.
 */
import { existsSync, lstatSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RawClient, ROOT } from "../e2e/harness.js";
import { alive, CliWorld, collect, until, type CliRun } from "../cli/cli-harness.js";
import { serversByName, status } from "./faults-harness.js";

const SLOW_LISTEN = join(ROOT, "tests/fixtures/daemon/slow-listen.cjs");

let world: CliWorld | undefined;
const clients: RawClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await world?.dispose();
  world = undefined;
});

describe.skipIf(process.platform !== "linux")("review: the daemon's lifecycle (reads /proc, Linux only)", () => {
  it("regression: daemons started at once for one user leave exactly one running, each server once, its pid file and socket intact (both got past the socket probe; the loser's teardown removed the winner's socket and pid file)", {
    timeout: 90_000,
  }, async () => {
    const w = (world = new CliWorld());
    w.writeConfig({ fx: w.fixture("fx") });
    // Every daemon's listen() is late: all of them are past the check of the socket before any answers.
    const env = { ...w.env, MCPD_FOREGROUND_REEXEC: "0", MCPD_HTTP_PORT: "0", SLOW_LISTEN_MS: "1500" };
    const starts = [0, 1, 2, 3].map(() => w.spawn(["start", "--foreground"], { env, nodeArgs: ["--require", SLOW_LISTEN] }));
    const runs = starts.map((c, i) => collect(c, 60_000, `start ${i}`).catch((err: Error) => err));
    const pids = starts.map((c) => c.pid as number);
    // The others end by themselves, saying who runs.
    const ended: Array<CliRun | Error> = [];
    await until(
      () => starts.filter((c) => c.exitCode !== null || c.signalCode !== null).length >= 3,
      "three of four starts to end",
      60_000,
    );
    const winners = starts.filter((c) => c.exitCode === null && c.signalCode === null);
    expect(winners.length).toBe(1);
    const winner = winners[0]?.pid as number;
    for (const [i, c] of starts.entries()) if (c.pid !== winner) ended.push(await (runs[i] as Promise<CliRun | Error>));
    for (const r of ended) {
      expect(r).not.toBeInstanceOf(Error);
      expect((r as CliRun).stderr).toContain(`already running (pid ${winner})`);
    }
    const socketPath = join(w.mcpdHome, "mcpd.sock");
    const c = await until(
      async () => (existsSync(socketPath) ? RawClient.open(socketPath).catch(() => undefined) : undefined),
      "the socket",
    );
    clients.push(c);
    await c.initialize();
    await until(async () => (await status(c)).servers.every((s: any) => s.state === "ready"), "fx ready");
    expect((await status(c)).daemon.pid).toBe(winner);
    expect(readFileSync(join(w.mcpdHome, "mcpd.pid"), "utf8").trim()).toBe(String(winner));
    expect(lstatSync(socketPath).isSocket()).toBe(true);
    expect(serversByName(w).get("fx")?.length).toBe(1);
    for (const p of pids) if (p !== winner) expect(alive(p)).toBe(false);
    // The winner still stops cleanly, and takes its files with it.
    process.kill(winner, "SIGTERM");
    await until(() => !alive(winner), "the daemon to exit", 30_000);
    expect(existsSync(socketPath)).toBe(false);
    expect(existsSync(join(w.mcpdHome, "mcpd.pid"))).toBe(false);
    expect(existsSync(`${socketPath}.lock`)).toBe(false);
  });

  it("a lock left behind (its daemon killed, or its pid since reused by another process) does not stop the next start", {
    timeout: 60_000,
  }, async () => {
    const w = (world = new CliWorld());
    w.writeConfig({});
    const lock = join(w.mcpdHome, "mcpd.sock.lock");
    mkdirSync(w.mcpdHome, { recursive: true, mode: 0o700 });
    // This test's own pid: alive, but with another start time than the one recorded.
    writeFileSync(lock, `${process.pid} 1\n`, { mode: 0o600 });
    const first = await w.run(["start"]);
    expect(first.code, first.stderr).toBe(0);
    const pid = w.daemonPid() as number;
    expect(readFileSync(lock, "utf8").split(" ")[0]).toBe(String(pid));
    process.kill(pid, "SIGKILL");
    await until(() => !alive(pid), "the daemon to die");
    // Its lock stays behind, naming a dead pid.
    expect(existsSync(lock)).toBe(true);
    const second = await w.run(["start"]);
    expect(second.code, second.stderr).toBe(0);
    expect(w.daemonPid()).not.toBe(pid);
    expect((await w.run(["stop"])).code).toBe(0);
    expect(existsSync(lock)).toBe(false);
  });

  it("regression: a foreground daemon whose stderr pipe nobody reads keeps answering, holds bounded memory and exits promptly on SIGTERM (it held every log line in memory, RSS 60 -> 550 MB, and was still alive 10 s after SIGTERM)", {
    timeout: 120_000,
  }, async () => {
    const w = (world = new CliWorld());
    w.writeConfig({});
    const env = { ...w.env, MCPD_FOREGROUND_REEXEC: "0", MCPD_HTTP_PORT: "0" };
    // Its stdout and stderr are pipes this test never reads: once they are full, every write waits.
    const d = w.spawn(["start", "--foreground", "--log-level", "trace"], { env });
    const pid = d.pid as number;
    const socketPath = join(w.mcpdHome, "mcpd.sock");
    const c = await until(
      async () => (existsSync(socketPath) ? RawClient.open(socketPath).catch(() => undefined) : undefined),
      "the socket",
    );
    clients.push(c);
    await c.initialize();
    const before = rssBytes(pid);
    // About 80 MB of trace lines (each request's payload is logged), sent as fast as the daemon reads them.
    const answered = await flood(socketPath, 20_000, "x".repeat(4000));
    expect(answered).toBe(20_000);
    // Still answering, and saying that log lines were dropped.
    const st = await w.run(["status", "--json"], { env });
    expect(st.code, st.stderr).toBe(0);
    expect(JSON.parse(st.stdout).daemon.logDroppedLines).toBeGreaterThan(0);
    // Bounded: what stderr holds is at most its bound (1 MiB), not the 80 MB written.
    expect(rssBytes(pid) - before).toBeLessThan(64 * 1024 * 1024);
    process.kill(pid, "SIGTERM");
    await until(() => d.exitCode !== null || d.signalCode !== null, "the daemon to exit on SIGTERM", 15_000);
    expect(d.exitCode).toBe(0);
    expect(existsSync(socketPath)).toBe(false);
  });
});

function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m?.[1]) * 1024;
}

/** Sends `n` pings carrying `pad` on one connection (waiting for drain when the socket is full); resolves with the answers counted. */
function flood(socketPath: string, n: number, pad: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = connect(socketPath);
    let sent = 0;
    let got = 0;
    const pump = (): void => {
      while (sent < n) {
        const ok = s.write(`${JSON.stringify({ jsonrpc: "2.0", id: sent, method: "ping", params: { pad } })}\n`);
        sent++;
        if (!ok) {
          s.once("drain", pump);
          return;
        }
      }
    };
    s.on("connect", pump);
    s.on("error", reject);
    s.on("data", (chunk: Buffer) => {
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) got++;
      if (got >= n) {
        s.destroy();
        resolve(got);
      }
    });
  });
}
