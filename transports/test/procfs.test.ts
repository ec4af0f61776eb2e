/**
 * procfs: the one reader of Linux's /proc/<pid> files (stat, status, cmdline) for the daemon and the
 * transports, which parsed /proc/<pid>/stat three times (liveness, the child registry's start times, a
 * process group's live members) and /proc/<pid>/status and cmdline once more (`mcpd stop`).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { isDeadState, listProcPids, parseProcStat, readProcIdentity, readProcStat, readProcStatAsync } from "../src/procfs.js";

/** A stat line with `comm` and the fields after it: state, ppid, pgrp, then 16 more, then start time 9999. */
function statLine(comm: string, state = "S", ppid = 1, pgrp = 42): string {
  const middle = Array.from({ length: 16 }, (_, i) => String(i + 100)).join(" ");
  return `123 (${comm}) ${state} ${ppid} ${pgrp} ${middle} 9999 4096 0 0\n`;
}

describe("parseProcStat", () => {
  it.each<[string, string, ReturnType<typeof parseProcStat>]>([
    ["a plain command", statLine("node"), { state: "S", ppid: 1, pgrp: 42, startTime: "9999" }],
    ["a zombie", statLine("sh", "Z", 7, 7), { state: "Z", ppid: 7, pgrp: 7, startTime: "9999" }],
    ["a command name with spaces", statLine("my server"), { state: "S", ppid: 1, pgrp: 42, startTime: "9999" }],
    // comm is whatever the process named itself (up to 15 bytes): the fields start after the LAST ")".
    ["a command name with parentheses", statLine(") R 1 1 (x"), { state: "S", ppid: 1, pgrp: 42, startTime: "9999" }],
    ["no command name", "123 S 1 42", undefined],
    ["too few fields for the start time", "123 (node) S 1 42 0 0", undefined],
    ["nothing", "", undefined],
  ])("%s", (_title, text, expected) => {
    expect(parseProcStat(text)).toEqual(expected);
  });

  it.each([
    ["Z", true],
    ["X", true],
    ["S", false],
    ["R", false],
    ["D", false],
    ["T", false],
  ])("state %s is dead: %s", (state, dead) => {
    expect(isDeadState(state)).toBe(dead);
  });
});

const started: ChildProcess[] = [];
afterEach(async () => {
  for (const child of started.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await gone;
    }
  }
});

describe.runIf(process.platform === "linux")("reading /proc (Linux)", () => {
  it("reads this process's stat, the same synchronously and asynchronously", async () => {
    const mine = readProcStat(process.pid);
    expect(mine).toMatchObject({ ppid: process.ppid });
    expect(isDeadState(mine?.state ?? "X")).toBe(false);
    expect(mine?.startTime).toMatch(/^\d+$/);
    const again = await readProcStatAsync(process.pid);
    expect(again?.startTime).toBe(mine?.startTime);
    expect(again?.pgrp).toBe(mine?.pgrp);
  });

  it("reads a child's process group and identity (uid and argv)", async () => {
    const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60_000)", "procfs-marker"], { detached: true, stdio: "ignore" });
    started.push(child);
    const pid = child.pid as number;
    expect(readProcStat(pid)).toMatchObject({ ppid: process.pid, pgrp: pid });
    expect(readProcIdentity(pid)).toEqual({
      uids: [process.getuid?.(), process.geteuid?.()],
      argv: [process.execPath, "-e", "setTimeout(() => {}, 60_000)", "procfs-marker"],
    });
    expect(await listProcPids()).toContain(pid);
  });

  it("answers undefined for a process that is not there", async () => {
    // Above the kernel's pid_max (at most 2^22): never a process.
    const none = 2 ** 22 + 1;
    expect(readProcStat(none)).toBeUndefined();
    expect(await readProcStatAsync(none)).toBeUndefined();
    expect(readProcIdentity(none)).toBeUndefined();
    expect(await listProcPids()).not.toContain(none);
  });
});
