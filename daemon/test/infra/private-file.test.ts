/**
 * The one writer and reader of the daemon's private files, on real files: a new file renamed into place
 * (never the old inode rewritten, never a link followed, no temporary file left), read without blocking
 * and only when it is a regular file of the user's own.
 */
import { spawnSync } from "node:child_process";
import {
  closeSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readPrivateFile, writePrivateFile } from "../../src/infra/private-file.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), "mcpd-private-"));
  dirs.push(d);
  return d;
};

describe("writePrivateFile", () => {
  it("writes a new 0600 file each time: a descriptor on the old one keeps the old content; no temporary file is left", () => {
    const dir = tmp();
    const file = join(dir, "f");
    writePrivateFile(file, "one\n");
    const first = statSync(file).ino;
    const fd = openSync(file, "r");
    try {
      writePrivateFile(file, "two\n");
      const buf = Buffer.alloc(16);
      expect(buf.subarray(0, readSync(fd, buf, 0, 16, 0)).toString()).toBe("one\n");
    } finally {
      closeSync(fd);
    }
    expect(statSync(file).ino).not.toBe(first);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, "utf8")).toBe("two\n");
    expect(readdirSync(dir)).toEqual(["f"]);
  });

  it("replaces a symbolic link or a FIFO instead of writing through it, and names a directory in its way", () => {
    const dir = tmp();
    const target = join(dir, "target");
    writeFileSync(target, "keep");
    symlinkSync(target, join(dir, "link"));
    writePrivateFile(join(dir, "link"), "new");
    expect(lstatSync(join(dir, "link")).isFile()).toBe(true);
    expect(readFileSync(target, "utf8")).toBe("keep");
    expect(spawnSync("mkfifo", [join(dir, "fifo")]).status).toBe(0);
    writePrivateFile(join(dir, "fifo"), "new");
    expect(lstatSync(join(dir, "fifo")).isFile()).toBe(true);
    mkdirSync(join(dir, "sub"));
    writeFileSync(join(dir, "sub", "x"), "");
    expect(() => writePrivateFile(join(dir, "sub"), "new")).toThrow(
      expect.objectContaining({ code: "MCPD_UNSAFE_STATE_DIR", message: `cannot write ${join(dir, "sub")}: it is a directory; remove it` }),
    );
    expect(readdirSync(dir).sort()).toEqual(["fifo", "link", "sub", "target"]);
  });
});

describe("readPrivateFile", () => {
  // A FIFO (which must never be waited on) is checked against the real daemon, in a process that can be
  // bounded: tests/reliability/security-private-files.test.ts.
  it("reads a regular file; a link, a directory or a file over the bound is unusable, named", () => {
    const dir = tmp();
    writeFileSync(join(dir, "ok"), "hello", { mode: 0o644 });
    expect(readPrivateFile(join(dir, "ok"), { maxBytes: 10 })).toEqual({ kind: "file", text: "hello", mode: 0o644 });
    readPrivateFile(join(dir, "ok"), { maxBytes: 10, tighten: true });
    expect(statSync(join(dir, "ok")).mode & 0o777).toBe(0o600);
    expect(readPrivateFile(join(dir, "none"), { maxBytes: 10 })).toEqual({ kind: "missing" });
    expect(readPrivateFile(join(dir, "ok"), { maxBytes: 4 })).toEqual({
      kind: "unusable",
      reason: `${join(dir, "ok")} is larger than 4 bytes`,
    });
    symlinkSync(join(dir, "ok"), join(dir, "link"));
    expect(readPrivateFile(join(dir, "link"), { maxBytes: 10 })).toEqual({
      kind: "unusable",
      reason: `${join(dir, "link")} is a symbolic link`,
    });
    expect(readPrivateFile(dir, { maxBytes: 10 })).toEqual({ kind: "unusable", reason: `${dir} is a directory, not a regular file` });
  });
});
