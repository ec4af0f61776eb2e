/**
 * Everything the harness starts (processes, temp dirs) is registered here and released by cleanup(),
 * which run.mjs calls in a finally block and on SIGINT/SIGTERM, so a failing or interrupted run leaves
 * nothing behind. Processes are ended by pid only: the ones we spawned and their descendants, identified by
 * pid and start time so a recycled pid is never signalled.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { processTable, processTree } from "./procfs.mjs";
import { makeTempDir, removeDir, sleep } from "./env.mjs";

function startTime(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat[stat.lastIndexOf(")") + 2];
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

export class Resources {
  /** Root processes we spawned: pid -> {child, name}. */
  roots = new Map();
  /** Every process seen in our trees: pid -> start time (to recognise a recycled pid). */
  known = new Map();
  dirs = new Set();

  /**
   * Spawns and registers a process. Its stderr is kept (last 64 KiB) for error messages: `tail()`.
   * @returns the ChildProcess, with `.tail()` added.
   */
  spawn(name, command, args, options = {}) {
    const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"], ...options });
    let err = "";
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (d) => {
      err += d;
      if (err.length > 65_536) err = err.slice(-32_768);
    });
    child.tail = () => err.slice(-4_000);
    child.label = name;
    if (child.pid !== undefined) {
      this.roots.set(child.pid, { child, name });
      this.known.set(child.pid, startTime(child.pid));
    }
    child.once("exit", () => this.roots.delete(child.pid));
    return child;
  }

  /** Registers a process spawned elsewhere (e.g. by an SDK transport) so cleanup ends it too. */
  adopt(pid) {
    if (pid) this.known.set(pid, startTime(pid));
  }

  /** A temp dir removed at cleanup. */
  tempDir(prefix) {
    const dir = makeTempDir(prefix);
    this.dirs.add(dir);
    return dir;
  }

  releaseDir(dir) {
    removeDir(dir);
    this.dirs.delete(dir);
  }

  /** Records the current descendants of every root, so they are ended even if their parent dies first. */
  noteTrees() {
    const table = processTable();
    for (const pid of this.roots.keys()) for (const p of processTree(pid, table)) if (!this.known.has(p)) this.known.set(p, startTime(p));
  }

  /**
   * Ends one root process gracefully (SIGTERM, then SIGKILL after `graceMs`), and every descendant still
   * alive after it exited. Resolves when all are gone.
   */
  async stop(child, graceMs = 5_000) {
    const pid = child.pid;
    if (pid === undefined) return;
    const tree = processTree(pid);
    for (const p of tree) if (!this.known.has(p)) this.known.set(p, startTime(p));
    if (alive(pid)) {
      try {
        process.kill(pid, "SIGTERM");
      } catch {}
      const deadline = Date.now() + graceMs;
      while (alive(pid) && Date.now() < deadline) await sleep(20);
    }
    // Give descendants the same grace (the daemon ends its servers itself), then force.
    const deadline = Date.now() + graceMs;
    while (tree.some((p) => this.isOurs(p)) && Date.now() < deadline) await sleep(20);
    for (const p of tree) this.kill(p, "SIGKILL");
    for (const p of tree) this.known.delete(p);
    this.roots.delete(pid);
  }

  isOurs(pid) {
    return this.known.has(pid) && alive(pid) && startTime(pid) === this.known.get(pid);
  }

  kill(pid, signal) {
    if (!this.isOurs(pid)) return;
    try {
      process.kill(pid, signal);
    } catch {}
  }

  /** Ends everything still running and removes every temp dir. Never throws. */
  async cleanup() {
    this.noteTrees();
    const roots = [...this.roots.values()];
    await Promise.all(roots.map(({ child }) => this.stop(child, 3_000).catch(() => {})));
    for (const pid of this.known.keys()) this.kill(pid, "SIGTERM");
    const deadline = Date.now() + 3_000;
    while ([...this.known.keys()].some((p) => this.isOurs(p)) && Date.now() < deadline) await sleep(20);
    for (const pid of this.known.keys()) this.kill(pid, "SIGKILL");
    this.known.clear();
    for (const dir of this.dirs) {
      try {
        removeDir(dir);
      } catch {}
    }
    this.dirs.clear();
  }

  /** Synchronous last resort (process 'exit'): SIGKILL everything known, remove dirs. */
  killAllSync() {
    this.noteTrees();
    for (const pid of this.known.keys()) this.kill(pid, "SIGKILL");
    for (const dir of this.dirs) {
      try {
        removeDir(dir);
      } catch {}
    }
  }

  /** Pids still alive among everything registered (should be empty after cleanup). */
  leftovers() {
    return [...this.known.keys()].filter((p) => this.isOurs(p));
  }
}
