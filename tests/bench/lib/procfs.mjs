/**
 * Reading processes from /proc (Linux): resident memory, CPU time, and process trees, so footprints are
 * measured from outside the processes, the way `ps` would.
 */
import { readdirSync, readFileSync } from "node:fs";
import { residentBytes } from "../../helpers/procfs.mjs";

/** Clock ticks per second of /proc/<pid>/stat CPU times (USER_HZ, 100 on every Linux we run on). */
const TICKS_PER_SEC = 100;

function statFields(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may contain spaces and parentheses: fields start after the last ')'.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** Resident set size of `pid` in KiB (VmRSS, read by the tests' own helper), or 0 when it is gone or a zombie. */
export function rssKb(pid) {
  try {
    return residentBytes(pid) / 1024;
  } catch {
    return 0;
  }
}

/** User + system CPU time `pid` has used so far, in ms (10 ms resolution). */
export function cpuMs(pid) {
  const f = statFields(pid);
  if (!f) return 0;
  // Fields after the name: state(0) ppid(1) ... utime(11) stime(12).
  return ((Number(f[11]) + Number(f[12])) * 1000) / TICKS_PER_SEC;
}

/** Every live (non-zombie) process as pid -> ppid. */
export function processTable() {
  const table = new Map();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const f = statFields(name);
    if (!f || f[0] === "Z" || f[0] === "X") continue;
    table.set(Number(name), Number(f[1]));
  }
  return table;
}

/** `pid` and all its live descendants. */
export function processTree(pid, table = processTable()) {
  const children = new Map();
  for (const [p, pp] of table) {
    if (!children.has(pp)) children.set(pp, []);
    children.get(pp).push(p);
  }
  const out = [];
  const stack = table.has(pid) ? [pid] : [];
  while (stack.length) {
    const p = stack.pop();
    out.push(p);
    for (const c of children.get(p) ?? []) stack.push(c);
  }
  return out;
}

/**
 * Processes and summed RSS of the trees rooted at `roots` (each process counted once).
 * Detached children (process groups of their own) are still children by ppid, so they count.
 */
export function treeFootprint(roots) {
  const table = processTable();
  const pids = new Set();
  for (const r of roots) for (const p of processTree(r, table)) pids.add(p);
  let kb = 0;
  for (const p of pids) kb += rssKb(p);
  return { processes: pids.size, rssMb: kb / 1024, pids: [...pids] };
}
