/**
 * The compile cache (src/cli/compile-cache.ts, compile-cache-store.ts) on real files with V8's real cached
 * code: an entry is used only for the exact source it was made from and only when its code is whole, only
 * when it is this user's own file that no one else can write, under a state directory no one else can
 * write; the directory stays bounded; the loader hook compiles the bundle's files and no others.
 */
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Script } from "node:vm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLI_DEFAULTS } from "../src/cli/cli-defaults.js";
import { type CjsLoader, type CjsModule, enableCompileCache } from "../src/cli/compile-cache.js";
import { bundleKey, entryPath, prepareStoreDir, pruneStore, readEntry, trustedDir, writeEntry } from "../src/cli/compile-cache-store.js";

const uid = process.getuid?.() ?? 0;
const asRoot = uid === 0;
const DIST_STORE = resolve(dirname(fileURLToPath(import.meta.url)), "../dist/cli/compile-cache-store.js");

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "mcpd-compile-cache-"));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

/** V8's cached code for `source`, as a run of it would leave it. */
function codeOf(source: string): Buffer {
  const script = new Script(source, { filename: "/bundle/x.cjs" });
  script.runInThisContext();
  return script.createCachedData();
}

/** A private state directory with the entries' directory of bundle `/bundle`; returns the latter. */
function store(): string {
  const state = join(root, "state");
  mkdirSync(state, { mode: 0o700 });
  const dir = prepareStoreDir(state, "/bundle", uid);
  expect(dir).toBeDefined();
  return dir as string;
}

/** A store with one entry for `source`; returns the entry's path. */
function cacheWith(source: Buffer, data: Buffer): string {
  const entry = entryPath(store(), "/bundle/version.cjs");
  expect(writeEntry(entry, source, () => data)).toBe(true);
  return entry;
}

const SOURCE = Buffer.from('"mcpd 0.1.0";\n');

describe("an entry is read back only for the source it was made from, and only whole", () => {
  it("round-trips V8's code, and V8 takes it", () => {
    const data = codeOf(SOURCE.toString());
    const entry = cacheWith(SOURCE, data);
    const read = readEntry(entry, SOURCE, uid);
    expect(read?.equals(data)).toBe(true);
    const script = new Script(SOURCE.toString(), { filename: "/bundle/x.cjs", cachedData: read as Buffer });
    expect(script.cachedDataRejected).toBe(false);
  });

  it("not for another source of the same length, which V8 itself would take (it checks the length only)", () => {
    const entry = cacheWith(SOURCE, codeOf(SOURCE.toString()));
    const other = Buffer.from('"mcpd 9.9.9";\n');
    expect(other.length).toBe(SOURCE.length);
    expect(readEntry(entry, other, uid)).toBeUndefined();
    // What the check prevents: V8 takes the other source's code, and runs the old constant.
    const stale = new Script(other.toString(), { filename: "/bundle/x.cjs", cachedData: codeOf(SOURCE.toString()) });
    expect(stale.cachedDataRejected).toBe(false);
    expect(stale.runInThisContext()).toBe("mcpd 0.1.0");
  });

  it("not when its code is damaged (a flipped byte in either copy, or cut short): V8 would run such code", () => {
    const data = codeOf(SOURCE.toString());
    const entry = cacheWith(SOURCE, data);
    const whole = readFileSync(entry);
    const codeStart = whole.length - 2 * data.length;
    for (const at of [codeStart + 20, whole.length - 20]) {
      const damaged = Buffer.from(whole);
      damaged[at] = (damaged[at] as number) ^ 0x5a;
      writeFileSync(entry, damaged, { mode: 0o600 });
      expect(readEntry(entry, SOURCE, uid), `byte ${at} flipped`).toBeUndefined();
    }
    writeFileSync(entry, whole.subarray(0, whole.length - 1), { mode: 0o600 });
    expect(readEntry(entry, SOURCE, uid)).toBeUndefined();
    writeFileSync(entry, whole, { mode: 0o600 });
    expect(readEntry(entry, SOURCE, uid)?.equals(data)).toBe(true);
  });

  it("not for a longer or shorter source, nor from a file that is not an entry", () => {
    const entry = cacheWith(SOURCE, codeOf(SOURCE.toString()));
    expect(readEntry(entry, Buffer.from('"mcpd 0.1.0.1";\n'), uid)).toBeUndefined();
    expect(readEntry(entry, SOURCE.subarray(1), uid)).toBeUndefined();
    writeFileSync(entry, Buffer.concat([Buffer.from(`something else ${SOURCE.length} 4\n`), SOURCE, Buffer.from("codecode")]), {
      mode: 0o600,
    });
    expect(readEntry(entry, SOURCE, uid)).toBeUndefined();
    writeFileSync(entry, `mcpd-compile-cache 2 ${SOURCE.length} 4\n`, { mode: 0o600 });
    expect(readEntry(entry, SOURCE, uid)).toBeUndefined();
    expect(readEntry(join(root, "missing.cache"), SOURCE, uid)).toBeUndefined();
  });

  it("never writes an entry larger than the bound, and makes no code for a directory it cannot write into", () => {
    const dir = store();
    let made = 0;
    const big = Buffer.alloc(CLI_DEFAULTS.compileCacheMaxEntryBytes / 2);
    const code = (): Buffer => {
      made++;
      return big;
    };
    expect(writeEntry(entryPath(dir, "/bundle/big.cjs"), SOURCE, code)).toBe(false);
    expect(readdirSync(dir).filter((f) => f.startsWith("big"))).toEqual([]);
    expect(writeEntry(join(root, "no-such-dir", "x.cjs.cache"), SOURCE, code)).toBe(false);
    expect(made).toBe(1);
  });
});

describe("an entry is trusted only as this user's own file, under a state directory no one else can write", () => {
  it("not when others can write it", () => {
    const entry = cacheWith(SOURCE, codeOf(SOURCE.toString()));
    chmodSync(entry, 0o620);
    expect(readEntry(entry, SOURCE, uid)).toBeUndefined();
    chmodSync(entry, 0o602);
    expect(readEntry(entry, SOURCE, uid)).toBeUndefined();
    chmodSync(entry, 0o644);
    expect(readEntry(entry, SOURCE, uid)).toBeDefined();
  });

  it("not from a FIFO in its place, whose plain open would block: the read returns (in a child, so a hang fails the test)", () => {
    const entry = cacheWith(SOURCE, codeOf(SOURCE.toString()));
    rmSync(entry);
    execFileSync("mkfifo", [entry]);
    const script = `import { readEntry } from ${JSON.stringify(DIST_STORE)};
      process.stdout.write(String(readEntry(${JSON.stringify(entry)}, Buffer.from("x"), ${uid})));`;
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { timeout: 30_000, encoding: "utf8" });
    expect(out).toBe("undefined");
  });

  it("not through a symbolic link", () => {
    const entry = cacheWith(SOURCE, codeOf(SOURCE.toString()));
    const link = entryPath(dirname(entry), "/bundle/link.cjs");
    symlinkSync(entry, link);
    expect(readEntry(link, SOURCE, uid)).toBeUndefined();
  });

  it.skipIf(!asRoot)("not when another user owns it (needs root to make such a file; skipped otherwise)", () => {
    const entry = cacheWith(SOURCE, codeOf(SOURCE.toString()));
    chownSync(entry, 65534, 65534);
    expect(readEntry(entry, SOURCE, uid)).toBeUndefined();
  });

  it("nothing is made or used under a state directory others can write, that is a link, or that does not exist", () => {
    const open = join(root, "open");
    mkdirSync(open);
    chmodSync(open, 0o777);
    expect(prepareStoreDir(open, "/bundle", uid)).toBeUndefined();
    expect(readdirSync(open)).toEqual([]);
    const mine = join(root, "mine");
    mkdirSync(mine, { mode: 0o700 });
    const link = join(root, "link");
    symlinkSync(mine, link);
    expect(prepareStoreDir(link, "/bundle", uid)).toBeUndefined();
    expect(readdirSync(mine)).toEqual([]);
    expect(prepareStoreDir(join(root, "missing"), "/bundle", uid)).toBeUndefined();
    expect(existsSync(join(root, "missing"))).toBe(false);
  });

  it("makes its directories private, one per bundle, each recording its bundle", () => {
    const state = join(root, "state");
    mkdirSync(state, { mode: 0o700 });
    const dir = prepareStoreDir(state, "/opt/mcpd/dist/cli-bundle", uid) as string;
    expect(dir).toBe(join(state, "compile-cache", bundleKey("/opt/mcpd/dist/cli-bundle")));
    expect(lstatSync(dirname(dir)).mode & 0o777).toBe(0o700);
    expect(lstatSync(dir).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(dir, "bundle-dir"), "utf8")).toBe("/opt/mcpd/dist/cli-bundle");
    expect(bundleKey("/a/cli-bundle")).not.toBe(bundleKey("/b/cli-bundle"));
    expect(bundleKey("/a/cli-bundle")).toMatch(/^[0-9a-f]{16}$/);
  });

  it.skipIf(!asRoot)(
    "not under another user's state directory, nor into another user's cache directory (needs root; skipped otherwise)",
    () => {
      const theirs = join(root, "theirs");
      mkdirSync(theirs, { mode: 0o700 });
      chownSync(theirs, 65534, 65534);
      expect(prepareStoreDir(theirs, "/bundle", uid)).toBeUndefined();
      const state = join(root, "state");
      mkdirSync(join(state, "compile-cache"), { recursive: true, mode: 0o700 });
      chownSync(join(state, "compile-cache"), 65534, 65534);
      expect(trustedDir(state, uid)).toBe(true);
      expect(prepareStoreDir(state, "/bundle", uid)).toBeUndefined();
    },
  );

  it("never writes through a link planted where its temporary file goes: the write fails and the link's target is untouched", () => {
    const dir = store();
    const target = join(root, "precious");
    writeFileSync(target, "keep me");
    const entry = entryPath(dir, "/bundle/main.cjs");
    symlinkSync(target, `${entry}.${process.pid}.tmp`);
    expect(writeEntry(entry, SOURCE, () => Buffer.from("code"))).toBe(false);
    expect(readFileSync(target, "utf8")).toBe("keep me");
  });

  it("leaves no temporary file behind when it cannot write", () => {
    const dir = store();
    // The entry's name is taken by a directory: the rename fails.
    const entry = entryPath(dir, "/bundle/main.cjs");
    mkdirSync(entry);
    writeFileSync(join(entry, "x"), "");
    expect(writeEntry(entry, SOURCE, () => Buffer.from("code"))).toBe(false);
    expect(readdirSync(dir).sort()).toEqual(["bundle-dir", "main.cjs.cache"]);
  });
});

describe("the cache stays bounded", () => {
  it("drops a dead writer's temporary files, an older build's entries, and the directories of bundles that are gone", () => {
    const state = join(root, "state");
    mkdirSync(state, { mode: 0o700 });
    const bundle = join(root, "bundle");
    const otherBundle = join(root, "other-bundle");
    mkdirSync(bundle);
    mkdirSync(otherBundle);
    writeFileSync(join(bundle, "main.cjs"), "");
    const dir = prepareStoreDir(state, bundle, uid) as string;
    const alive = prepareStoreDir(state, otherBundle, uid) as string;
    const gone = prepareStoreDir(state, join(root, "uninstalled"), uid) as string;
    const unrecordedOld = join(state, "compile-cache", "0123456789abcdef");
    const unrecordedNew = join(state, "compile-cache", "fedcba9876543210");
    mkdirSync(unrecordedOld, { mode: 0o700 });
    mkdirSync(unrecordedNew, { mode: 0o700 });
    const now = Date.now();
    const aged = (file: string, ageMs: number): void => {
      if (!existsSync(file)) writeFileSync(file, "x", { mode: 0o600 });
      const t = (now - ageMs) / 1000;
      utimesSync(file, t, t);
    };
    const month = 30 * 24 * 3600_000;
    aged(join(dir, "main.cjs.cache"), month); // this bundle's file: kept however old
    aged(join(dir, "gone.cjs.cache"), 0); // an older build's file: dropped
    aged(join(dir, "main.cjs.cache.123.tmp"), CLI_DEFAULTS.compileCacheTempMaxAgeMs + 60_000); // a dead writer's: dropped
    aged(join(dir, "main.cjs.cache.456.tmp"), 0); // a writer at work: kept
    aged(join(dir, "notes.txt"), month); // not the cache's: kept
    aged(join(alive, "main.cjs.cache"), month); // another installed bundle's: kept
    aged(join(gone, "main.cjs.cache"), 0); // an uninstalled bundle's: its directory goes
    aged(unrecordedOld, CLI_DEFAULTS.compileCacheStaleEntryMaxAgeMs + 60_000); // records no bundle, old: goes
    aged(unrecordedNew, 0); // records no bundle yet, new: kept
    pruneStore(dir, bundle, uid, now);
    expect(readdirSync(dir).sort()).toEqual(["bundle-dir", "main.cjs.cache", "main.cjs.cache.456.tmp", "notes.txt"]);
    expect(readdirSync(alive).sort()).toEqual(["bundle-dir", "main.cjs.cache"]);
    expect(readdirSync(join(state, "compile-cache")).sort()).toEqual(
      [bundleKey(bundle), bundleKey(otherBundle), "fedcba9876543210"].sort(),
    );
  });
});

describe("the loader hook", () => {
  /** A stand-in for Node's `Module` class: Node 20's extension table (no `.cjs` handler), recording what it is given. */
  function loader(): { loader: CjsLoader; given: string[] } {
    const given: string[] = [];
    const extensions: CjsLoader["_extensions"] = { ".js": (_m, filename) => void given.push(filename) };
    return { loader: { _extensions: extensions, _cache: {}, _resolveFilename: (r) => r }, given };
  }
  function moduleFor(): CjsModule & { exports: Record<string, unknown> } {
    return { exports: {}, require: (id: string) => ({ required: id }) };
  }

  it("compiles the bundle's .cjs files itself, with the code the first run wrote, and hands every other file to Node's handler", () => {
    const state = join(root, "state");
    const bundle = join(root, "bundle");
    mkdirSync(state, { mode: 0o700 });
    mkdirSync(bundle);
    writeFileSync(join(bundle, "a.cjs"), 'exports.answer = 42; exports.dep = require("./b.cjs");\n');
    const env = { MCPD_HOME: state };

    const first = loader();
    const cache = enableCompileCache(first.loader, bundle, ["status"], env);
    expect(cache).toBeDefined();
    expect(Object.keys(first.loader._extensions), "no .cjs handler is added where Node has none").toEqual([".js"]);
    const handler = first.loader._extensions[".js"] as (m: CjsModule, f: string) => void;
    const m = moduleFor();
    handler(m, join(bundle, "a.cjs"));
    expect(m.exports).toEqual({ answer: 42, dep: { required: "./b.cjs" } });
    handler(moduleFor(), join(bundle, "x.js"));
    handler(moduleFor(), join(root, "elsewhere", "a.cjs"));
    expect(first.given).toEqual([join(bundle, "x.js"), join(root, "elsewhere", "a.cjs")]);
    expect(cache?.stats).toEqual({ hits: 0, misses: 1 });
    cache?.flush();

    const second = loader();
    const again = enableCompileCache(second.loader, bundle, ["status"], env);
    const m2 = moduleFor();
    (second.loader._extensions[".js"] as (m: CjsModule, f: string) => void)(m2, join(bundle, "a.cjs"));
    expect(m2.exports.answer).toBe(42);
    expect(again?.stats).toEqual({ hits: 1, misses: 0 });
  });

  it("stays off for `mcpd start`, with NODE_DISABLE_COMPILE_CACHE, under a policy, and without a trusted state directory", () => {
    const state = join(root, "state");
    mkdirSync(state, { mode: 0o700 });
    const env = { MCPD_HOME: state };
    for (const [argv, e] of [
      [["start"], env],
      [["status"], { ...env, NODE_DISABLE_COMPILE_CACHE: "1" }],
      [["status"], { ...env, NODE_OPTIONS: "--experimental-policy=policy.json" }],
      [["status"], { MCPD_HOME: join(root, "missing") }],
    ] as const) {
      const l = loader();
      expect(enableCompileCache(l.loader, join(root, "bundle"), argv, e)).toBeUndefined();
      expect(Object.keys(l.loader._extensions)).toEqual([".js"]);
    }
  });
});
