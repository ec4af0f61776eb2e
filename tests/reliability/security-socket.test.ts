/**
 * The socket is private to its user: created 0600 in a 0700 directory (the daemon creates missing
 * directories that way), and the daemon refuses to start, before it starts any server, when the directory
 * is writable by others, owned by another user, or when the socket path is a symbolic link or some other
 * file. Each refusal names the reason; nothing is created, followed or removed.
 */
import { spawn } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FIXTURE, MCPD_BIN, RawClient, until } from "../e2e/harness.js";
import { isAlive } from "../helpers/process.js";

const roots: string[] = [];
const daemons: Array<ReturnType<typeof spawn>> = [];

afterEach(async () => {
  for (const d of daemons.splice(0)) {
    if (d.exitCode === null && d.signalCode === null) {
      d.kill("SIGTERM");
      await until(() => !isAlive(d.pid), "daemon exit", 20_000).catch(() => d.kill("SIGKILL"));
    }
  }
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

/** A short private root for one test, with a config whose only server logs to `<root>/started`. */
function root(): { root: string; config: string; startedMarker: string } {
  const r = mkdtempSync(join(tmpdir(), "mcpd-sec-"));
  roots.push(r);
  const startedMarker = join(r, "started");
  const config = join(r, "config.json");
  writeFileSync(
    config,
    JSON.stringify({ mcpServers: { fx: { command: process.execPath, args: [FIXTURE, "--name", "fx", "--log", startedMarker] } } }),
  );
  return { root: r, config, startedMarker };
}

interface Run {
  code: number | null;
  stderr: string;
}

/** `mcpd start --foreground` with the given socket location; resolves when it exits (bounded). */
function startDaemon(env: Record<string, string>, config: string): Promise<Run> & { proc: ReturnType<typeof spawn> } {
  const clean = { ...process.env };
  for (const k of ["MCPD_SOCKET", "MCPD_HOME", "XDG_RUNTIME_DIR", "XDG_STATE_HOME", "MCPD_LOG_LEVEL"]) delete clean[k];
  const proc = spawn(process.execPath, [MCPD_BIN, "start", "--foreground"], {
    env: { ...clean, MCPD_CONFIG: config, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  daemons.push(proc);
  let stderr = "";
  proc.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  proc.stdout?.resume();
  const done = new Promise<Run>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`mcpd did not exit within 20 s; stderr: ${stderr}`)), 20_000);
    proc.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
  return Object.assign(done, { proc });
}

/** Starts a daemon that must refuse, and checks that it started no server. */
async function refused(env: Record<string, string>, r: ReturnType<typeof root>): Promise<string> {
  const run = await startDaemon(env, r.config);
  expect(run.code, run.stderr).toBe(1);
  expect(existsSync(r.startedMarker), "a server was started before the refusal").toBe(false);
  return run.stderr;
}

describe("the socket is private to its user", () => {
  it("creates the socket 0600 in a directory it creates 0700 (with its missing parents), and the pid file 0600", async () => {
    const r = root();
    const dir = join(r.root, "a", "b");
    const socket = join(dir, "mcpd.sock");
    const run = startDaemon({ MCPD_SOCKET: socket, MCPD_HOME: join(r.root, "state") }, r.config);
    // The pid file is written once the socket listens: wait for both.
    await until(() => (existsSync(socket) && existsSync(join(dir, "mcpd.pid"))) || run.proc.exitCode !== null, "socket and pid file");
    expect(statSync(socket).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(r.root, "a")).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, "mcpd.pid")).mode & 0o777).toBe(0o600);
    // And it serves.
    const c = await RawClient.open(socket);
    expect((await c.request("ping")).result).toEqual({});
    c.close();
    run.proc.kill("SIGTERM");
    expect((await run).code).toBe(0);
  });

  it.each([
    ["writable by everyone", "777"],
    ["writable by others", "703"],
    ["writable by its group", "770"],
  ])("refuses to start in a directory %s (mode %s), naming the fix", async (_what, octal) => {
    const mode = Number.parseInt(octal, 8);
    const r = root();
    const dir = join(r.root, "run");
    mkdirSync(dir);
    chmodSync(dir, mode);
    const stderr = await refused({ MCPD_HOME: dir }, r);
    expect(stderr).toContain(`socket directory ${dir} is writable by others (mode ${mode.toString(8)}); run: chmod 700 ${dir}`);
    expect(existsSync(join(dir, "mcpd.sock"))).toBe(false);
    expect(statSync(dir).mode & 0o777, "the directory's mode was changed").toBe(mode);
  });

  it("refuses to put its socket straight into a shared directory like /tmp", async () => {
    const r = root();
    const socket = join(tmpdir(), `mcpd-sec-${process.pid}-${Date.now()}.sock`);
    const stderr = await refused({ MCPD_SOCKET: socket, MCPD_HOME: join(r.root, "state") }, r);
    expect(stderr).toMatch(/writable by others/);
    expect(existsSync(socket)).toBe(false);
  });

  it("refuses to start in a directory owned by another user (uid 65534)", async () => {
    const r = root();
    const dir = join(r.root, "run");
    mkdirSync(dir, { mode: 0o700 });
    // Tests run as root here; as anyone else chown fails, and the test says so rather than passing.
    chownSync(dir, 65534, 65534);
    const stderr = await refused({ MCPD_HOME: dir }, r);
    expect(stderr).toContain(
      `Refusing to start: socket directory ${dir} is owned by uid 65534 (nobody), not by you (uid ${process.getuid?.()})`,
    );
    expect(existsSync(join(dir, "mcpd.sock"))).toBe(false);
  });

  it.each([
    ["nowhere", (r: string) => join(r, "does-not-exist")],
    [
      "a regular file",
      (r: string) => {
        writeFileSync(join(r, "victim"), "precious");
        return join(r, "victim");
      },
    ],
    [
      "a directory",
      (r: string) => {
        mkdirSync(join(r, "victim-dir"));
        return join(r, "victim-dir");
      },
    ],
  ])("refuses to start when the socket path is a symbolic link (to %s), and leaves link and target alone", async (_what, target) => {
    const r = root();
    const dir = join(r.root, "run");
    mkdirSync(dir, { mode: 0o700 });
    const t = target(r.root);
    const socket = join(dir, "mcpd.sock");
    symlinkSync(t, socket);
    const stderr = await refused({ MCPD_HOME: dir }, r);
    expect(stderr).toContain(`Refusing to start: ${socket} is a symbolic link`);
    expect(lstatSync(socket).isSymbolicLink()).toBe(true);
    expect(readlinkSync(socket)).toBe(t);
    if (t.endsWith("victim")) expect(readFileSync(t, "utf8")).toBe("precious");
    if (t.endsWith("does-not-exist")) expect(existsSync(t)).toBe(false);
  });

  it("refuses to start when the socket path is a symbolic link to a live daemon's socket", async () => {
    const r = root();
    const live = join(r.root, "live");
    const first = startDaemon({ MCPD_HOME: live }, r.config);
    await until(() => existsSync(join(live, "mcpd.sock")) || first.proc.exitCode !== null, "first daemon's socket");
    const dir = join(r.root, "run");
    mkdirSync(dir, { mode: 0o700 });
    symlinkSync(join(live, "mcpd.sock"), join(dir, "mcpd.sock"));
    const second = await startDaemon({ MCPD_HOME: dir }, r.config);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain("is a symbolic link");
    // The first daemon is untouched.
    const c = await RawClient.open(join(live, "mcpd.sock"));
    expect((await c.request("ping")).result).toEqual({});
    c.close();
  });

  it("refuses to start when the socket path is a regular file, and does not remove it", async () => {
    const r = root();
    const dir = join(r.root, "run");
    mkdirSync(dir, { mode: 0o700 });
    writeFileSync(join(dir, "mcpd.sock"), "not a socket");
    const stderr = await refused({ MCPD_HOME: dir }, r);
    expect(stderr).toContain("exists and is not a socket");
    expect(readFileSync(join(dir, "mcpd.sock"), "utf8")).toBe("not a socket");
  });
});
