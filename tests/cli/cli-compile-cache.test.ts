/**
 * The `mcpd` command's compile cache (daemon/src/cli/compile-cache.ts), through the real command: a run
 * leaves V8's code for the bundle's files in `<state directory>/compile-cache/`, the next run compiles
 * with it instead of rewriting it, a changed file is never run with the code of its old source, and the
 * cache stays off for the daemon, when NODE_DISABLE_COMPILE_CACHE is set, and when there is no state
 * directory yet.
 */
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CliWorld, collect, ROOT } from "./cli-harness.js";

const VERSION = (JSON.parse(readFileSync(join(ROOT, "daemon/package.json"), "utf8")) as { version: string }).version;

const BUNDLE = join(ROOT, "daemon/dist/cli-bundle");

let world: CliWorld;
beforeEach(() => {
  world = new CliWorld();
});
afterEach(async () => {
  await world.run(["stop"]).catch(() => {});
  await world.dispose();
});

/** A copy of the installed command (bin/ and the bundle) inside the world, whose files a test may change. */
function copyOfCommand(): { bin: string; bundle: string } {
  const dir = join(world.root, "install");
  cpSync(join(ROOT, "daemon/bin"), join(dir, "bin"), { recursive: true });
  cpSync(join(ROOT, "daemon/dist/cli-bundle"), join(dir, "dist/cli-bundle"), { recursive: true });
  return { bin: join(dir, "bin/mcpd.js"), bundle: join(dir, "dist/cli-bundle") };
}

/** Runs `node BIN ARGS` in the world. */
function runBin(bin: string, args: string[], env: NodeJS.ProcessEnv = world.env) {
  const child = spawn(process.execPath, [bin, ...args], { env, cwd: world.root, stdio: ["ignore", "pipe", "pipe"] });
  return collect(child, 60_000, `${bin} ${args.join(" ")}`);
}

/** The directory of `bundle`'s entries: the one under `<state>/compile-cache/` whose `bundle-dir` names it. */
function entriesDir(bundle: string = BUNDLE): string {
  const root = join(world.mcpdHome, "compile-cache");
  const dirs = existsSync(root) ? readdirSync(root).map((d) => join(root, d)) : [];
  const dir = dirs.find((d) => existsSync(join(d, "bundle-dir")) && readFileSync(join(d, "bundle-dir"), "utf8") === bundle);
  if (dir === undefined) throw new Error(`no compile cache directory for ${bundle} among ${dirs.join(", ") || "none"}`);
  return dir;
}

/** The inode of each entry: a rewritten entry is a new file renamed over the old one. */
function inodes(bundle: string = BUNDLE): Record<string, number> {
  const dir = entriesDir(bundle);
  return Object.fromEntries(readdirSync(dir).map((f) => [f, statSync(join(dir, f)).ino]));
}

describe("the mcpd command caches its compiled code in the state directory", () => {
  it("the first run writes an entry per file it loaded, and the next run uses them without rewriting them", async () => {
    mkdirSync(world.mcpdHome, { mode: 0o700 });
    const first = await world.run(["--version"]);
    expect(first.stdout.trim()).toBe(VERSION);
    const written = inodes();
    expect(Object.keys(written)).toEqual(expect.arrayContaining(["main.cjs.cache", "cli.cjs.cache"]));
    expect(statSync(entriesDir()).mode & 0o777).toBe(0o700);
    for (const f of Object.keys(written)) expect(statSync(join(entriesDir(), f)).mode & 0o777).toBe(0o600);

    const second = await world.run(["--version"]);
    expect(second.stdout.trim()).toBe(VERSION);
    expect(inodes()).toEqual(written);
  });

  it("a file changed since its entry was made runs its new source, even at the same length (regression guard: V8 checks only the length)", async () => {
    mkdirSync(world.mcpdHome, { mode: 0o700 });
    const { bin, bundle } = copyOfCommand();
    expect((await runBin(bin, ["--version"])).stdout.trim()).toBe(VERSION);
    const before = inodes(bundle);

    // The bundle file that holds the version constant (modules.json: the compiled modules of each file).
    const modules = JSON.parse(readFileSync(join(bundle, "modules.json"), "utf8")) as Record<string, string[]>;
    const holder = Object.keys(modules).find((f) => modules[f]?.includes("daemon/dist/version.js"));
    expect(holder).toBeDefined();
    const file = join(bundle, holder as string);
    const source = readFileSync(file, "utf8");
    expect(source.split(JSON.stringify(VERSION)).length, "the version appears once").toBe(2);
    const other = VERSION.replace(/\d/g, (d) => String((Number(d) + 1) % 10));
    expect(other.length).toBe(VERSION.length);
    writeFileSync(file, source.replace(JSON.stringify(VERSION), JSON.stringify(other)));

    const r = await runBin(bin, ["--version"]);
    expect(r.stderr).toBe("");
    expect(r.stdout.trim()).toBe(other);
    const after = inodes(bundle);
    expect(after[`${holder}.cache`], "the changed file's entry is made again").not.toBe(before[`${holder}.cache`]);
    expect(after["main.cjs.cache"], "the others are kept").toBe(before["main.cjs.cache"]);
  });

  it("an entry V8 refuses (not code it made) is compiled past and replaced", async () => {
    mkdirSync(world.mcpdHome, { mode: 0o700 });
    await world.run(["--version"]);
    const entry = join(entriesDir(), "main.cjs.cache");
    const source = readFileSync(join(BUNDLE, "main.cjs"));
    // Whole by mcpd's checks (the right source, two equal copies of the "code"), but not V8's code.
    const notCode = Buffer.from("not V8's code");
    const head = `mcpd-compile-cache 2 ${source.length} ${notCode.length}\n`;
    writeFileSync(entry, Buffer.concat([Buffer.from(head), source, notCode, notCode]), { mode: 0o600 });
    const before = statSync(entry).ino;

    const r = await world.run(["--version"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(VERSION);
    expect(statSync(entry).ino).not.toBe(before);
    expect(readFileSync(entry).subarray(-13).toString()).not.toBe("not V8's code");
  });
});

describe("the cache stays off where it should", () => {
  it("for the daemon and `mcpd start`: their files get no entries, while a command's do", async () => {
    world.writeConfig({ fx: world.fixture("fx") });
    const started = await world.run(["start"]);
    expect(started.code, started.stderr).toBe(0);
    expect(existsSync(join(world.mcpdHome, "compile-cache")), "mcpd start wrote nothing").toBe(false);
    const status = await world.run(["status"]);
    expect(status.code, status.stderr).toBe(0);
    expect(existsSync(join(entriesDir(), "status.cjs.cache"))).toBe(true);
    const stopped = await world.run(["stop"]);
    expect(stopped.code, stopped.stderr).toBe(0);
    // The daemon has exited now (its exit is when it would have written).
    expect(readdirSync(entriesDir()).filter((f) => f.startsWith("start.") || f.startsWith("daemon."))).toEqual([]);
  });

  it("when NODE_DISABLE_COMPILE_CACHE is set", async () => {
    mkdirSync(world.mcpdHome, { mode: 0o700 });
    const r = await world.run(["--version"], { env: { ...world.env, NODE_DISABLE_COMPILE_CACHE: "1" } });
    expect(r.stdout.trim()).toBe(VERSION);
    expect(existsSync(join(world.mcpdHome, "compile-cache"))).toBe(false);
  });

  it("when the state directory does not exist yet: a command that needs no state directory makes none", async () => {
    const r = await world.run(["--version"]);
    expect(r.stdout.trim()).toBe(VERSION);
    expect(existsSync(world.mcpdHome)).toBe(false);
  });
});
