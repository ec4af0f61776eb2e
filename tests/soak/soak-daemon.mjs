/**
 * The daemon under soak: a real `mcpd start --foreground` in a fresh short MCPD_HOME, with its inspector
 * on 127.0.0.1 (a free port) so that full garbage collections can be forced before memory is read, and
 * readers for what the soak checks: open file descriptors and resident memory from /proc.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import { openFds, residentBytes } from "../helpers/procfs.mjs";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const MCPD_BIN = join(ROOT, "daemon/bin/mcpd.js");
export const FIXTURE = join(ROOT, "tests/fixtures/servers/mcp-fixture.mjs");

/** Polls `cond` every `intervalMs` until it returns a truthy value; throws naming `what` after `timeoutMs`. */
export async function until(cond, what, timeoutMs = 20_000, intervalMs = 20) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const v = await cond();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${last.message}` : ""}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Whether `pid` is a live process (zombies count as dead: nothing reaps them in containers). */
export function isAlive(pid) {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    return err.code === "EPERM";
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

/** A fixture server entry; it must not inherit the daemon's inspector flag. */
export function fixture(name, extra = {}) {
  return { command: process.execPath, args: [FIXTURE, "--name", name], env: { NODE_OPTIONS: "" }, ...extra };
}

export class SoakDaemon {
  /**
   * @param {Record<string, unknown>} servers
   * @param {Record<string, string>} [extraEnv] variables added to the daemon's environment
   */
  constructor(servers, extraEnv = {}) {
    this.home = mkdtempSync(join(tmpdir(), "mcpd-soak-"));
    this.socketPath = join(this.home, "mcpd.sock");
    const configFile = join(this.home, "config.json");
    writeFileSync(configFile, JSON.stringify({ mcpServers: servers }, null, 2));
    // MCPD_FOREGROUND_REEXEC=0: the daemon is the process started, whose inspector and /proc are read.
    const env = {
      ...process.env,
      MCPD_HOME: this.home,
      MCPD_CONFIG: configFile,
      NODE_OPTIONS: "--inspect=127.0.0.1:0",
      MCPD_FOREGROUND_REEXEC: "0",
      ...extraEnv,
    };
    for (const k of ["MCPD_SOCKET", "XDG_RUNTIME_DIR", "XDG_STATE_HOME", "MCPD_LOG_LEVEL"]) delete env[k];
    this.proc = spawn(process.execPath, [MCPD_BIN, "start", "--foreground", "--log-level", "warn"], {
      env,
      stdio: ["ignore", "ignore", "pipe"],
    });
    this.pid = this.proc.pid;
    this.inspectorUrl = undefined;
    this.stderrTail = "";
    this.proc.stderr.on("data", (d) => {
      this.stderrTail = (this.stderrTail + d.toString()).slice(-20_000);
      this.inspectorUrl ??= /Debugger listening on (ws:\/\/\S+)/.exec(this.stderrTail)?.[1];
    });
    /** Pids of the servers seen in status, to check nothing outlives the daemon. */
    this.serverPids = new Set();
  }

  get exited() {
    return this.proc.exitCode !== null || this.proc.signalCode !== null;
  }

  async ready() {
    await until(() => (existsSync(this.socketPath) && this.inspectorUrl) || this.exited, "the daemon's socket and inspector", 30_000);
    if (this.exited) throw new Error(`the daemon exited (${this.proc.exitCode ?? this.proc.signalCode}): ${this.stderrTail}`);
  }

  /** Open file descriptors of the daemon. */
  fds() {
    return openFds(this.pid).length;
  }

  /** Resident memory of the daemon, in bytes. */
  rss() {
    return residentBytes(this.pid);
  }

  /** Forces a full garbage collection through the inspector; returns V8's heap in use afterwards, in bytes. */
  async collectGarbage() {
    const ws = new WebSocket(this.inspectorUrl);
    try {
      await new Promise((res, rej) => {
        ws.once("open", res);
        ws.once("error", rej);
      });
      const replies = new Map();
      ws.on("message", (data) => {
        const m = JSON.parse(String(data));
        replies.get(m.id)?.(m);
      });
      const call = (id, method, params) =>
        new Promise((res, rej) => {
          replies.set(id, (m) => (m.error ? rej(new Error(`${method}: ${JSON.stringify(m.error)}`)) : res(m.result)));
          ws.send(JSON.stringify({ id, method, ...(params ? { params } : {}) }));
        });
      await call(1, "HeapProfiler.collectGarbage");
      const r = await call(2, "Runtime.evaluate", { expression: "process.memoryUsage().heapUsed", returnByValue: true });
      return Number(r.result.value);
    } finally {
      ws.close();
    }
  }

  /**
   * Memory after several full collections (V8 shrinks its heap over a few): the lowest RSS and heap seen
   * over `rounds` collections `gapMs` apart.
   */
  async settledMemory(rounds = 6, gapMs = 250) {
    let rss = Infinity;
    let heap = Infinity;
    for (let i = 0; i < rounds; i++) {
      heap = Math.min(heap, await this.collectGarbage());
      rss = Math.min(rss, this.rss());
      await new Promise((r) => setTimeout(r, gapMs));
    }
    return { rss, heap };
  }

  /** Remembers the servers' pids from a status answer. */
  noteServers(status) {
    for (const s of status.servers) if (Number.isInteger(s.pid)) this.serverPids.add(s.pid);
  }

  /**
   * SIGTERM, then SIGKILL if it is still there after 15 s; then ends any server process still alive
   * (they are ours) and reports them. Removes the home directory. Safe to call twice.
   * @returns {Promise<{exitCode: number | null, leftBehind: number[]}>}
   */
  async stop() {
    if (!this.exited) {
      this.proc.kill("SIGTERM");
      await until(() => this.exited, "daemon exit", 15_000).catch(() => this.proc.kill("SIGKILL"));
      await until(() => this.exited, "daemon exit after SIGKILL", 5_000).catch(() => {});
    }
    await until(() => [...this.serverPids].every((p) => !isAlive(p)), "server processes to end", 10_000).catch(() => {});
    const leftBehind = [...this.serverPids].filter((p) => isAlive(p));
    for (const p of leftBehind) {
      try {
        process.kill(p, "SIGKILL");
      } catch {
        // Gone meanwhile.
      }
    }
    rmSync(this.home, { recursive: true, force: true });
    return { exitCode: this.proc.exitCode, leftBehind };
  }
}
