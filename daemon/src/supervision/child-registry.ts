import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { Logger } from "@mcpd/protocol";
import { readProcStat } from "@mcpd/transports/procfs";
import { RUNTIME_DEFAULTS } from "../defaults.js";
import { readPrivateFile, writePrivateFile } from "../infra/private-file.js";
import { isPidAlive } from "../infra/process-alive.js";

/** One child process group mcpd started, as recorded on disk. */
export interface ChildRecord {
  server: string;
  pid: number;
  /** Start time of the process as the kernel reports it (Linux: /proc/<pid>/stat field 22), to tell a reused pid from ours. */
  startTime: string | null;
  command: string;
}

/** The start time of a live process, or null when it cannot be read (not Linux, or gone). */
export function processStartTime(pid: number): string | null {
  return readProcStat(pid)?.startTime ?? null;
}

/**
 * Records the process groups of every stdio server in the state dir, so that a daemon started after
 * mcpd itself was killed (`kill -9`) can end the groups the previous run left behind, after checking
 * that each recorded pid is still the process mcpd started (same start time), not a reused pid. The
 * record is a private file ({@link writePrivateFile}); one that is not a regular file of the user's own
 * (another user's could name any process group to signal; a FIFO is never waited on) is ignored.
 */
export class ChildRegistry {
  private readonly children = new Map<number, ChildRecord>();

  constructor(
    private readonly file: string,
    private readonly log: Logger,
  ) {}

  add(server: string, pid: number, command: string): void {
    this.children.set(pid, { server, pid, startTime: processStartTime(pid), command });
    this.save();
  }

  remove(pid: number): void {
    if (this.children.delete(pid)) this.save();
  }

  private save(): void {
    try {
      mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
      writePrivateFile(this.file, JSON.stringify({ daemonPid: process.pid, children: [...this.children.values()] }));
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, "could not record child processes");
    }
  }

  /**
   * Ends the process groups a previous daemon recorded and that are still alive and still ours.
   * Sends SIGTERM to each group, then SIGKILL to what remains after `graceMs`. Returns the pids ended.
   */
  async reapOrphans(graceMs = 1000): Promise<number[]> {
    let recorded: ChildRecord[] = [];
    try {
      const read = readPrivateFile(this.file, { maxBytes: RUNTIME_DEFAULTS.stateFileMaxBytes });
      if (read.kind === "unusable") this.log.warn(`ignoring the child process records: ${read.reason}`);
      if (read.kind !== "file") return [];
      const parsed = JSON.parse(read.text) as { daemonPid?: number; children?: ChildRecord[] };
      if (parsed.daemonPid !== undefined && parsed.daemonPid !== process.pid && isPidAlive(parsed.daemonPid)) {
        // Another daemon is alive and owns these; never touch them.
        const st = processStartTime(parsed.daemonPid);
        if (st !== null || process.platform !== "linux") return [];
      }
      recorded = Array.isArray(parsed.children) ? parsed.children : [];
    } catch {
      return [];
    }
    // A live leader must have the recorded start time (else the pid was reused). A dead leader whose
    // group still has members (npx grandchildren) is safe to signal: Linux never reuses a pid while a
    // process group of that id exists.
    const ours = recorded.filter((c) => {
      if (!Number.isInteger(c.pid) || c.pid <= 1) return false;
      if (isPidAlive(c.pid)) return c.startTime === null || processStartTime(c.pid) === c.startTime;
      return isPidAlive(-c.pid);
    });
    for (const c of ours) {
      this.log.warn({ server: c.server, serverPid: c.pid }, "ending a server process left by a previous mcpd run");
      try {
        process.kill(-c.pid, "SIGTERM");
      } catch {
        /* group already gone */
      }
    }
    const deadline = Date.now() + graceMs;
    while (ours.some((c) => isPidAlive(-c.pid)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    for (const c of ours) {
      try {
        process.kill(-c.pid, "SIGKILL");
      } catch {
        /* gone */
      }
    }
    this.save();
    return ours.map((c) => c.pid);
  }
}
