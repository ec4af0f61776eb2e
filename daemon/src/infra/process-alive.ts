import { isDeadState, readProcStat } from "@mcpd/transports/procfs";

/**
 * Whether `pid` is a live process; a negative `pid` asks about the process group `-pid`.
 *
 * The answer is `process.kill(pid, 0)`'s: no error, or EPERM (the process exists but belongs to another
 * user), means alive; ESRCH means gone. On Linux, a process that answers is then checked in
 * /proc/<pid>/stat: a zombie (state Z or X: killed, only waiting to be reaped, which PID 1 in many
 * containers never does) is dead. When /proc cannot be read (not Linux, /proc mounted with `hidepid`, a
 * group id, or the process just went away) the probe's answer stands: alive, and the next look decides.
 */
export function isPidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  // Groups have no /proc entry: the probe stands for them.
  if (pid < 0 || process.platform !== "linux") return true;
  const stat = readProcStat(pid);
  return stat === undefined || !isDeadState(stat.state);
}
