import { readFileSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";

/**
 * The one reader of Linux's per-process files under /proc: `stat` (state, parent, process group, start
 * time), `status` (uids) and `cmdline`. Every reader answers `undefined` when the file cannot be read (not
 * Linux, the process is gone, /proc mounted with `hidepid`) or does not parse; callers decide what that
 * means. It never throws.
 */

/** What /proc/<pid>/stat says of a process. */
export interface ProcStat {
  /** One letter: R running, S sleeping, D disk wait, Z zombie, X dead, T stopped, ... ({@link isDeadState}). */
  state: string;
  ppid: number;
  /** The process group. */
  pgrp: number;
  /**
   * When the process started, in clock ticks after boot (field 22), as the kernel writes it: compared to
   * tell a reused pid from the process it once was, never computed with.
   */
  startTime: string;
}

/** Fields of /proc/<pid>/stat after the command name, up to the start time (field 22 is the 20th). */
const FIELDS_TO_START_TIME = 20;

/**
 * Parses the text of /proc/<pid>/stat: `pid (comm) state ppid pgrp ... starttime ...`. `comm` is the name
 * the process gave itself and may hold spaces and parentheses, so the fields are those after the last `)`.
 * Undefined when the text is not such a line.
 */
export function parseProcStat(text: string): ProcStat | undefined {
  const close = text.lastIndexOf(")");
  if (close < 0) return undefined;
  const fields = text.slice(close + 2).split(" ", FIELDS_TO_START_TIME);
  if (fields.length < FIELDS_TO_START_TIME) return undefined;
  return {
    state: fields[0] as string,
    ppid: Number(fields[1]),
    pgrp: Number(fields[2]),
    startTime: fields[FIELDS_TO_START_TIME - 1] as string,
  };
}

/** True for the states of a process that is only waiting to be reaped (Z, zombie) or gone (X, dead). */
export function isDeadState(state: string): boolean {
  return state === "Z" || state === "X";
}

/** /proc/<pid>/stat of `pid`, read synchronously; undefined when it cannot be read or parsed. */
export function readProcStat(pid: number): ProcStat | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return undefined;
  }
}

/** {@link readProcStat} without blocking: for scans of every process ({@link listProcPids}). */
export async function readProcStatAsync(pid: number): Promise<ProcStat | undefined> {
  try {
    return parseProcStat(await readFile(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return undefined;
  }
}

/** The pids of every process /proc lists; undefined when /proc cannot be read. */
export async function listProcPids(): Promise<number[] | undefined> {
  let entries: string[];
  try {
    entries = await readdir("/proc");
  } catch {
    return undefined;
  }
  const pids: number[] = [];
  for (const name of entries) {
    const c = name.charCodeAt(0);
    if (c >= 48 && c <= 57) pids.push(Number(name));
  }
  return pids;
}

/** Who runs a process and with what command line, as /proc says. */
export interface ProcIdentity {
  /** Real and effective uid. */
  uids: [number, number];
  /** The command line, one element per argument. */
  argv: string[];
}

/** The uids (/proc/<pid>/status) and command line (/proc/<pid>/cmdline) of `pid`; undefined when unreadable. */
export function readProcIdentity(pid: number): ProcIdentity | undefined {
  try {
    const m = /^Uid:\s+(\d+)\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    if (!m) return undefined;
    const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8")
      .split("\0")
      .filter((a) => a !== "");
    return { uids: [Number(m[1]), Number(m[2])], argv };
  } catch {
    return undefined;
  }
}
