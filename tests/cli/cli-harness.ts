/**
 * Helpers for the end-to-end tests of the `mcpd` command: each test gets a short temporary root holding
 * HOME, MCPD_HOME (socket, pid, log) and the config file, runs the built CLI (`node daemon/bin/mcpd.js`)
 * as a subprocess, and at the end kills every process that still belongs to that root.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { waitFor } from "../helpers/process.js";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const MCPD_BIN = join(ROOT, "daemon/bin/mcpd.js");
export const FIXTURE = join(ROOT, "tests/fixtures/servers/mcp-fixture.mjs");

/** The result of one CLI run. */
export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** One test's world: a temporary root with HOME, MCPD_HOME and the config file. */
export class CliWorld {
  readonly root: string;
  readonly home: string;
  readonly mcpdHome: string;
  readonly configFile: string;
  readonly env: NodeJS.ProcessEnv;
  private readonly started: ChildProcess[] = [];

  constructor() {
    // Short: the socket path must fit in 107 bytes.
    this.root = mkdtempSync(join(tmpdir(), "mcpdc-"));
    this.home = join(this.root, "h");
    this.mcpdHome = join(this.root, "m");
    this.configFile = join(this.root, "config.json");
    mkdirSync(this.home);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      HOME: this.home,
      MCPD_HOME: this.mcpdHome,
      MCPD_CONFIG: this.configFile,
      NO_COLOR: "1",
      MCPD_START_TIMEOUT_MS: "30000",
    };
    // Generous start bound: the test machines are loaded. Nothing from the developer's own setup may leak in.
    for (const k of [
      "MCPD_SOCKET",
      "MCPD_CONFIG_DIR",
      "XDG_RUNTIME_DIR",
      "XDG_STATE_HOME",
      "XDG_CONFIG_HOME",
      "FORCE_COLOR",
      "MCPD_LOG_LEVEL",
    ])
      delete env[k];
    this.env = env;
  }

  /** Writes `{ mcpServers: servers }` (or the given document) as the config file. */
  writeConfig(servers: Record<string, unknown>, doc: Record<string, unknown> = {}): void {
    writeFileSync(this.configFile, JSON.stringify({ ...doc, mcpServers: servers }, null, 2));
  }

  /**
   * A fixture server entry that logs every message it receives to `<root>/<name>.log`. Its `env` carries
   * {@link marker}, so {@link processes} finds it and whatever it starts (servers do not inherit the
   * daemon's environment). The marker's value is short, so no masking of env values can hide a path.
   */
  fixture(name: string, extraArgs: string[] = [], extra: Record<string, unknown> = {}): Record<string, unknown> {
    const env = { [this.marker]: "1", ...(extra.env as Record<string, string> | undefined) };
    return { command: process.execPath, args: [FIXTURE, "--name", name, "--log", this.fixtureLog(name), ...extraArgs], ...extra, env };
  }

  /** The name of the environment variable that marks this world's server processes. */
  get marker(): string {
    return `MCPD_TEST_WORLD_${basename(this.root).replace(/[^A-Za-z0-9]/g, "_")}`;
  }

  fixtureLog(name: string): string {
    return join(this.root, `${name}.log`);
  }

  /** Messages the fixture `name` received, parsed. */
  received(name: string): Array<{ method?: string; params?: Record<string, unknown>; id?: unknown }> {
    try {
      return readFileSync(this.fixtureLog(name), "utf8")
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => JSON.parse(l));
    } catch {
      return [];
    }
  }

  /** Starts `mcpd ARGS` without waiting for it (`nodeArgs`: node's own flags, before the script). */
  spawn(args: string[], options: { env?: NodeJS.ProcessEnv; stdin?: "pipe" | "ignore"; nodeArgs?: string[] } = {}): ChildProcess {
    const child = spawn(process.execPath, [...(options.nodeArgs ?? []), MCPD_BIN, ...args], {
      env: options.env ?? this.env,
      cwd: this.root,
      stdio: [options.stdin ?? "ignore", "pipe", "pipe"],
    });
    this.started.push(child);
    return child;
  }

  /** Runs `mcpd ARGS` to completion (bounded by `timeoutMs`, after which it is killed and the run fails). */
  run(args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {}): Promise<CliRun> {
    const child = spawn(process.execPath, [MCPD_BIN, ...args], {
      env: options.env ?? this.env,
      cwd: options.cwd ?? this.root,
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.started.push(child);
    return collect(child, options.timeoutMs ?? 60_000, `mcpd ${args.join(" ")}`);
  }

  /** Runs a shell command line with this world's environment (for script(1)). */
  shell(command: string, timeoutMs = 60_000): Promise<CliRun> {
    const child = spawn("sh", ["-c", command], { env: this.env, cwd: this.root, stdio: ["ignore", "pipe", "pipe"] });
    this.started.push(child);
    return collect(child, timeoutMs, command);
  }

  /** The daemon's pid from its pid file, if any. */
  daemonPid(): number | undefined {
    try {
      const pid = Number.parseInt(readFileSync(join(this.mcpdHome, "mcpd.pid"), "utf8"), 10);
      return Number.isSafeInteger(pid) ? pid : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Live processes that belong to this world: whose command line or environment mentions its root
   * (the daemon inherits MCPD_HOME; fixture servers log into the root and carry {@link marker}, and so
   * does anything they start). Linux /proc.
   */
  processes(): number[] {
    const out: number[] = [];
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
        if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) continue;
        const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
        let environ = "";
        try {
          environ = readFileSync(`/proc/${entry}/environ`, "utf8");
        } catch {
          // Not ours to read: not ours.
        }
        if (cmdline.includes(this.root) || environ.includes(`MCPD_HOME=${this.mcpdHome}`) || environ.includes(`${this.marker}=1`))
          out.push(Number(entry));
      } catch {
        // Gone meanwhile.
      }
    }
    return out;
  }

  /** Kills everything this world started (and everything that still belongs to it), removes the root. */
  async dispose(): Promise<void> {
    for (const c of this.started) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
    for (let round = 0; round < 3; round++) {
      const pids = this.processes();
      if (pids.length === 0) break;
      for (const pid of pids) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
      await until(() => this.processes().length === 0, "processes to die", 5_000).catch(() => {});
    }
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** Collects a child's stdout and stderr until it closes; kills it and rejects, naming `what`, past `timeoutMs`. */
export function collect(child: ChildProcess, timeoutMs: number, what: string): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${what} did not finish within ${timeoutMs} ms; stdout: ${stdout}; stderr: ${stderr}`));
    }, timeoutMs);
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Polls `cond` every `intervalMs` until truthy; throws after `timeoutMs` naming `what` (the shared waitFor). */
export function until<T>(cond: () => T | Promise<T>, what: string, timeoutMs = 20_000, intervalMs = 20): Promise<NonNullable<T>> {
  return waitFor(cond, { message: what, timeoutMs, intervalMs });
}

/** Whether a pid is alive (zombies count as dead). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return false;
  }
}
