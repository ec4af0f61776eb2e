/**
 * The daemon's files in its state directory (log, rotated logs) and beside its socket (pid file) are
 * private and never reached through a symbolic link: the state directory passes the same checks as the
 * socket directory (owned by this user, not writable by group or others) before anything is opened or
 * written in it, by the daemon and by `mcpd start` (which opens the log for the daemon's own output).
 * Files are opened without following symbolic links, mode 0600.
 */
import { chmodSync, chownSync, lstatSync, mkdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CliWorld, until } from "../cli/cli-harness.js";

const worlds: CliWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) {
    await w.run(["stop"], { timeoutMs: 30_000 }).catch(() => {});
    await w.dispose();
  }
});

function world(): CliWorld {
  const w = new CliWorld();
  worlds.push(w);
  w.writeConfig({ fx: w.fixture("fx") });
  return w;
}

/** A file of "yours" that an attacker would like mcpd to write into. */
function victim(w: CliWorld): { path: string; changed: () => boolean; unchanged: () => void } {
  const path = join(w.root, "victim");
  const content = Buffer.from("precious: every byte of this must survive\n");
  writeFileSync(path, content);
  return {
    path,
    changed: () => !readFileSync(path).equals(content),
    unchanged: () => expect(readFileSync(path).equals(content), `the victim file was written: ${readFileSync(path, "utf8")}`).toBe(true),
  };
}

/** A directory made by another user (uid 65534), writable by everyone. Tests run as root here; elsewhere chown fails, and the test says so. */
function othersDir(path: string): string {
  mkdirSync(path, { recursive: true });
  chownSync(path, 65534, 65534);
  chmodSync(path, 0o777);
  return path;
}

describe("the state directory and its files are private", () => {
  it("regression: mcpd start with MCPD_HOME a 0777 directory of another user whose mcpd.log links to your file refuses, and the file is unchanged byte for byte", async () => {
    const w = world();
    const v = victim(w);
    othersDir(w.mcpdHome);
    symlinkSync(v.path, join(w.mcpdHome, "mcpd.log"));
    const r = await w.run(["start"]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`${w.mcpdHome}.* owned by uid 65534`));
    v.unchanged();
    expect(w.daemonPid(), "a daemon wrote its pid file there").toBeUndefined();
  });

  it("regression: a state directory of another user (XDG_STATE_HOME) is refused by the daemon itself (start --in-process, --foreground) before it writes its log there", async () => {
    const w = world();
    const v = victim(w);
    const run = join(w.root, "run");
    mkdirSync(run, { mode: 0o700 });
    const state = othersDir(join(w.root, "state", "mcpd"));
    symlinkSync(v.path, join(state, "mcpd.log"));
    const env: NodeJS.ProcessEnv = { ...w.env, XDG_RUNTIME_DIR: run, XDG_STATE_HOME: join(w.root, "state") };
    delete env.MCPD_HOME;
    for (const mode of ["--in-process", "--foreground"]) {
      const daemon = w.spawn(["start", mode], { env });
      let stderr = "";
      daemon.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
      daemon.stdout?.resume();
      // Before the fix the daemon started (and wrote "mcpd started" through the link): wait for either.
      await until(() => daemon.exitCode !== null || v.changed(), `${mode}: daemon to refuse`, 30_000);
      v.unchanged();
      expect(daemon.exitCode, stderr).toBe(1);
      expect(stderr).toContain(`state directory ${state} is owned by uid 65534, not ${process.getuid?.()}`);
    }
  });

  it("regression: a symlinked mcpd.log in your own MCPD_HOME is never written through: mcpd start refuses, naming it", async () => {
    const w = world();
    const v = victim(w);
    mkdirSync(w.mcpdHome, { mode: 0o700 });
    const log = join(w.mcpdHome, "mcpd.log");
    symlinkSync(v.path, log);
    const r = await w.run(["start"]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`${log} is a symbolic link`);
    v.unchanged();
    expect(readlinkSync(log)).toBe(v.path);
  });

  it("regression: a symlinked mcpd.pid in your own MCPD_HOME is replaced, not written through; the log and pid file are 0600", async () => {
    const w = world();
    const v = victim(w);
    mkdirSync(w.mcpdHome, { mode: 0o700 });
    const pidFile = join(w.mcpdHome, "mcpd.pid");
    symlinkSync(v.path, pidFile);
    const r = await w.run(["start"]);
    expect(r.code, r.stderr).toBe(0);
    await until(() => !lstatSync(pidFile).isSymbolicLink(), "pid file replaced");
    v.unchanged();
    expect(lstatSync(pidFile).isFile()).toBe(true);
    expect(statSync(pidFile).mode & 0o777).toBe(0o600);
    expect(statSync(join(w.mcpdHome, "mcpd.log")).mode & 0o777).toBe(0o600);
    expect(w.daemonPid()).toBeGreaterThan(0);
  });
});
