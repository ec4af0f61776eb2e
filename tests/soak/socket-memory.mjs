#!/usr/bin/env node
/**
 * The daemon's resident memory under socket clients that make it hold bytes, as users start it, never part
 * of `npm test`: `node tests/soak/socket-memory.mjs` (after `npm run build`). Figures for
 * docs/reliability.md ("Attacks tried: before and after").
 *
 * Each scenario runs against a fresh daemon with default settings (`mcpd.maxBufferedBytesTotal` 128 MiB),
 * started as a user starts it: `mcpd start --foreground` from a plain environment (no NODE_OPTIONS, no
 * MALLOC_* variables, as Docker or supervisord run it), or `mcpd start` (detached). Nothing is forced: no
 * inspector, no collection from outside; the daemon's memory is what it does by itself.
 *
 * Printed per scenario, as deltas from the baseline (the lowest RSS over a second, after a warm-up):
 *   peak   the highest RSS during the load (VmHWM, reset once the baseline is taken)
 *   after  RSS five seconds (--after-ms) after the load ended and every load connection closed
 * against the targets: peak within the budget + 64 MiB, after within 48 MiB.
 *
 * Scenarios (--scenario, comma-separated, default all)
 *   flood    60 clients that never read, while a server sends 100,000 notifications of 2 KB
 *   lines    200 connections each send a 4 MiB JSON line slowly (64 KiB every 10 ms), then read the answer
 *   dribble  100 connections each dribble a 3.9 MiB JSON line (4 KiB writes to each in turn; --dribble-bytes)
 *
 * Flags: --start foreground,detached (default both), --scenario, --after-ms N (default 5000), --env K=V
 * (repeatable: a variable for the daemon's environment, such as MCPD_FOREGROUND_REEXEC=0 or a MALLOC_ one).
 * Exit code 0 when every run met its targets, 1 when one did not or could not run.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { residentBytes } from "../helpers/procfs.mjs";
import { LineClient } from "./line-client.mjs";
import { MCPD_BIN, fixture, isAlive, until } from "./soak-daemon.mjs";

const MiB = 2 ** 20;
const BUDGET = 128 * MiB;
const PEAK_TARGET = BUDGET + 64 * MiB;
const AFTER_TARGET = 48 * MiB;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (t) => process.stdout.write(`${t}\n`);
const mib = (n) => `${n >= 0 ? "+" : ""}${(n / MiB).toFixed(0)} MiB`;

const { values: args } = parseArgs({
  options: {
    start: { type: "string", default: "foreground,detached" },
    scenario: { type: "string", default: "flood,lines,dribble" },
    "after-ms": { type: "string", default: "5000" },
    env: { type: "string", multiple: true, default: [] },
    "dribble-bytes": { type: "string", default: "4096" },
  },
  strict: true,
});
const afterMs = Number(args["after-ms"]);

function vmHwm(pid) {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) * 1024 : Number.NaN;
}

/** A daemon in a fresh home, started as `how` (foreground or detached) from a plain environment. */
class Daemon {
  constructor(how) {
    this.how = how;
    this.home = mkdtempSync(join(tmpdir(), "mcpd-sm-"));
    this.socketPath = join(this.home, "mcpd.sock");
    const configFile = join(this.home, "config.json");
    writeFileSync(
      configFile,
      JSON.stringify({ mcpd: { http: { port: 0 } }, mcpServers: { fl: fixture("fl", { healthCheckIntervalMs: 0 }) } }),
    );
    this.env = { ...process.env, MCPD_HOME: this.home, MCPD_CONFIG: configFile };
    for (const k of Object.keys(this.env)) if (k.startsWith("MALLOC_") || k === "NODE_OPTIONS") delete this.env[k];
    for (const k of ["MCPD_SOCKET", "XDG_RUNTIME_DIR", "XDG_STATE_HOME", "MCPD_LOG_LEVEL"]) delete this.env[k];
    for (const kv of args.env) this.env[kv.slice(0, kv.indexOf("="))] = kv.slice(kv.indexOf("=") + 1);
  }

  async start() {
    if (this.how === "foreground") {
      this.proc = spawn(process.execPath, [MCPD_BIN, "start", "--foreground", "--log-level", "error"], {
        env: this.env,
        stdio: ["ignore", "ignore", "inherit"],
      });
    } else {
      const r = spawnSync(process.execPath, [MCPD_BIN, "start", "--log-level", "error"], { env: this.env, encoding: "utf8" });
      if (r.status !== 0) throw new Error(`mcpd start: ${r.stdout}${r.stderr}`);
    }
    this.checker = await until(() => LineClient.open(this.socketPath), "the daemon's socket", 30_000);
    await this.checker.call("mcpd/select", { control: true });
    const s = await until(
      async () => {
        const st = await this.status();
        return st.servers.every((x) => x.state === "ready") && st;
      },
      "servers ready",
      30_000,
    );
    this.pid = s.daemon.pid;
  }

  status() {
    return this.checker.call("mcpd/status");
  }

  async stop() {
    this.checker?.close();
    if (this.proc) {
      this.proc.kill("SIGTERM");
      await until(() => this.proc.exitCode !== null || this.proc.signalCode !== null, "daemon exit", 15_000).catch(() =>
        this.proc.kill("SIGKILL"),
      );
    } else {
      spawnSync(process.execPath, [MCPD_BIN, "stop"], { env: this.env });
    }
    await until(() => !isAlive(this.pid), "the daemon's process to end", 15_000).catch(() => process.kill(this.pid, "SIGKILL"));
    rmSync(this.home, { recursive: true, force: true });
  }
}

/** A raw connection that reads (and ignores) what it gets; `closedByPeer` once the daemon closed it. */
function rawSocket(path) {
  return new Promise((resolve, reject) => {
    const s = connect(path);
    s.closedByPeer = false;
    s.answered = false;
    s.once("connect", () => resolve(s));
    s.once("error", reject);
    s.on("error", () => {});
    s.on("close", () => (s.closedByPeer = true));
    s.on("data", () => (s.answered = true));
  });
}

function writeAll(s, data) {
  return new Promise((resolve) => (s.destroyed || s.closedByPeer ? resolve() : s.write(data, () => resolve())));
}

const PREFIX = '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"';
const SUFFIX = '"}}\n';

async function flood(d) {
  const sleepers = [];
  for (let i = 0; i < 60; i++) {
    const c = await LineClient.open(d.socketPath);
    await c.call("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "sleeper", version: "1" } });
    c.socket.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
    c.socket.pause();
    sleepers.push(c);
  }
  const caller = await LineClient.open(d.socketPath);
  await caller.call("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "caller", version: "1" } });
  await caller.call("logging/setLevel", { level: "error" });
  const r = await caller.call("tools/call", { name: "fl__flood", arguments: { count: 100_000, size: 2_000 } }, 600_000);
  const left = (await d.status()).daemon.connections - 2;
  caller.close();
  for (const c of sleepers) c.close();
  return `${r.content?.[0]?.text}; ${left} of 60 sleepers still connected at the end`;
}

/** `n` connections each send one line of `size` bytes in writes of `chunk` bytes; `pace` waits between rounds. */
async function sendLines(d, n, size, chunkBytes, pace) {
  const socks = [];
  for (let i = 0; i < n; i++) socks.push(await rawSocket(d.socketPath));
  const body = Buffer.alloc(chunkBytes, "x");
  const bodyBytes = size - PREFIX.length - SUFFIX.length;
  await Promise.all(socks.map((s) => writeAll(s, PREFIX)));
  for (let sent = 0; sent < bodyBytes; sent += chunkBytes) {
    const part = body.subarray(0, Math.min(chunkBytes, bodyBytes - sent));
    await pace(socks.filter((s) => !s.closedByPeer).map((s) => writeAll(s, part)));
  }
  await Promise.all(socks.map((s) => writeAll(s, SUFFIX)));
  await until(() => socks.every((s) => s.answered || s.closedByPeer), "every line answered or closed", 60_000).catch(() => {});
  const answered = socks.filter((s) => s.answered && !s.closedByPeer).length;
  for (const s of socks) s.destroy();
  return `${answered} of ${n} lines answered on an open connection`;
}

const lines = (d) =>
  sendLines(d, 200, 4 * MiB - 1024, 64 * 1024, async (writes) => {
    await Promise.all(writes);
    await sleep(10);
  });

const dribble = (d) =>
  sendLines(d, 100, Math.floor(3.9 * MiB), Number(args["dribble-bytes"]), async (writes) => {
    await Promise.all(writes);
    await sleep(1);
  });

const SCENARIOS = { flood, lines, dribble };

async function measure(how, name) {
  const d = new Daemon(how);
  try {
    await d.start();
    for (let i = 0; i < 200; i++) await d.checker.call("ping");
    await sleep(2_000);
    let base = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 10; i++, await sleep(100)) base = Math.min(base, residentBytes(d.pid));
    writeFileSync(`/proc/${d.pid}/clear_refs`, "5");
    let sampled = 0;
    const sampler = setInterval(() => {
      sampled = Math.max(sampled, residentBytes(d.pid));
    }, 20);
    const note = await SCENARIOS[name](d);
    await until(async () => (await d.status()).daemon.connections === 1, "the load connections gone", 60_000);
    clearInterval(sampler);
    const peak = Math.max(vmHwm(d.pid), sampled);
    await sleep(afterMs);
    const after = residentBytes(d.pid);
    const st = (await d.status()).daemon;
    const ok = peak - base <= PEAK_TARGET && after - base <= AFTER_TARGET;
    log(
      `${how.padEnd(10)} ${name.padEnd(8)} baseline ${(base / MiB).toFixed(0)} MiB  peak ${mib(peak - base)}  after ${afterMs / 1000} s ${mib(after - base)}  ${ok ? "PASS" : "MISS"}`,
    );
    log(`           ${note}; dropped ${JSON.stringify(st.dropped)}; bufferedBytes after ${st.bufferedBytes}`);
    return ok;
  } finally {
    await d.stop();
  }
}

let failed = false;
for (const how of args.start.split(",")) {
  for (const name of args.scenario.split(",")) {
    if (!SCENARIOS[name] || !["foreground", "detached"].includes(how)) {
      log(`unknown start ${how} or scenario ${name}`);
      process.exit(2);
    }
    try {
      if (!(await measure(how, name))) failed = true;
    } catch (err) {
      failed = true;
      log(`${how} ${name}: FAILED: ${err.stack}`);
    }
  }
}
process.exit(failed ? 1 : 0);
