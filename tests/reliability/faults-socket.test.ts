/**
 * Fault injection: the daemon's socket file is removed (or taken) from under a running daemon.
 * Behaviour (daemon/src/socket/socket-watch.ts, docs/reliability.md): within a few seconds the daemon listens
 * again on a new socket file and says so in its log and in `mcpd/status` (daemon.socket); while the
 * file is missing, `mcpd start` refuses to start a second daemon and names the running one; a live
 * socket of another process on the path makes the daemon shut down, since nobody can reach it any more.
 */
import { spawn } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { MCPD_BIN, RawClient, fixture, startTestDaemon, until, type TestDaemon } from "../e2e/harness.js";
import { PidLedger, allReady, openClients, serverPid, status, textOf } from "./faults-harness.js";

let daemon: TestDaemon | undefined;
const ledger = new PidLedger();
let foreign: Server | undefined;

afterEach(async () => {
  if (daemon && daemon.proc.pid !== undefined && daemon.proc.exitCode === null) {
    try {
      process.kill(daemon.proc.pid, "SIGCONT");
    } catch {
      // Gone.
    }
  }
  await daemon?.stop();
  daemon = undefined;
  foreign?.close();
  foreign = undefined;
  ledger.killAll();
});

/** Runs the real `mcpd` CLI against the test daemon's home. */
function cli(d: TestDaemon, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, MCPD_HOME: d.home, MCPD_CONFIG: d.configFile, NO_COLOR: "1" };
  for (const k of ["MCPD_SOCKET", "XDG_RUNTIME_DIR", "MCPD_LOG_LEVEL"]) delete env[k];
  const child = spawn(process.execPath, [MCPD_BIN, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
  child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`mcpd ${args.join(" ")} did not finish; stderr: ${stderr}`));
    }, 60_000);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe("faults: the daemon's socket file", () => {
  it("removed under a running daemon: re-created within seconds, reported in status and the log; existing connections unaffected", async () => {
    const d = (daemon = await startTestDaemon({ a: fixture("a") }));
    const [old] = await openClients(d, 1);
    await allReady(old!);
    ledger.add(await serverPid(old!, "a"), d.proc.pid as number);

    rmSync(d.socketPath);
    await until(() => existsSync(d.socketPath), "the socket file to be re-created");
    const fresh = await RawClient.open(d.socketPath);
    // The socket's history is in the full status: a control connection's.
    await fresh.request("mcpd/select", { control: true });
    await fresh.initialize();
    const s = await status(fresh);
    expect(s.daemon.pid).toBe(d.proc.pid);
    expect(s.daemon.socket).toMatchObject({
      path: d.socketPath,
      recreated: 1,
      lastProblem: expect.stringMatching(/was removed; listening again/),
    });
    expect(d.stderr()).toMatch(/socket file .* was removed; listening again on a new one/);
    // The connection made before still works, and so does the CLI.
    expect(textOf(await old!.request("tools/call", { name: "a__echo", arguments: { text: "old" } }))).toBe("old");
    expect(textOf(await fresh.request("tools/call", { name: "a__echo", arguments: { text: "new" } }))).toBe("new");
    const st = await cli(d, ["status", "--json"]);
    expect(st.code, st.stderr).toBe(0);
    expect(JSON.parse(st.stdout).daemon.pid).toBe(d.proc.pid);
    fresh.close();
  });

  it("while the file is missing, mcpd start refuses to start a second daemon and names the running one", async () => {
    const d = (daemon = await startTestDaemon({ a: fixture("a") }));
    const [c] = await openClients(d, 1);
    await allReady(c!);
    const pidA = await serverPid(c!, "a");
    ledger.add(pidA, d.proc.pid as number);
    // Frozen, the daemon cannot repair its socket yet: this is the window a second daemon could slip into.
    process.kill(d.proc.pid as number, "SIGSTOP");
    try {
      rmSync(d.socketPath);
      const fg = await cli(d, ["start", "--foreground"]);
      expect(fg.stderr).toMatch(new RegExp(`mcpd is already running \\(pid ${d.proc.pid}\\) but its socket file .* is missing`));
      expect(fg.code).toBe(0);
      const bg = await cli(d, ["start"]);
      expect(bg.code).toBe(1);
      expect(bg.stderr).toMatch(new RegExp(`already running \\(pid ${d.proc.pid}\\) but its socket file .* is missing`));
      expect(existsSync(d.socketPath)).toBe(false);
    } finally {
      process.kill(d.proc.pid as number, "SIGCONT");
    }
    await until(() => existsSync(d.socketPath), "the socket file to be re-created");
    const again = await cli(d, ["start"]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`mcpd is already running (pid ${d.proc.pid})`);
    // Still the one daemon and the one server process.
    const fresh = await RawClient.open(d.socketPath);
    // The socket's history is in the full status: a control connection's.
    await fresh.request("mcpd/select", { control: true });
    await fresh.initialize();
    expect(await serverPid(fresh, "a")).toBe(pidA);
    fresh.close();
    await d.stop();
    daemon = undefined;
    await ledger.expectAllGone();
  });

  it("taken by another process's live socket: the unreachable daemon logs why and shuts down, ending its servers", async () => {
    const d = (daemon = await startTestDaemon({ a: fixture("a") }));
    const [c] = await openClients(d, 1);
    await allReady(c!);
    ledger.add(await serverPid(c!, "a"), d.proc.pid as number);
    rmSync(d.socketPath);
    foreign = createServer((s) => s.end());
    await new Promise<void>((resolve) => foreign!.listen(d.socketPath, resolve));
    await until(() => d.proc.exitCode !== null, "the daemon to shut down", 30_000);
    expect(d.proc.exitCode).toBe(0);
    expect(d.stderr()).toMatch(/another process now listens on .*; this daemon \(pid \d+\) cannot be reached any more/);
    await ledger.expectAllGone();
  });
});
