/**
 * The real mcpd daemon for the client SDK's end-to-end tests: `mcpd start --foreground` as a child
 * process in a short temporary MCPD_HOME, with a config file of fixture servers. Unlike the shared e2e
 * harness it can be killed and started again on the same home, which the reconnection tests need.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { McpdError } from "@mcpd/client";
import { waitFor } from "../helpers/process.js";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const MCPD_BIN = join(ROOT, "daemon/bin/mcpd.js");
export const FIXTURE = join(ROOT, "tests/fixtures/servers/mcp-fixture.mjs");
export const EVERYTHING = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");

/** A config entry running the stdio fixture server named `name` (see its header for `extraArgs`). */
export function fixture(name: string, extraArgs: string[] = [], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: process.execPath, args: [FIXTURE, "--name", name, ...extraArgs], ...extra };
}

/** The JSON lines a fixture server logged with `--log FILE`: every message it received. */
export function readLog(file: string): any[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/** The error `p` rejects with (as an McpdError, the SDK's errors); fails the test when it resolves. */
export async function failure(p: Promise<unknown>): Promise<McpdError> {
  try {
    await p;
  } catch (err) {
    return err as McpdError;
  }
  throw new Error("expected a rejection");
}

export class TestDaemon {
  readonly socketPath: string;
  readonly configFile: string;
  /** The environment a client (or the CLI) needs to find this daemon. */
  readonly env: NodeJS.ProcessEnv;
  proc: ChildProcess | undefined;
  private output = "";

  private constructor(readonly home: string) {
    this.socketPath = join(home, "mcpd.sock");
    this.configFile = join(home, "config.json");
    // MCPD_FOREGROUND_REEXEC=0: the daemon is the process started, so SIGKILL crashes it (a foreground
    // start's child would notice its parent gone and stop cleanly instead).
    this.env = { ...process.env, MCPD_HOME: home, MCPD_CONFIG: this.configFile, MCPD_FOREGROUND_REEXEC: "0" };
    delete this.env.MCPD_SOCKET;
    delete this.env.XDG_RUNTIME_DIR;
  }

  /**
   * Creates a home (short path: Unix socket paths are limited to 107 bytes), writes the config, starts.
   * `servers` may be a function of the home, to put fixture logs in it.
   */
  static async start(
    servers: Record<string, unknown> | ((home: string) => Record<string, unknown>),
    settings?: Record<string, unknown>,
  ): Promise<TestDaemon> {
    const d = new TestDaemon(mkdtempSync(join(tmpdir(), "mcsdk-")));
    d.writeConfig(typeof servers === "function" ? servers(d.home) : servers, settings);
    await d.startAgain();
    return d;
  }

  /** Writes the config: the servers, and `settings` as its `"mcpd"` section when given. */
  writeConfig(servers: Record<string, unknown>, settings?: Record<string, unknown>): void {
    writeFileSync(this.configFile, JSON.stringify({ ...(settings ? { mcpd: settings } : {}), mcpServers: servers }, null, 2));
  }

  /** The daemon's stderr/stdout so far (for failure messages). */
  get log(): string {
    return this.output;
  }

  /** Starts the daemon (again) on the same home; resolves once its socket accepts connections. */
  async startAgain(): Promise<void> {
    const proc = spawn(process.execPath, [MCPD_BIN, "start", "--foreground"], { env: this.env, stdio: ["ignore", "pipe", "pipe"] });
    this.proc = proc;
    const keep = (d: Buffer): void => {
      this.output = (this.output + d.toString()).slice(-200_000);
    };
    proc.stdout?.on("data", keep);
    proc.stderr?.on("data", keep);
    await waitFor(async () => proc.exitCode !== null || (await accepts(this.socketPath)), { message: "the daemon's socket to accept" });
    if (proc.exitCode !== null) throw new Error(`mcpd exited with ${proc.exitCode}: ${this.output}`);
  }

  /** Stops the daemon with `signal` and waits for it to exit (SIGKILL after 20 s). */
  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((r) => proc.once("exit", r));
    proc.kill(signal);
    await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000).unref())]);
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill("SIGKILL");
      await exited;
    }
  }

  /** Stops the daemon and removes the home. */
  async cleanup(): Promise<void> {
    await this.stop();
    rmSync(this.home, { recursive: true, force: true });
  }
}

function accepts(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createConnection(socketPath);
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}
