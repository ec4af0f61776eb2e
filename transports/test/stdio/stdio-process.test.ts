import { execFileSync } from "node:child_process";
import { chmod, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { pathToFileURL } from "node:url";
import { join, resolve } from "node:path";
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError, SpawnError, type Logger } from "@mcpd/protocol";
import { StdioTransport } from "../../src/stdio/stdio-transport.js";
import { isAllowlisted } from "../../src/stdio/env.js";
import type { CloseInfo } from "../../src/transport.js";
import { FIXTURE, Harness, NODE, callTool, initialize, isAlive, readPid, textOf, waitFor } from "./stdio-helpers.js";

const h = new Harness();
afterEach(() => h.cleanup());

/** Pids of live processes whose command line contains `marker`. */
async function processesWith(marker: string): Promise<number[]> {
  const found: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const cmdline = await readFile(`/proc/${name}/cmdline`, "utf8").catch(() => "");
    if (cmdline.includes(marker) && isAlive(Number(name))) found.push(Number(name));
  }
  return found;
}

describe("StdioTransport: spawn failures", () => {
  async function expectSpawnError(t: StdioTransport, command: string, detail: RegExp): Promise<void> {
    const closes: CloseInfo[] = [];
    t.onClose = (info) => closes.push(info);
    const err = await t.connect().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SpawnError);
    expect((err as SpawnError).code).toBe("MCPD_SPAWN_FAILED");
    expect((err as SpawnError).command).toBe(command);
    expect((err as Error).message).toContain(`Failed to start "${command}"`);
    expect((err as Error).message).toMatch(detail);
    expect(t.connected).toBe(false);
    expect(t.pid).toBeUndefined();
    await t.close();
    expect(closes).toEqual([]);
  }

  it("rejects a missing command (bare name and absolute path)", async () => {
    const bare = `mcpd-no-such-command-${randomUUID()}`;
    await expectSpawnError(h.make({ command: bare }), bare, /command not found \(ENOENT\)/);
    const absolute = `/nonexistent/${bare}`;
    await expectSpawnError(h.make({ command: absolute }), absolute, /command not found \(ENOENT\)/);
  });

  it("rejects a file that is not executable", async () => {
    const script = join(await h.tempDir(), "server.sh");
    await writeFile(script, "#!/bin/sh\nexit 0\n");
    await chmod(script, 0o644);
    await expectSpawnError(h.make({ command: script }), script, /permission denied/);
  });

  it("rejects a bad cwd (missing, or a file) and leaves nothing running", async () => {
    const marker = `mcpd-marker-${randomUUID()}`;
    const missing = join(await h.tempDir(), "does-not-exist");
    await expectSpawnError(
      h.make({ command: NODE, args: [FIXTURE, "--name", marker], cwd: missing }),
      NODE,
      /working directory .* does not exist/,
    );
    const file = join(await h.tempDir(), "a-file");
    await writeFile(file, "");
    await expectSpawnError(
      h.make({ command: NODE, args: [FIXTURE, "--name", marker], cwd: file }),
      NODE,
      /working directory .* is not a directory/,
    );
    expect(await processesWith(marker)).toEqual([]);
  });

  it('regression: a working directory the user cannot enter is named, not blamed on the command (EACCES read as "not executable")', async ({
    skip,
  }) => {
    const parent = await h.tempDir();
    const locked = join(parent, "locked");
    await mkdir(locked);
    const detail = /working directory ".*locked" is not accessible: permission denied \(EACCES\)/;
    if (process.getuid?.() !== 0) {
      await chmod(locked, 0o600);
      await expectSpawnError(h.make({ command: NODE, args: ["-e", "1"], cwd: locked }), NODE, detail);
      return;
    }
    // root enters any directory: the transport is run by a child process as `nobody`, from the built package.
    await chmod(parent, 0o755);
    await chmod(locked, 0o700);
    const dist = pathToFileURL(resolve(import.meta.dirname, "../../dist/index.js")).href;
    const script = [
      `const { createTransport } = await import(${JSON.stringify(dist)});`,
      `const t = createTransport({ command: process.execPath, args: ["-e", "1"], cwd: ${JSON.stringify(locked)} });`,
      "const out = await t.connect().then(() => ({ connected: true }), (e) => ({ code: e.code, errno: e.errno, message: e.message }));",
      "await t.close();",
      "process.stdout.write(JSON.stringify(out));",
    ].join("\n");
    const nobody = {
      uid: Number(execFileSync("id", ["-u", "nobody"], { encoding: "utf8" })),
      gid: Number(execFileSync("id", ["-g", "nobody"], { encoding: "utf8" })),
    };
    let out: string;
    try {
      out = execFileSync(NODE, ["--input-type=module", "-e", script], {
        ...nobody,
        cwd: "/",
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      });
    } catch (err) {
      return skip(`cannot run the transport as nobody here: ${(err as Error).message.split("\n")[0]}`);
    }
    const result = JSON.parse(out);
    expect(result).toMatchObject({ code: "MCPD_SPAWN_FAILED", errno: "EACCES" });
    expect(result.message).toMatch(detail);
  });

  it("rejects an invalid config with ConfigError naming the field", () => {
    expect(() => new StdioTransport({ command: "" })).toThrow(ConfigError);
    expect(() => new StdioTransport({ command: "x", args: ["ok", 3 as unknown as string] })).toThrow(/"args" must be an array of strings/);
    expect(() => new StdioTransport({ command: "x", env: { A: 1 as unknown as string } })).toThrow(/"env.A" must be a string/);
    expect(() => new StdioTransport({ command: "x", envMode: "none" as "inherit" })).toThrow(/"envMode"/);
    expect(() => new StdioTransport({ command: "x", timeout: -1 })).toThrow(/"timeout"/);
    expect(() => new StdioTransport({ command: "x" }, { maxPendingWriteBytes: 0 })).toThrow(/"maxPendingWriteBytes"/);
  });
});

describe("StdioTransport: ending the process tree", () => {
  it("ends a well-behaved server by closing its stdin (no signal needed)", async () => {
    const { t } = await h.fixture();
    const closed = new Promise<CloseInfo>((resolve) => (t.onClose = resolve));
    await initialize(t);
    const pid = t.pid as number;
    expect(t.pgid).toBe(pid);
    expect(textOf(await callTool(t, "pid"))).toBe(String(pid));
    await t.close();
    expect(await closed).toMatchObject({ expected: true, exitCode: 0, signal: null });
    expect(isAlive(pid)).toBe(false);
  });

  it("SIGKILLs a server that ignores stdin EOF and SIGTERM", async () => {
    const { t } = await h.fixture(["--ignore-sigterm"], { closeGraceMs: 300 });
    const closed = new Promise<CloseInfo>((resolve) => (t.onClose = resolve));
    await initialize(t);
    const pid = t.pid as number;
    await t.close();
    const info = await closed;
    expect(info).toMatchObject({ expected: true, exitCode: null, signal: "SIGKILL" });
    // SIGTERM came first and was ignored.
    expect(info.stderrTail).toContain("ignoring SIGTERM");
    expect(isAlive(pid)).toBe(false);
  });

  it("ends a grandchild that holds the pipes and ignores SIGTERM (the npx case)", async () => {
    const pidFile = join(await h.tempDir(), "grandchild.pid");
    const { t } = await h.fixture(["--spawn-grandchild", pidFile], { closeGraceMs: 300 });
    const grandchild = await waitFor(() => readPid(pidFile), { message: "grandchild pid file" });
    h.pids.push(grandchild);
    await initialize(t);
    expect(isAlive(grandchild)).toBe(true);
    const pid = t.pid as number;
    await t.close();
    expect(isAlive(pid)).toBe(false);
    expect(isAlive(grandchild)).toBe(false);
  });

  it("ends a grandchild together with a server that ignores SIGTERM", async () => {
    const pidFile = join(await h.tempDir(), "grandchild.pid");
    const { t } = await h.fixture(["--ignore-sigterm", "--spawn-grandchild", pidFile], { closeGraceMs: 300 });
    const grandchild = await waitFor(() => readPid(pidFile), { message: "grandchild pid file" });
    h.pids.push(grandchild);
    const pid = t.pid as number;
    await t.close();
    expect(isAlive(pid)).toBe(false);
    expect(isAlive(grandchild)).toBe(false);
  });
});

describe("StdioTransport: environment, arguments, cwd, stderr", () => {
  it("inherits the daemon's environment plus env with envMode inherit", async () => {
    process.env.MCPD_TEST_INHERITED = "from-parent";
    process.env.MCPD_TEST_KEPT = "kept";
    try {
      const { t } = await h.fixture(
        [],
        {},
        { envMode: "inherit", env: { MCPD_TEST_EXTRA: "extra value", MCPD_TEST_INHERITED: "overridden" } },
      );
      const env = JSON.parse(textOf(await callTool(t, "env"))) as Record<string, string>;
      expect(env.MCPD_TEST_EXTRA).toBe("extra value");
      expect(env.MCPD_TEST_INHERITED).toBe("overridden");
      expect(env.MCPD_TEST_KEPT).toBe("kept");
      expect(env.PATH).toBe(process.env.PATH);
    } finally {
      delete process.env.MCPD_TEST_INHERITED;
      delete process.env.MCPD_TEST_KEPT;
    }
  });

  it("passes only the allowlist plus env by default and in allowlist mode", async () => {
    process.env.MCPD_TEST_SECRET = "must-not-leak";
    process.env.LC_MCPD_TEST = "locale";
    try {
      for (const mode of [undefined, "allowlist"] as const) {
        const { t } = await h.fixture([], {}, { ...(mode ? { envMode: mode } : {}), env: { MCPD_TEST_EXTRA: "given" } });
        const env = JSON.parse(textOf(await callTool(t, "env"))) as Record<string, string>;
        expect(env.MCPD_TEST_SECRET, String(mode)).toBeUndefined();
        expect(env.MCPD_TEST_EXTRA).toBe("given");
        expect(env.LC_MCPD_TEST).toBe("locale");
        expect(env.PATH).toBe(process.env.PATH);
        // Node itself may add nothing; anything else present must come from the allowlist.
        const extra = Object.keys(env).filter((k) => k !== "MCPD_TEST_EXTRA" && !isAllowlisted(k));
        expect(extra).toEqual([]);
      }
    } finally {
      delete process.env.MCPD_TEST_SECRET;
      delete process.env.LC_MCPD_TEST;
    }
  });

  it("passes arguments with shell metacharacters literally, and honours cwd", async () => {
    const dir = await h.tempDir();
    const name = `a;b && touch PWNED | echo $(touch PWNED2) \`id\` > out * "q" 'q' \n end`;
    const { t } = await h.fixture(["--name", name, "--tool", "$HOME"], {}, { cwd: dir });
    const init = await initialize(t);
    expect(init.serverInfo.name).toBe(name);
    const argv = JSON.parse(textOf(await callTool(t, "argv"))) as string[];
    expect(argv.slice(-4)).toEqual(["--name", name, "--tool", "$HOME"]);
    expect(textOf(await callTool(t, "$HOME", { x: 1 }))).toBe('{"x":1}');
    expect(textOf(await callTool(t, "cwd"))).toBe(dir);
    expect(await readdir(dir)).toEqual([]);
  });

  it("keeps a bounded tail of stderr lines and logs them at debug", async () => {
    const lines: string[] = [];
    const logger: Logger = {
      trace() {},
      debug(obj) {
        if (typeof obj === "object" && "stderr" in obj) lines.push(String((obj as { stderr: unknown }).stderr));
      },
      info() {},
      warn() {},
      error() {},
    };
    const { t } = await h.fixture([], { logger, stderrMaxLines: 3 });
    await initialize(t);
    for (const text of ["one", "two", "three", "four"]) await callTool(t, "stderr", { text });
    await waitFor(() => t.stderrTail().at(-1) === "four", { message: "stderr line four" });
    expect(t.stderrTail()).toEqual(["two", "three", "four"]);
    expect(t.stderrTail(2)).toEqual(["three", "four"]);
    expect(lines).toEqual(["fixture fixture ready", "one", "two", "three", "four"]);
    // stderr is never an error: the transport is still fine.
    expect(t.connected).toBe(true);
    expect(t.info().droppedMessages).toBe(0);
  });
});
