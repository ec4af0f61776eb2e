/**
 * The daemon's log file, written by sonic-boom: a write that fails (a full disk, an I/O error, a quota) is
 * never thrown or emitted as an `error` (which would end the daemon); its lines are held, up to a bound
 * past which they are dropped and counted, and written once the disk has room again; a synchronous flush
 * never blocks on a failing file; rotation loses no line; the file is private (0600) and never reached
 * through a symbolic link.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RotatingFileStream } from "../../src/infra/log-file.js";
import { waitFor } from "../../../tests/helpers/process.js";

const dirs: string[] = [];
const mounts: string[] = [];
const streams: RotatingFileStream[] = [];
afterEach(async () => {
  // Close the log files first: a file system with an open file cannot be unmounted (lazily, it can).
  await Promise.all(streams.splice(0).map((s) => s.close()));
  for (const m of mounts.splice(0)) if (spawnSync("umount", [m]).status !== 0) spawnSync("umount", ["-l", m]);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

type Options = Omit<ConstructorParameters<typeof RotatingFileStream>[1], "maxHeldBytes" | "retryMs"> & { maxHeldBytes?: number };

function open(file: string, opts: Options): RotatingFileStream {
  const s = new RotatingFileStream(file, { maxHeldBytes: 1 << 20, retryMs: 50, ...opts });
  streams.push(s);
  return s;
}

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "mcpd-logf-"));
  dirs.push(d);
  return d;
}

const line = (i: number, pad = 0): string => `${JSON.stringify({ level: 30, i, msg: "x".repeat(pad) })}\n`;

/** Whether this machine lets us mount a tmpfs (root, and not refused by a container's policy). */
function canMountTmpfs(): string | undefined {
  const probe = mkdtempSync(join(tmpdir(), "mcpd-mnt-"));
  try {
    const r = spawnSync("mount", ["-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", probe]);
    if (r.status !== 0) return `mount -t tmpfs refused: ${String(r.stderr || r.error?.message).trim()}`;
    spawnSync("umount", [probe]);
    return undefined;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}
const noTmpfs = canMountTmpfs();

/** Fills the file system holding `dir` with a filler file until it reports ENOSPC; returns the filler's path. */
function fill(dir: string): string {
  const filler = join(dir, "filler");
  const fd = openSync(filler, "w");
  const chunk = Buffer.alloc(4096, 0x61);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    expect((err as NodeJS.ErrnoException).code).toBe("ENOSPC");
  } finally {
    closeSync(fd);
  }
  return filler;
}

describe("RotatingFileStream", () => {
  it("regression: writes that fail (ENOSPC from /dev/full) are never thrown nor emitted; lines past the held bound are dropped and counted; a synchronous flush returns (sonic-boom's own retries forever)", async () => {
    const stream = open("/dev/full", { maxBytes: 1 << 20, maxFiles: 1, maxHeldBytes: 200 });
    expect(() => stream.write(line(1))).not.toThrow();
    await waitFor(() => stream.status().failing, { message: "the failed write to be noticed" });
    for (let i = 2; i <= 10; i++) expect(() => stream.write(line(i))).not.toThrow();
    const st = stream.status();
    expect(st.droppedLines).toBeGreaterThan(0);
    expect(st.droppedLines).toBeLessThan(10);
    expect(st.lastError).toMatch(/ENOSPC/);
    expect(typeof st.lastErrorAt).toBe("string");
    // At exit and after a fatal line: it must return, whatever the file says.
    expect(() => stream.flushSync()).not.toThrow();
    // `mcpd logs` over the socket still shows what could not be written.
    expect(stream.tail(20)).toHaveLength(10);
  });

  it.skipIf(noTmpfs !== undefined)(
    `regression: on a full disk lines are held, no partial line is left, and once space returns every line is written, in order${noTmpfs ? ` (skipped: ${noTmpfs})` : ""}`,
    async () => {
      const dir = tempDir();
      expect(spawnSync("mount", ["-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", dir]).status).toBe(0);
      mounts.push(dir);
      const file = join(dir, "mcpd.log");
      const resumed: Array<{ droppedLines: number }> = [];
      const stream = open(file, { maxBytes: 1 << 20, maxFiles: 1, onResume: (s) => resumed.push(s) });
      stream.write(line(0));
      await waitFor(() => readFileSync(file, "utf8").includes('"i":0'), { message: "the first line on disk" });
      const filler = fill(dir);
      // 1000-byte lines: the first ones may still fit the last page of the log; one is cut short; then none fit.
      let i = 1;
      stream.write(line(i++, 1000));
      await waitFor(
        () => {
          if (!stream.status().failing) stream.write(line(i++, 1000));
          return stream.status().failing;
        },
        { message: "the full disk to refuse a write" },
      );
      for (const end = i + 3; i < end; i++) stream.write(line(i, 1000));
      expect(resumed).toEqual([]);
      rmSync(filler);
      stream.write(line(1000));
      await waitFor(() => resumed.length === 1, { message: "onResume" });
      expect(resumed[0]).toMatchObject({ droppedLines: 0 });
      expect(stream.status()).toMatchObject({ droppedLines: 0, failing: false });
      await waitFor(() => readFileSync(file, "utf8").includes('"i":1000'), { message: "the last line on disk" });
      // Every line in the file is whole JSON, and none is missing: the one a full disk cut short was completed.
      const lines = readFileSync(file, "utf8").split("\n");
      expect(lines.pop()).toBe("");
      const seen = lines.map((l) => (JSON.parse(l) as { i: number }).i);
      expect(seen).toEqual([...Array.from({ length: i }, (_, n) => n), 1000]);
    },
  );

  it("rotation loses no line: every line is in mcpd.log and its rotated copies, in order, none over the size", async () => {
    const dir = tempDir();
    const file = join(dir, "mcpd.log");
    const stream = open(file, { maxBytes: 1000, maxFiles: 50 });
    for (let i = 0; i < 60; i++) stream.write(line(i, 100));
    await stream.close();
    const copies = readdirSync(dir)
      .filter((f) => f.startsWith("mcpd.log."))
      .sort((a, b) => Number(b.split(".").pop()) - Number(a.split(".").pop()));
    expect(copies.length).toBeGreaterThan(3);
    const text = [...copies, "mcpd.log"].map((f) => readFileSync(join(dir, f), "utf8"));
    for (const t of text) expect(Buffer.byteLength(t)).toBeLessThanOrEqual(1000);
    const seen = text
      .join("")
      .split("\n")
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { i: number }).i);
    expect(seen).toEqual(Array.from({ length: 60 }, (_, n) => n));
    expect(stream.status().droppedLines).toBe(0);
  });

  it("flushSync writes what is held before it returns", () => {
    const dir = tempDir();
    const file = join(dir, "mcpd.log");
    const stream = open(file, { maxBytes: 1 << 20, maxFiles: 1 });
    for (let i = 0; i < 20; i++) stream.write(line(i));
    stream.flushSync();
    // The first write may still be under way in the thread pool: everything after it is on disk already.
    const text = readFileSync(file, "utf8");
    for (let i = 1; i < 20; i++) expect(text).toContain(line(i));
  });

  it("regression: a log file that already exists readable by others is made private (0600)", () => {
    const dir = tempDir();
    const file = join(dir, "mcpd.log");
    writeFileSync(file, line(0));
    chmodSync(file, 0o644);
    const stream = open(file, { maxBytes: 1 << 20, maxFiles: 1 });
    stream.write(line(1));
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("regression: never writes through a symbolic link at the log path: refuses, naming it; rotation replaces symlinked old files without following them", async () => {
    const dir = tempDir();
    const victim = join(dir, "victim");
    writeFileSync(victim, "precious\n");
    const file = join(dir, "logs", "mcpd.log");
    mkdirSync(join(dir, "logs"), { mode: 0o700 });
    symlinkSync(victim, file);
    expect(() => new RotatingFileStream(file, { maxBytes: 1 << 20, maxFiles: 1, maxHeldBytes: 1 << 20, retryMs: 50 })).toThrow(
      expect.objectContaining({ code: "MCPD_UNSAFE_STATE_DIR", message: expect.stringContaining(`${file} is a symbolic link`) }),
    );
    expect(readFileSync(victim, "utf8")).toBe("precious\n");

    rmSync(file);
    for (const n of [1, 2]) symlinkSync(victim, `${file}.${n}`);
    const stream = open(file, { maxBytes: 200, maxFiles: 2 });
    for (let i = 0; i < 10; i++) stream.write(line(i, 100));
    await stream.close();
    expect(stream.status().droppedLines).toBe(0);
    expect(readFileSync(victim, "utf8")).toBe("precious\n");
    for (const f of [file, `${file}.1`, `${file}.2`]) expect(statSync(f).mode & 0o777, f).toBe(0o600);
  });
});
