/**
 * The daemon's log file: a write that fails (a full disk, an I/O error, a quota) is dropped and counted,
 * never thrown or emitted as an `error` (which would end the daemon); writing resumes by itself once the
 * disk has room again; the file is private (0600) and never reached through a symbolic link.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
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

const dirs: string[] = [];
const mounts: string[] = [];
const streams: RotatingFileStream[] = [];
afterEach(() => {
  // Close the log files first: a file system with an open file cannot be unmounted (lazily, it can).
  for (const s of streams.splice(0)) s.destroy();
  for (const m of mounts.splice(0)) if (spawnSync("umount", [m]).status !== 0) spawnSync("umount", ["-l", m]);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function open(file: string, opts: ConstructorParameters<typeof RotatingFileStream>[1]): RotatingFileStream {
  const s = new RotatingFileStream(file, opts);
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
  it("regression: a line that cannot be written (ENOSPC from /dev/full) is counted, never thrown nor emitted as an error", async () => {
    const stream = open("/dev/full", { maxBytes: 1 << 20, maxFiles: 1 });
    const errors: Error[] = [];
    stream.on("error", (err) => errors.push(err));
    // Directly, and through the Writable interface as pino writes.
    expect(() => stream.writeLine(line(1))).not.toThrow();
    await new Promise<void>((resolve) => stream.write(line(2), () => resolve()));
    stream.write(`${line(3)}${line(4)}`);
    await new Promise((r) => setImmediate(r));
    expect(errors).toEqual([]);
    const st = stream.status();
    expect(st.droppedLines).toBe(4);
    expect(st.failing).toBe(true);
    expect(st.lastError).toMatch(/ENOSPC/);
    expect(typeof st.lastErrorAt).toBe("string");
    // `mcpd logs` over the socket still shows what could not be written.
    expect(stream.tail(10)).toHaveLength(4);
  });

  it.skipIf(noTmpfs !== undefined)(
    `regression: on a full disk lines are dropped and counted, no partial line is left, and writing resumes once space returns${noTmpfs ? ` (skipped: ${noTmpfs})` : ""}`,
    async () => {
      const dir = tempDir();
      expect(spawnSync("mount", ["-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", dir]).status).toBe(0);
      mounts.push(dir);
      const file = join(dir, "mcpd.log");
      const resumed: Array<{ droppedLines: number }> = [];
      const stream = open(file, { maxBytes: 1 << 20, maxFiles: 1, onResume: (s) => resumed.push(s) });
      stream.writeLine(line(0));
      const filler = fill(dir);
      // 1000-byte lines: the first ones may still fit the last page of the log; one is cut short; then none fit.
      let i = 1;
      while (stream.status().droppedLines < 3) {
        stream.writeLine(line(i++, 1000));
        expect(i, "the full disk never refused a line").toBeLessThan(100);
      }
      const dropped = stream.status().droppedLines;
      expect(stream.status().failing).toBe(true);
      rmSync(filler);
      stream.writeLine(line(1000));
      expect(stream.status()).toMatchObject({ droppedLines: dropped, failing: false });
      // Reported on a later tick: the daemon logs it, and pino must not be re-entered from its own write.
      expect(resumed).toEqual([]);
      await new Promise((r) => setImmediate(r));
      expect(resumed).toEqual([expect.objectContaining({ droppedLines: dropped })]);
      // Every line in the file is whole JSON: a line cut short by the full disk was taken back.
      const lines = readFileSync(file, "utf8").split("\n");
      expect(lines.pop()).toBe("");
      for (const l of lines) expect(() => JSON.parse(l), l.slice(0, 80)).not.toThrow();
      expect(JSON.parse(lines[lines.length - 1] as string).i).toBe(1000);
      expect(lines).toHaveLength(i - dropped + 1);
    },
  );

  it("regression: a log file that already exists readable by others is made private (0600)", () => {
    const dir = tempDir();
    const file = join(dir, "mcpd.log");
    writeFileSync(file, line(0));
    chmodSync(file, 0o644);
    const stream = open(file, { maxBytes: 1 << 20, maxFiles: 1 });
    stream.writeLine(line(1));
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("regression: never writes through a symbolic link at the log path: refuses, naming it; rotation replaces symlinked old files without following them", () => {
    const dir = tempDir();
    const victim = join(dir, "victim");
    writeFileSync(victim, "precious\n");
    const file = join(dir, "logs", "mcpd.log");
    mkdirSync(join(dir, "logs"), { mode: 0o700 });
    symlinkSync(victim, file);
    expect(() => new RotatingFileStream(file, { maxBytes: 1 << 20, maxFiles: 1 })).toThrow(
      expect.objectContaining({ code: "MCPD_UNSAFE_STATE_DIR", message: expect.stringContaining(`${file} is a symbolic link`) }),
    );
    expect(readFileSync(victim, "utf8")).toBe("precious\n");

    rmSync(file);
    for (const n of [1, 2]) symlinkSync(victim, `${file}.${n}`);
    const stream = open(file, { maxBytes: 200, maxFiles: 2 });
    for (let i = 0; i < 10; i++) stream.writeLine(line(i, 100));
    expect(stream.status().droppedLines).toBe(0);
    expect(readFileSync(victim, "utf8")).toBe("precious\n");
    for (const f of [file, `${file}.1`, `${file}.2`]) expect(statSync(f).mode & 0o777, f).toBe(0o600);
  });
});
