import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const MCPD_BIN = join(ROOT, "daemon/bin/mcpd.js");
export const FIXTURE = join(ROOT, "tests/fixtures/servers/mcp-fixture.mjs");
export const EVERYTHING = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");

/** Polls `cond` until it returns a truthy value, or throws after `timeoutMs` (tests/helpers/process.ts waitFor). */
export function until<T>(cond: () => T | Promise<T>, what: string, timeoutMs = 20_000, intervalMs = 20): Promise<NonNullable<T>> {
  return waitFor(cond, { timeoutMs, intervalMs, message: what });
}

import { waitFor } from "../helpers/process.js";
export { isAlive as alive } from "../helpers/process.js";

/** A fixture server entry for config.json. */
/**
 * How an SDK client's stdio transport (v1's or v2's StdioClientTransport) runs `mcpd connect ARGS...` onto
 * test daemon `d`: no autostart (the test's daemon is running), its home and config, stderr piped.
 */
export function connectCommand(
  d: Pick<TestDaemon, "home" | "configFile">,
  args: readonly string[] = [],
): { command: string; args: string[]; env: Record<string, string>; stderr: "pipe" } {
  return {
    command: process.execPath,
    args: [MCPD_BIN, "connect", ...args, "--no-autostart"],
    env: { ...(process.env as Record<string, string>), MCPD_HOME: d.home, MCPD_CONFIG: d.configFile },
    stderr: "pipe",
  };
}

export function fixture(name: string, extraArgs: string[] = [], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: process.execPath, args: [FIXTURE, "--name", name, ...extraArgs], ...extra };
}

export interface TestDaemon {
  home: string;
  socketPath: string;
  configFile: string;
  proc: ChildProcess;
  stderr: () => string;
  writeConfig(servers: Record<string, unknown>): void;
  /** A raw socket connection speaking JSONL, with a tiny request helper. */
  raw(): Promise<RawClient>;
  /** A raw connection that declared itself a control connection (`mcpd/select {control: true}` first), like the CLI's. */
  control(): Promise<RawClient>;
  stop(): Promise<void>;
}

export interface TestDaemonOptions {
  env?: Record<string, string>;
  /** The config's `"mcpd"` section (daemon settings), kept by {@link TestDaemon.writeConfig}. */
  settings?: Record<string, unknown>;
  /** Start the daemon under this open-file limit (`ulimit -n`, soft and hard). */
  nofile?: number;
  /** An MCPD_HOME to use (a daemon started again on the state of an earlier one); the test removes it. Default: a fresh one, removed by stop(). */
  home?: string;
  /** The node binary the daemon runs on (another supported Node); default this process's. */
  node?: string;
}

/** Starts the real daemon (`mcpd start --foreground`) as a process in a fresh short MCPD_HOME. */
export async function startTestDaemon(servers: Record<string, unknown>, opts: TestDaemonOptions = {}): Promise<TestDaemon> {
  const home = opts.home ?? mkdtempSync(join(tmpdir(), "mcpd-"));
  const configFile = join(home, "config.json");
  const writeConfig = (s: Record<string, unknown>): void =>
    writeFileSync(configFile, JSON.stringify({ ...(opts.settings ? { mcpd: opts.settings } : {}), mcpServers: s }, null, 2));
  writeConfig(servers);
  // MCPD_FOREGROUND_REEXEC=0: the daemon runs in the process started, so proc.pid is its pid (the tests
  // signal it, stop it and read /proc of it); the foreground start's child has tests of its own.
  const env = {
    ...process.env,
    MCPD_HOME: home,
    MCPD_CONFIG: configFile,
    MCPD_SOCKET: "",
    XDG_RUNTIME_DIR: "",
    MCPD_FOREGROUND_REEXEC: "0",
    ...opts.env,
  };
  delete (env as Record<string, string | undefined>).MCPD_SOCKET;
  const argv = [MCPD_BIN, "start", "--foreground", "--log-level", "debug"];
  // sh execs node in place, so proc.pid is the daemon's pid.
  const proc =
    opts.nofile === undefined
      ? spawn(opts.node ?? process.execPath, argv, { env, stdio: ["ignore", "pipe", "pipe"] })
      : spawn("/bin/sh", ["-c", 'ulimit -n "$0" && exec "$@"', String(opts.nofile), opts.node ?? process.execPath, ...argv], {
          env,
          stdio: ["ignore", "pipe", "pipe"],
        });
  let err = "";
  proc.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
    if (err.length > 2_000_000) err = err.slice(-1_000_000);
  });
  proc.stdout?.resume();
  const socketPath = join(home, "mcpd.sock");
  // The file appears at bind(), a moment before listen(): wait until a connection is accepted.
  const answers = (): Promise<boolean> =>
    new Promise((res) => {
      const s = connect(socketPath);
      s.once("connect", () => {
        s.destroy();
        res(true);
      });
      s.once("error", () => res(false));
    });
  try {
    await until(async () => proc.exitCode !== null || (existsSync(socketPath) && (await answers())), "daemon socket");
    if (proc.exitCode !== null) throw new Error(`daemon exited ${proc.exitCode}: ${err}`);
  } catch (e) {
    // Nothing of a daemon that never came up may outlive the test: its process and its home.
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill("SIGKILL");
      await until(() => proc.exitCode !== null || proc.signalCode !== null, "daemon exit").catch(() => {});
    }
    rmSync(home, { recursive: true, force: true });
    throw e;
  }
  const clients: RawClient[] = [];
  return {
    home,
    socketPath,
    configFile,
    proc,
    stderr: () => err,
    writeConfig,
    async raw() {
      const c = await RawClient.open(socketPath);
      clients.push(c);
      return c;
    },
    async control() {
      const c = await RawClient.open(socketPath);
      clients.push(c);
      const r = await c.request("mcpd/select", { control: true });
      if (!r.result) throw new Error(`mcpd/select {control: true} failed: ${JSON.stringify(r.error)}`);
      return c;
    },
    async stop() {
      for (const c of clients) c.close();
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill("SIGTERM");
        await until(() => proc.exitCode !== null || proc.signalCode !== null, "daemon exit", 20_000).catch(() => proc.kill("SIGKILL"));
      }
      if (opts.home === undefined) rmSync(home, { recursive: true, force: true });
    },
  };
}

/** A minimal JSONL client on the raw socket, for protocol-level tests. */
export class RawClient {
  readonly messages: any[] = [];
  /** Every line received, as the daemon wrote it (without its newline). */
  readonly lines: string[] = [];
  private buf = "";
  private nextId = 1;
  private waiters: Array<() => void> = [];

  private constructor(readonly socket: Socket) {
    socket.setEncoding("utf8");
    socket.on("data", (d: string) => {
      this.buf += d;
      let i: number;
      while ((i = this.buf.indexOf("\n")) >= 0) {
        const line = this.buf.slice(0, i);
        this.buf = this.buf.slice(i + 1);
        if (!line.trim()) continue;
        this.lines.push(line);
        this.messages.push(JSON.parse(line));
      }
      for (const w of this.waiters.splice(0)) w();
    });
    socket.on("error", () => {});
  }

  static open(path: string): Promise<RawClient> {
    return new Promise((res, rej) => {
      const s = connect(path);
      s.once("connect", () => res(new RawClient(s)));
      s.once("error", rej);
    });
  }

  writeLine(line: string): void {
    this.socket.write(line.endsWith("\n") ? line : `${line}\n`);
  }

  send(msg: object): void {
    this.writeLine(JSON.stringify(msg));
  }

  /**
   * The first message received (so far or from now on) that `pred` accepts, woken by each read: no polling
   * (a poll every 10 ms cost each request up to 10 ms, most of a long test's time).
   * @throws after `timeoutMs` without one.
   */
  waitFor(pred: (m: any) => boolean, what: string, timeoutMs = 20_000): Promise<any> {
    let scanned = 0;
    const find = (): any => {
      for (; scanned < this.messages.length; scanned++) if (pred(this.messages[scanned])) return this.messages[scanned];
      return undefined;
    };
    const found = find();
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const m = find();
        if (m === undefined) return void this.waiters.push(check);
        clearTimeout(timer);
        resolve(m);
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== check);
        reject(new Error(`waitFor: ${what} not met within ${timeoutMs}ms`));
      }, timeoutMs);
      this.waiters.push(check);
    });
  }

  async request(method: string, params?: object, id: string | number = this.nextId++): Promise<any> {
    this.send({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) });
    return this.waitFor((m) => m.id === id && ("result" in m || "error" in m), `response to ${method}`);
  }

  async initialize(): Promise<any> {
    const r = await this.request("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "raw", version: "1" },
    });
    this.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    return r;
  }

  close(): void {
    this.socket.destroy();
  }
}

/** Reads the JSON lines a fixture server logged (everything it received). */
export function readLog(file: string): any[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}
