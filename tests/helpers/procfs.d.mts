/** Resident set size of `pid` (VmRSS of /proc/<pid>/status), in bytes; throws when it cannot be read. */
export function residentBytes(pid: number): number;
/** The open file descriptor numbers of `pid` (the entries of /proc/<pid>/fd), ascending; throws when it cannot be read. */
export function openFds(pid: number): number[];
