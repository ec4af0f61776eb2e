/**
 * Socket squatting: with XDG_RUNTIME_DIR unset the socket directory is `<tmpdir>/mcpd-<uid>`, a name any
 * local user can take first in a shared /tmp. Every client path (the CLI, `mcpd connect`, `@mcpd/client`
 * and the official SDK Client over McpdTransport, autostart) checks before it connects that the socket's
 * directory is its user's and not writable by group or others, and that the socket is its user's; it
 * refuses otherwise, naming the path, the owner found and what to do, and sends nothing. `mcpd stop`
 * signals only a pid it verified is this user's daemon.
 *
 * The other user is uid 65534 (nobody): a real process running as that user squats the directory
 * (tests/fixtures/faults/squatter.mjs) in a private stand-in for /tmp (TMPDIR), so the real
 * /tmp/mcpd-<uid> is never touched. Where this process may not switch users (not root), those tests skip
 * and say why.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, chownSync, existsSync, lchownSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterEach, describe, expect, it } from "vitest";
import { connect, McpdClient, McpdTransport, type McpdError } from "@mcpd/client";
import { alive, CliWorld, ROOT, until } from "../cli/cli-harness.js";

const SQUATTER = join(ROOT, "tests/fixtures/faults/squatter.mjs");
const NOBODY = 65534;
const UID = process.getuid?.() ?? -1;

/** Why this process cannot run a process as another user, or undefined when it can. */
function otherUserRefused(): string | undefined {
  if (process.platform === "win32") return "no Unix users on Windows";
  const r = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.getuid()))"], {
    uid: NOBODY,
    gid: NOBODY,
    encoding: "utf8",
  });
  if (r.error) return `cannot run a process as uid ${NOBODY}: ${r.error.message}`;
  if (r.stdout !== String(NOBODY)) return `a process spawned as uid ${NOBODY} ran as uid ${r.stdout}`;
  return undefined;
}
const REFUSED = otherUserRefused();
const asOther = REFUSED === undefined ? "" : ` (skipped: ${REFUSED})`;

let world: CliWorld | undefined;
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await world?.dispose();
  world = undefined;
});

/** The squatter process and what it saw. */
interface Squatter {
  proc: ChildProcess;
  pid: number;
  dir: string;
  /** Connections it accepted and bytes it received so far. */
  seen(): { connections: number; bytes: number };
}

/** Runs the squatter as uid 65534 on `dir` and waits until it listens. */
async function squat(dir: string): Promise<Squatter> {
  const proc = spawn(process.execPath, [SQUATTER, "--dir", dir], { uid: NOBODY, gid: NOBODY, stdio: ["ignore", "pipe", "pipe"] });
  cleanups.push(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill("SIGKILL");
      await until(() => proc.exitCode !== null || proc.signalCode !== null, "squatter exit");
    }
  });
  let out = "";
  let err = "";
  proc.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  proc.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const events = (): Array<{ event: string; pid?: number; bytes?: number }> =>
    out
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l));
  const ready = await until(() => {
    if (proc.exitCode !== null) throw new Error(`squatter exited ${proc.exitCode}: ${err}`);
    return events().find((e) => e.event === "ready");
  }, "the squatter to listen");
  return {
    proc,
    pid: ready.pid as number,
    dir,
    seen: () => ({
      connections: events().filter((e) => e.event === "connection").length,
      bytes: events().reduce((n, e) => n + (e.event === "data" ? (e.bytes ?? 0) : 0), 0),
    }),
  };
}

/**
 * A world whose socket location is the default one: MCPD_HOME, MCPD_SOCKET and XDG_RUNTIME_DIR unset,
 * TMPDIR its root, which is world-writable and sticky like /tmp. The socket is `<root>/mcpd-<uid>/mcpd.sock`.
 */
function defaultLocationWorld(): { w: CliWorld; env: NodeJS.ProcessEnv; dir: string; socket: string } {
  const w = (world = new CliWorld());
  w.writeConfig({});
  chmodSync(w.root, 0o1777);
  const env: NodeJS.ProcessEnv = { ...w.env, TMPDIR: w.root };
  delete env.MCPD_HOME;
  const dir = join(w.root, `mcpd-${UID}`);
  return { w, env, dir, socket: join(dir, "mcpd.sock") };
}

/** A plain listener (this user's) on `path` that counts what reaches it. */
async function listener(path: string): Promise<{ server: Server; seen: () => { connections: number; bytes: number } }> {
  let connections = 0;
  let bytes = 0;
  const server = createServer((s) => {
    connections++;
    s.on("data", (d) => (bytes += d.length));
    s.on("error", () => {});
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => resolve());
  });
  cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
  return { server, seen: () => ({ connections, bytes }) };
}

/** The refusal text for a directory owned by uid 65534. */
function ownedByNobody(dir: string): string {
  return `Refusing to connect to mcpd: socket directory ${dir} is owned by uid ${NOBODY} (nobody), not by you (uid ${UID})`;
}

/** Expects an SDK refusal: `MCPD_UNTRUSTED_SOCKET`, naming `text`. */
async function expectUntrusted(p: Promise<unknown>, text: string): Promise<McpdError> {
  const err = (await p.then(
    () => {
      throw new Error("connected to a socket it must not trust");
    },
    (e: unknown) => e,
  )) as McpdError;
  expect(err.code, String(err)).toBe("MCPD_UNTRUSTED_SOCKET");
  expect(err.message).toContain(text);
  return err;
}

describe(`socket squatting: a socket directory made by another user is refused${asOther}`, () => {
  it.skipIf(REFUSED !== undefined)(
    "regression (socket squatting): mcpd status, call, tools, start, stop and connect refuse <tmpdir>/mcpd-<uid> made by uid 65534; the squatter gets no byte and no signal",
    async () => {
      const { w, env, dir } = defaultLocationWorld();
      const sq = await squat(dir);
      const fix = "set MCPD_HOME (or XDG_RUNTIME_DIR) to a directory only you can write";

      for (const args of [
        ["status"],
        ["call", "x", "steal", '{"secret":"hunter2"}'],
        ["tools"],
        ["start"],
        ["stop"],
        ["connect"],
        ["connect", "--no-autostart"],
      ]) {
        const r = await w.run(args, { env });
        expect(r.code, `mcpd ${args.join(" ")}: ${r.stdout} ${r.stderr}`).toBe(1);
        expect(r.stderr, `mcpd ${args.join(" ")}`).toContain(ownedByNobody(dir));
        expect(r.stderr).toContain(fix);
        expect(r.stdout, `mcpd ${args.join(" ")}`).not.toMatch(/already running|stopped|thanks|steal/);
      }
      expect(sq.seen()).toEqual({ connections: 0, bytes: 0 });
      expect(alive(sq.pid), "mcpd stop signalled the squatter").toBe(true);
      // No daemon of ours was started anywhere meanwhile (autostart refused too).
      expect(w.processes().filter((p) => p !== sq.pid)).toEqual([]);
    },
  );

  it.skipIf(REFUSED !== undefined)(
    "regression (socket squatting): @mcpd/client (connect, autostart) and the official SDK Client over McpdTransport refuse with MCPD_UNTRUSTED_SOCKET; the squatter gets no byte",
    async () => {
      const { w, dir, socket } = defaultLocationWorld();
      const sq = await squat(dir);
      const marker = join(w.root, "autostarted");
      const autostart = { command: process.execPath, args: ["-e", `require("fs").writeFileSync(${JSON.stringify(marker)}, "")`] };

      const err = await expectUntrusted(connect({ socketPath: socket, reconnect: false, connectTimeout: 5_000 }), ownedByNobody(dir));
      expect(err.data).toMatchObject({ path: dir, ownerUid: NOBODY });
      await expectUntrusted(new McpdClient({ socketPath: socket, autostart, connectTimeout: 5_000 }).connect(), ownedByNobody(dir));
      expect(existsSync(marker), "autostart ran for a squatted socket").toBe(false);
      await expectUntrusted(new McpdTransport({ socketPath: socket, autostart, connectTimeout: 5_000 }).start(), ownedByNobody(dir));
      const sdk = new Client({ name: "victim", version: "1.0.0" });
      await expectUntrusted(sdk.connect(new McpdTransport({ socketPath: socket, connectTimeout: 5_000 })), ownedByNobody(dir));
      expect(existsSync(marker), "autostart ran for a squatted socket").toBe(false);
      expect(sq.seen()).toEqual({ connections: 0, bytes: 0 });
    },
  );

  it.skipIf(REFUSED !== undefined)(
    "a socket directory that is another user's symbolic link is refused, even when it points at a private directory of ours",
    async () => {
      const w = (world = new CliWorld());
      const target = join(w.root, "private");
      mkdirSync(target, { mode: 0o700 });
      const l = await listener(join(target, "mcpd.sock"));
      const link = join(w.root, "run");
      symlinkSync(target, link);
      lchownSync(link, NOBODY, NOBODY);
      await expectUntrusted(
        connect({ socketPath: join(link, "mcpd.sock"), reconnect: false, connectTimeout: 5_000 }),
        `Refusing to connect to mcpd: socket directory ${link} is a symbolic link owned by uid ${NOBODY} (nobody), not by you (uid ${UID})`,
      );
      expect(l.seen()).toEqual({ connections: 0, bytes: 0 });
    },
  );

  it.skipIf(REFUSED !== undefined)(
    "a socket owned by another user in our own private directory is refused, naming the socket",
    async () => {
      const w = (world = new CliWorld());
      const dir = join(w.root, "run");
      mkdirSync(dir, { mode: 0o700 });
      const socket = join(dir, "mcpd.sock");
      const l = await listener(socket);
      chownSync(socket, NOBODY, NOBODY);
      const text = `Refusing to connect to mcpd: socket ${socket} is owned by uid ${NOBODY} (nobody), not by you (uid ${UID})`;
      await expectUntrusted(connect({ socketPath: socket, reconnect: false, connectTimeout: 5_000 }), text);
      const r = await w.run(["status"], { env: { ...w.env, MCPD_HOME: dir } });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(text);
      expect(l.seen()).toEqual({ connections: 0, bytes: 0 });
    },
  );
});

describe("a socket directory of our own that others can write is refused", () => {
  it.each([
    ["writable by everyone", "777"],
    ["writable by others", "703"],
    ["writable by its group", "770"],
  ])(
    "regression (socket squatting): a socket directory %s (mode %s) is refused by the SDK and the CLI, naming the chmod fix; nothing is sent",
    async (_what, octal) => {
      const mode = Number.parseInt(octal, 8);
      const w = (world = new CliWorld());
      const dir = join(w.root, "run");
      mkdirSync(dir, { mode: 0o700 });
      const socket = join(dir, "mcpd.sock");
      const l = await listener(socket);
      chmodSync(dir, mode);
      const text = `Refusing to connect to mcpd: socket directory ${dir} is writable by others (mode ${mode.toString(8)}); run: chmod 700 ${dir}`;
      await expectUntrusted(connect({ socketPath: socket, reconnect: false, connectTimeout: 2_000 }), text);
      await expectUntrusted(new McpdTransport({ socketPath: socket, connectTimeout: 2_000 }).start(), text);
      const r = await w.run(["status"], { env: { ...w.env, MCPD_HOME: dir } });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(text);
      expect(l.seen()).toEqual({ connections: 0, bytes: 0 });
    },
  );
});

describe("mcpd stop signals only this user's mcpd", () => {
  /** No daemon in `w`, and a pid file (in its own private MCPD_HOME) naming `pid`. */
  function stalePidFile(w: CliWorld, pid: number): void {
    w.writeConfig({});
    mkdirSync(w.mcpdHome, { mode: 0o700 });
    writeFileSync(join(w.mcpdHome, "mcpd.pid"), `${pid}\n`, { mode: 0o600 });
  }

  /** Starts `command args` as this user; killed at the end of the test. */
  function ours(command: string, args: string[]): ChildProcess {
    const p = spawn(command, args, { stdio: "ignore" });
    cleanups.push(async () => {
      if (p.exitCode === null && p.signalCode === null) {
        p.kill("SIGKILL");
        await until(() => p.exitCode !== null || p.signalCode !== null, `${command} exit`);
      }
    });
    return p;
  }

  it.each([
    ["sleep 600", (_root: string) => ["sleep", ["600"]] as const],
    // A stale pid reused by, say, an editor or a `tail` on mcpd's own files: its command line mentions mcpd.
    [
      "tail -f <root>/mcpd-notes.txt",
      (root: string) => {
        writeFileSync(join(root, "mcpd-notes.txt"), "");
        return ["tail", ["-f", join(root, "mcpd-notes.txt")]] as const;
      },
    ],
  ])("regression (stop signals a stranger): a stale pid file naming this user's `%s` does not get it signalled", async (_what, cmd) => {
    const w = (world = new CliWorld());
    const [command, args] = cmd(w.root);
    const p = ours(command, [...args]);
    await until(() => p.pid !== undefined && existsSync(`/proc/${p.pid}`), `${command} to start`);
    stalePidFile(w, p.pid as number);
    const r = await w.run(["stop"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("mcpd is not running");
    expect(r.stderr).toContain(`not signalling pid ${p.pid}`);
    expect(r.stderr).toContain(join(w.mcpdHome, "mcpd.pid"));
    expect(alive(p.pid as number), `mcpd stop signalled ${command}`).toBe(true);
  });

  it.skipIf(REFUSED !== undefined)(
    `regression (stop signals a stranger): a stale pid file naming another user's process is not signalled${asOther}`,
    async () => {
      const w0 = (world = new CliWorld());
      const other = join(w0.root, "other");
      mkdirSync(other, { mode: 0o755 });
      chownSync(other, NOBODY, NOBODY);
      chmodSync(w0.root, 0o755);
      const sq = await squat(join(other, "mcpd"));
      stalePidFile(w0, sq.pid);
      const r = await w0.run(["stop"]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain("mcpd is not running");
      expect(r.stderr).toContain(`not signalling pid ${sq.pid}`);
      expect(r.stderr).toContain(`uid ${NOBODY}`);
      expect(alive(sq.pid), "mcpd stop signalled another user's process").toBe(true);
    },
  );

  it("still ends its own daemon by SIGTERM when the socket does not answer (the pid verified as this user's daemon)", async () => {
    const w = (world = new CliWorld());
    w.writeConfig({});
    expect((await w.run(["start"])).code).toBe(0);
    const pid = w.daemonPid() as number;
    // Stopped, the daemon accepts connections (the kernel does) but never answers the handshake.
    process.kill(pid, "SIGSTOP");
    cleanups.push(() => {
      if (alive(pid)) process.kill(pid, "SIGCONT");
    });
    const stop = w.run(["stop"]);
    // SIGTERM stays pending while the process is stopped: /proc shows it in ShdPnd (bit 15 -> mask 0x4000).
    const pending = (): boolean => {
      const m = /^ShdPnd:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      return m !== null && (BigInt(`0x${m[1]}`) & 0x4000n) !== 0n;
    };
    await until(pending, "mcpd stop to send SIGTERM", 30_000);
    process.kill(pid, "SIGCONT");
    const r = await stop;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`mcpd stopped (pid ${pid}, by SIGTERM: the socket did not answer)`);
    expect(alive(pid)).toBe(false);
  });
});
