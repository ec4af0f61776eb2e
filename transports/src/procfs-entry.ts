/**
 * @mcpd/transports/procfs: the reader of Linux's /proc/<pid> files (a process's state, group, start time,
 * uids and command line), without the transports themselves: for processes that must start fast (`mcpd
 * stop` checks a pid with it). Every export is also exported by the package's index. Every export of this
 * file is public API.
 */
export * from "./procfs.js";
