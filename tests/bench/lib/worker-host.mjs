/**
 * The harness side of a worker process (workers/*.mjs): spawn with a JSON spec, wait for typed JSON-line
 * replies, send commands, stop gracefully (stdin EOF, then SIGTERM/SIGKILL through Resources).
 * A worker that exits or reports `{type: "error"}` makes every pending wait reject with its message.
 */
import { createInterface } from "node:readline";

export class Worker {
  queue = [];
  waiters = [];
  failure;

  constructor(resources, script, spec, { name = "worker", nodeArgs = [], env } = {}) {
    this.resources = resources;
    this.name = name;
    this.proc = resources.spawn(name, process.execPath, [...nodeArgs, script, JSON.stringify(spec)], env ? { env } : {});
    this.pid = this.proc.pid;
    createInterface({ input: this.proc.stdout }).on("line", (line) => {
      let msg;
      try {
        msg = JSON.parse(line);
      } catch {
        return this.fail(new Error(`${name} wrote a non-JSON line: ${line.slice(0, 200)}`));
      }
      if (msg.type === "error") return this.fail(new Error(`${name} failed: ${msg.message}`));
      this.queue.push(msg);
      this.flush();
    });
    this.proc.once("exit", (code, signal) => {
      if (!this.stopping) this.fail(new Error(`${name} exited unexpectedly (${code ?? signal}):\n${this.proc.tail()}`));
    });
    this.proc.stdin.on("error", () => {});
  }

  fail(err) {
    this.failure ??= err;
    for (const w of this.waiters.splice(0)) w.reject(this.failure);
  }

  flush() {
    while (this.waiters.length && this.queue.length) {
      const w = this.waiters[0];
      const i = this.queue.findIndex((m) => m.type === w.type);
      if (i < 0) return;
      this.waiters.shift();
      w.resolve(this.queue.splice(i, 1)[0]);
    }
  }

  /** Resolves with the next message of `type`; rejects on worker failure or after `timeoutMs`. */
  next(type, timeoutMs = 120_000) {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${this.name}: no "${type}" reply within ${timeoutMs} ms:\n${this.proc.tail()}`)),
        timeoutMs,
      );
      const w = {
        type,
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      this.waiters.push(w);
      this.flush();
    });
  }

  send(cmd) {
    this.proc.stdin.write(JSON.stringify(cmd) + "\n");
  }

  async request(cmd, replyType, timeoutMs) {
    this.send(cmd);
    return this.next(replyType, timeoutMs);
  }

  /** Throws if the worker died or reported an error, even while idle (nobody was waiting on it). */
  check() {
    if (this.failure) throw this.failure;
  }

  /** Asks the worker to close its clients and exit; forces it after `graceMs`. Never throws (see {@link check}). */
  async stop(graceMs = 10_000) {
    this.stopping = true;
    if (this.proc.exitCode === null && this.proc.signalCode === null) {
      this.proc.stdin.end();
      await new Promise((resolve) => {
        const t = setTimeout(resolve, graceMs);
        this.proc.once("exit", () => {
          clearTimeout(t);
          resolve();
        });
        if (this.proc.exitCode !== null || this.proc.signalCode !== null) resolve();
      });
    }
    await this.resources.stop(this.proc, 3_000);
  }
}

/** Throws the first failure among `workers` (call it at the end of a scenario, before stopping them). */
export function checkWorkers(workers) {
  for (const w of workers) w.check();
}

/** Starts a worker and waits for its `ready` message. */
export async function startWorker(resources, script, spec, options = {}) {
  const w = new Worker(resources, script, spec, options);
  try {
    w.ready = await w.next("ready", options.readyTimeoutMs ?? 60_000);
  } catch (err) {
    await w.stop(1_000).catch(() => {});
    throw err;
  }
  for (const pid of w.ready.pids ?? []) resources.adopt(pid);
  resources.noteTrees();
  return w;
}
