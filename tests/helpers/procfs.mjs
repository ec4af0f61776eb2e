/**
 * A process's resident memory and open file descriptors, read from /proc (Linux). Plain JavaScript so
 * the soak scripts (run by node without a TypeScript step) share it with the vitest tests, which import
 * it through tests/helpers/process.ts. Both throw, naming the pid, when the process cannot be read.
 */
import { readdirSync, readFileSync } from "node:fs";

/**
 * Resident set size of `pid` (VmRSS of /proc/<pid>/status), in bytes.
 * @param {number} pid
 * @returns {number}
 */
export function residentBytes(pid) {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]) * 1024;
}

/**
 * The open file descriptor numbers of `pid` (the entries of /proc/<pid>/fd), ascending.
 * @param {number} pid
 * @returns {number[]}
 */
export function openFds(pid) {
  return readdirSync(`/proc/${pid}/fd`)
    .map(Number)
    .sort((a, b) => a - b);
}
