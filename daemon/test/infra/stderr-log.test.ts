/**
 * The foreground daemon's log: when stderr cannot be written, its lines move to the log file; when that
 * fails too, they are dropped and counted. Nothing ever throws. Real failing descriptors: /dev/full
 * (ENOSPC on every write) and a log path that is a symbolic link (refused).
 */
import { closeSync, mkdtempSync, openSync, rmSync, symlinkSync, writeFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RotatingFileStream } from "../../src/infra/log-file.js";
import { StderrLog } from "../../src/infra/stderr-log.js";
import { waitFor } from "../../../tests/helpers/process.js";

const dirs: string[] = [];
const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A descriptor whose every write fails with ENOSPC, as a stderr redirected to a full disk does. */
function failingStderr(): number {
  const fd = openSync("/dev/full", "w");
  closers.push(() => closeSync(fd));
  return fd;
}

/** What the daemon gives it (daemon/src/composition/daemon-log.ts). */
const bounds = { maxHeldBytes: 1 << 20, closeWaitMs: 1000 };

const line = (i: number): string => `${JSON.stringify({ level: 30, i })}\n`;

describe("StderrLog", () => {
  it("moves every line to the log file, in order, from the first one stderr could not take", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcpd-serr-"));
    dirs.push(dir);
    const file = join(dir, "mcpd.log");
    const fallbacks: string[] = [];
    const log = new StderrLog(failingStderr(), {
      openFallback: () => {
        const s = new RotatingFileStream(file, { maxBytes: 1 << 20, maxFiles: 1, maxHeldBytes: 1 << 20, retryMs: 50 });
        closers.push(() => s.close());
        return s;
      },
      onFallback: (err) => fallbacks.push(err),
      ...bounds,
    });
    expect(log.file).toBeUndefined();
    for (let i = 0; i < 5; i++) expect(log.write(line(i))).toBe(true);
    await waitFor(() => log.file === file, { message: "the log to move to the file" });
    for (let i = 5; i < 8; i++) log.write(line(i));
    await waitFor(() => fallbacks.length === 1, { message: "onFallback" });
    expect(fallbacks[0]).toMatch(/ENOSPC/);
    const all = [0, 1, 2, 3, 4, 5, 6, 7].map(line).join("");
    await waitFor(() => readFileSync(file, "utf8") === all, { message: "every line in the file, in order" });
    expect(log.status()).toMatchObject({ droppedLines: 0, failing: false });
    expect(log.tail(3).map((l) => JSON.parse(l).i)).toEqual([5, 6, 7]);
  });

  it("counts the lines neither stderr nor the log file could take (full disk: past what it holds; a symlinked log file), never throwing", async () => {
    const full = new StderrLog(failingStderr(), {
      openFallback: () => {
        // Room to hold one line while the file refuses them.
        const s = new RotatingFileStream("/dev/full", { maxBytes: 1 << 20, maxFiles: 1, maxHeldBytes: line(0).length, retryMs: 50 });
        closers.push(() => s.close());
        return s;
      },
      ...bounds,
    });
    for (let i = 0; i < 4; i++) full.write(line(i));
    await waitFor(() => full.status().droppedLines === 3 && full.status().failing, { message: "3 dropped lines, and failing" });
    expect(full.status()).toMatchObject({ failing: true, lastError: expect.stringMatching(/ENOSPC/) });

    const dir = mkdtempSync(join(tmpdir(), "mcpd-serr-"));
    dirs.push(dir);
    writeFileSync(join(dir, "victim"), "precious\n");
    symlinkSync(join(dir, "victim"), join(dir, "mcpd.log"));
    const linked = new StderrLog(failingStderr(), {
      openFallback: () =>
        new RotatingFileStream(join(dir, "mcpd.log"), { maxBytes: 1 << 20, maxFiles: 1, maxHeldBytes: 1 << 20, retryMs: 50 }),
      ...bounds,
    });
    for (let i = 0; i < 3; i++) linked.write(line(i));
    await waitFor(() => linked.status().droppedLines === 3, { message: "3 dropped lines" });
    expect(linked.status()).toMatchObject({ failing: true, lastError: expect.stringContaining("is a symbolic link") });
    expect(linked.file).toBeUndefined();
    expect(readFileSync(join(dir, "victim"), "utf8")).toBe("precious\n");
  });

  it("regression: close() resolves as soon as what stderr held is written, not at closeWaitMs (every foreground daemon's exit waited a second: sonic-boom says `write` before it takes the bytes off)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcpd-serr-"));
    dirs.push(dir);
    const out = join(dir, "stderr");
    const fd = openSync(out, "w");
    closers.push(() => closeSync(fd));
    // A wait of a minute: a close() that waits it out fails the test at its own bound instead.
    const log = new StderrLog(fd, {
      openFallback: () =>
        new RotatingFileStream(join(dir, "mcpd.log"), { maxBytes: 1 << 20, maxFiles: 1, maxHeldBytes: 1 << 20, retryMs: 50 }),
      maxHeldBytes: 1 << 20,
      closeWaitMs: 60_000,
    });
    for (let i = 0; i < 100; i++) log.write(line(i));
    await log.close();
    expect(readFileSync(out, "utf8")).toBe(Array.from({ length: 100 }, (_, i) => line(i)).join(""));
  }, 20_000);
});
