/**
 * The compile cache's entries on disk (src/cli/compile-cache.ts): an entry is used only for the exact
 * source it was made from, only when it is this user's own file that no one else can write, and it is
 * written only into such a directory, never through a symbolic link. Real files and V8's real cached code.
 */
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Script } from "node:vm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLI_DEFAULTS } from "../src/cli/cli-defaults.js";
import { entryPath, pruneDir, readEntry, usableDir, writeEntry } from "../src/cli/compile-cache.js";

const uid = process.getuid?.() ?? 0;
const asRoot = uid === 0;

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

/** A private cache directory with one entry for `source`; returns the entry's path. */
function cacheWith(source: Buffer, data: Buffer): string {
  const dir = join(root, "cache");
  expect(usableDir(dir, uid)).toBe(true);
  const entry = entryPath(dir, "/bundle/version.cjs");
  expect(writeEntry(entry, source, data)).toBe(true);
  return entry;
}

const SOURCE = Buffer.from('"mcpd 0.1.0";\n');

describe("an entry is read back only for the source it was made from", () => {
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

  it("not for a longer or shorter source, nor from a file that is not an entry", () => {
    const entry = cacheWith(SOURCE, codeOf(SOURCE.toString()));
    expect(readEntry(entry, Buffer.from('"mcpd 0.1.0.1";\n'), uid)).toBeUndefined();
    expect(readEntry(entry, SOURCE.subarray(1), uid)).toBeUndefined();
    writeFileSync(entry, Buffer.concat([Buffer.from(`something else ${SOURCE.length}\n`), SOURCE, Buffer.from("code")]), { mode: 0o600 });
    expect(readEntry(entry, SOURCE, uid)).toBeUndefined();
    writeFileSync(entry, "mcpd-compile-cache 1 14\n", { mode: 0o600 });
    expect(readEntry(entry, SOURCE, uid)).toBeUndefined();
    expect(readEntry(join(root, "missing.cache"), SOURCE, uid)).toBeUndefined();
  });
});

describe("an entry is trusted only as this user's own file", () => {
  it("not when others can write it", () => {
    const entry = cacheWith(SOURCE, codeOf(SOURCE.toString()));
    chmodSync(entry, 0o620);
    expect(readEntry(entry, SOURCE, uid)).toBeUndefined();
    chmodSync(entry, 0o602);
    expect(readEntry(entry, SOURCE, uid)).toBeUndefined();
    chmodSync(entry, 0o644);
    expect(readEntry(entry, SOURCE, uid)).toBeDefined();
  });

  it("not from a FIFO in its place, which would block a plain open", () => {
    const entry = cacheWith(SOURCE, codeOf(SOURCE.toString()));
    rmSync(entry);
    execFileSync("mkfifo", [entry]);
    expect(readEntry(entry, SOURCE, uid)).toBeUndefined();
  });

  it("not through a symbolic link", () => {
    const entry = cacheWith(SOURCE, codeOf(SOURCE.toString()));
    const link = entryPath(join(root, "cache"), "/bundle/link.cjs");
    symlinkSync(entry, link);
    expect(readEntry(link, SOURCE, uid)).toBeUndefined();
  });

  it.skipIf(!asRoot)("not when another user owns it (needs root to make such a file; skipped otherwise)", () => {
    const entry = cacheWith(SOURCE, codeOf(SOURCE.toString()));
    chownSync(entry, 65534, 65534);
    expect(readEntry(entry, SOURCE, uid)).toBeUndefined();
  });
});

describe("entries are written only where no one else can write", () => {
  it("makes the directory private when its parent exists, and never makes the parent", () => {
    const dir = join(root, "state", "compile-cache");
    expect(usableDir(dir, uid)).toBe(false);
    expect(() => lstatSync(join(root, "state"))).toThrow();
    mkdirSync(join(root, "state"));
    expect(usableDir(dir, uid)).toBe(true);
    expect(lstatSync(dir).mode & 0o777).toBe(0o700);
  });

  it("not into a directory others can write, nor through a link to one", () => {
    const open = join(root, "open");
    mkdirSync(open);
    chmodSync(open, 0o777);
    expect(usableDir(open, uid)).toBe(false);
    const mine = join(root, "mine");
    mkdirSync(mine, { mode: 0o700 });
    const link = join(root, "link");
    symlinkSync(mine, link);
    expect(usableDir(link, uid)).toBe(false);
  });

  it.skipIf(!asRoot)("not into another user's directory (needs root to make one; skipped otherwise)", () => {
    const theirs = join(root, "theirs");
    mkdirSync(theirs, { mode: 0o700 });
    chownSync(theirs, 65534, 65534);
    expect(usableDir(theirs, uid)).toBe(false);
  });

  it("never through a link planted where its temporary file goes: the write fails and the link's target is untouched", () => {
    const dir = join(root, "cache");
    expect(usableDir(dir, uid)).toBe(true);
    const target = join(root, "precious");
    writeFileSync(target, "keep me");
    const entry = entryPath(dir, "/bundle/main.cjs");
    symlinkSync(target, `${entry}.${process.pid}.tmp`);
    expect(writeEntry(entry, SOURCE, Buffer.from("code"))).toBe(false);
    expect(readFileSync(target, "utf8")).toBe("keep me");
    expect(readdirSync(dir)).toEqual([`main.cjs.cache.${process.pid}.tmp`]);
  });

  it("leaves no temporary file behind when it cannot write", () => {
    const dir = join(root, "cache");
    expect(usableDir(dir, uid)).toBe(true);
    // The entry's name is taken by a directory: the rename fails.
    const entry = entryPath(dir, "/bundle/main.cjs");
    mkdirSync(entry);
    writeFileSync(join(entry, "x"), "");
    expect(writeEntry(entry, SOURCE, Buffer.from("code"))).toBe(false);
    expect(readdirSync(dir)).toEqual(["main.cjs.cache"]);
  });
});

describe("the cache stays bounded", () => {
  it("drops temporary files a dead writer left and old entries of files the bundle no longer has; keeps the rest", () => {
    const dir = join(root, "cache");
    const bundle = join(root, "bundle");
    mkdirSync(dir, { mode: 0o700 });
    mkdirSync(bundle);
    writeFileSync(join(bundle, "main.cjs"), "");
    const now = Date.now();
    const aged = (name: string, ageMs: number): void => {
      writeFileSync(join(dir, name), "x", { mode: 0o600 });
      const t = (now - ageMs) / 1000;
      utimesSync(join(dir, name), t, t);
    };
    const month = 30 * 24 * 3600_000;
    aged("main.cjs.cache", month); // this bundle's file: kept however old
    aged("gone.cjs.cache", CLI_DEFAULTS.compileCacheStaleEntryMaxAgeMs + 60_000); // no such file, old: dropped
    aged("other.cjs.cache", 60_000); // no such file, recent (another install's?): kept
    aged("main.cjs.cache.123.tmp", CLI_DEFAULTS.compileCacheTempMaxAgeMs + 60_000); // a dead writer's: dropped
    aged("main.cjs.cache.456.tmp", 0); // a writer at work: kept
    aged("notes.txt", month); // not the cache's: kept
    pruneDir(dir, bundle, now);
    expect(readdirSync(dir).sort()).toEqual(["main.cjs.cache", "main.cjs.cache.456.tmp", "notes.txt", "other.cjs.cache"]);
  });
});
