import { spawn, spawnSync } from "node:child_process";
import { closeSync, statSync, writeSync } from "node:fs";
import { open } from "node:fs/promises";
import { basename } from "node:path";
import { checkSocketPath, resolvePaths, type McpdPaths } from "@mcpd/client/paths";
import { PROTOCOL_DEFAULTS, quote } from "@mcpd/protocol/core";
import { readProcIdentity, type ProcIdentity } from "@mcpd/transports/procfs";
import { CliError } from "./args.js";
import { CLI_DEFAULTS, envTimeoutMs } from "./cli-defaults.js";
import type { CliContext } from "./context.js";
import { binPath } from "../infra/package-root.js";
import { fullStatus, isUntrustedSocket } from "./ask-daemon.js";
import { formatLogLine } from "./log-format.js";
import { holdsListeningSocket } from "../socket/socket-watch.js";
import { withAllocatorEnv } from "../infra/allocator-env.js";
import { daemonNodeFlags } from "../infra/node-flags.js";
import { openPrivateAppend, preparePrivateDir } from "../infra/state-dir.js";
import { readPrivateFile } from "../infra/private-file.js";
import { isoTime } from "../infra/iso-time.js";
import { isPidAlive } from "../infra/process-alive.js";

/** `MCPD_START_TIMEOUT_MS` when it is a positive integer, else {@link CLI_DEFAULTS.startTimeoutMs}. */
export function startTimeoutMs(env: NodeJS.ProcessEnv): number {
  return envTimeoutMs(env, "MCPD_START_TIMEOUT_MS", CLI_DEFAULTS.startTimeoutMs);
}

/** What answered on the socket. */
export interface RunningDaemon {
  pid: number;
  socketPath: string;
  version: string;
}

/**
 * Asks the socket who is there (its status); `undefined` when nothing answers within `connectTimeoutMs`.
 * @throws UntrustedSocketError (MCPD_UNTRUSTED_SOCKET) when the socket may be another user's: that is
 * not "nothing answers", and no daemon must be started or signalled on its account.
 */
export async function probeDaemon(ctx: CliContext, connectTimeoutMs = 2_000): Promise<RunningDaemon | undefined> {
  try {
    const s = await fullStatus(ctx, { connectTimeoutMs, timeoutMs: connectTimeoutMs * 2 });
    return { pid: s.daemon.pid, socketPath: s.daemon.socketPath, version: s.daemon.version };
  } catch (err) {
    if (isUntrustedSocket(err)) throw err;
    return undefined;
  }
}

/** Waits until `pid` is gone; resolves false when `timeoutMs` passes first. */
export async function waitGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isPidAlive(pid)) {
    if (Date.now() >= deadline) return false;
    await delay(CLI_DEFAULTS.pollMs);
  }
  return true;
}

/**
 * The pid in the pid file, when the file exists, is a regular file of the current user's (never a
 * symbolic link, never a FIFO waited on) and holds one.
 */
export function readPidFile(paths: McpdPaths): number | undefined {
  const read = readPrivateFile(paths.pidFile, { maxBytes: 64 });
  if (read.kind !== "file") return undefined;
  const pid = Number.parseInt(read.text.trim(), 10);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * Who runs `pid` and with what command line: /proc/<pid>/status and cmdline on Linux; `ps -o uid=,args=`
 * elsewhere (the effective uid twice). Undefined when it cannot tell.
 */
function processIdentity(pid: number): ProcIdentity | undefined {
  if (process.platform === "linux") return readProcIdentity(pid);
  const r = spawnSync("ps", ["-o", "uid=,args=", "-p", String(pid)], { encoding: "utf8", timeout: 5_000 });
  const m = /^\s*(\d+)\s+(.*)$/m.exec(r.stdout ?? "");
  if (r.status !== 0 || !m) return undefined;
  // ps joins the arguments with spaces: good enough to recognise mcpd's own command line.
  return { uids: [Number(m[1]), Number(m[1])], argv: (m[2] as string).trim().split(/\s+/) };
}

/** Whether `argv` is the daemon's command line: `[node] .../mcpd[.js] start ... --in-process|--foreground`. */
function isDaemonCommandLine(argv: readonly string[]): boolean {
  const bin = argv.findIndex((a) => basename(a) === "mcpd" || basename(a) === "mcpd.js");
  if (bin < 0 || argv[bin + 1] !== "start") return false;
  const flags = argv.slice(bin + 2);
  return flags.includes("--in-process") || flags.includes("--foreground");
}

/**
 * Why `pid` is not verified as the current user's mcpd daemon of `socketPath`, or `undefined` when it is.
 * `mcpd stop` signals only a verified pid: a stale pid file's pid may since belong to any process.
 * Verified: the process runs as the current user (real and effective uid) and either holds the
 * listening socket bound to `socketPath` (Linux) or runs the daemon's command line (`mcpd start
 * --in-process` or `--foreground`; a process that only mentions mcpd, such as `mcpd connect` or an
 * editor on mcpd's files, does not count).
 */
export function unverifiedDaemon(pid: number, socketPath: string): string | undefined {
  const id = processIdentity(pid);
  if (!id) return "cannot tell which user runs it or what it runs";
  const uid = process.getuid?.();
  if (uid !== undefined && (id.uids[0] !== uid || id.uids[1] !== uid)) {
    return `it runs as uid ${id.uids[0] !== uid ? id.uids[0] : id.uids[1]}, not as you (uid ${uid})`;
  }
  if (holdsListeningSocket(pid, socketPath) || isDaemonCommandLine(id.argv)) return undefined;
  const shown = id.argv.join(" ");
  return `it is not an mcpd daemon (its command line: ${quote(shown, PROTOCOL_DEFAULTS.quotedTextChars, "...")})`;
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** The log written since `offset` (or the end of the log, if it was rotated meanwhile), pretty-printed: errors and warnings first. */
export async function logSince(logFile: string, offset: number): Promise<string[]> {
  let text = "";
  try {
    const fh = await open(logFile, "r");
    try {
      const size = (await fh.stat()).size;
      const start = size >= offset ? offset : Math.max(0, size - CLI_DEFAULTS.failureLogBytes);
      const len = Math.min(size - start, CLI_DEFAULTS.failureLogBytes);
      const buf = Buffer.alloc(len);
      await fh.read(buf, 0, len, size - len);
      text = buf.toString("utf8");
    } finally {
      await fh.close();
    }
  } catch {
    return [];
  }
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  const important = lines.filter((l) => {
    try {
      const level = (JSON.parse(l) as { level?: unknown }).level;
      return typeof level !== "number" || level >= 40;
    } catch {
      return true;
    }
  });
  return (important.length > 0 ? important : lines).slice(-CLI_DEFAULTS.failureLogLines).map((l) => formatLogLine(l));
}

/** Options of {@link ensureDaemon}. */
export interface EnsureDaemonOptions {
  configFile?: string;
  logLevel?: string;
  timeoutMs?: number;
}

/** The outcome of {@link ensureDaemon}. */
export interface EnsureDaemonResult {
  started: boolean;
  pid: number;
  socketPath: string;
  logFile: string;
}

/**
 * Appends a warning to the daemon's log in its own line format, so `mcpd logs` shows it (the daemon then
 * finds the directory made private already, and has nothing to say). A log that cannot be written loses it.
 */
function logNote(fd: number, fields: { dir: string; msg: string }): void {
  try {
    writeSync(fd, `${JSON.stringify({ level: 40, time: isoTime(Date.now()), pid: process.pid, ...fields })}\n`);
  } catch {
    // The daemon's own output reports a log it cannot write.
  }
}

/**
 * Makes sure a daemon answers on the socket: when none does, starts one detached (`mcpd start
 * --in-process` in a new session, stdout/stderr appended to the log file, unref'd) and waits until its
 * socket answers.
 * @throws CliError (exit 1) with the reason from the daemon's log when it exits or does not answer in time;
 *   StateDirError (MCPD_UNSAFE_STATE_DIR) when the state directory is not the user's own or the log file is
 *   a symbolic link (nothing is started then).
 */
export async function ensureDaemon(ctx: CliContext, options: EnsureDaemonOptions = {}): Promise<EnsureDaemonResult> {
  const paths = resolvePaths(ctx.env, { cwd: ctx.cwd, ...(options.configFile ? { configFile: options.configFile } : {}) });
  const running = await probeDaemon(ctx);
  if (running) return { started: false, pid: running.pid, socketPath: running.socketPath, logFile: paths.logFile };

  const tooLong = checkSocketPath(paths.socketPath);
  if (tooLong) throw new CliError(tooLong);
  // The daemon's output goes to its log file, opened here: the directory is checked first, as the daemon
  // checks it, and the file is never opened through a symbolic link (another user's directory could
  // hold one pointing at a file of ours).
  const note = preparePrivateDir(paths.stateDir, "state directory");
  const offset = fileSize(paths.logFile);
  // The daemon's node flags go before the script, where node reads them (see node-flags.ts).
  const args = [...daemonNodeFlags(ctx.env), binPath(), "start", "--in-process"];
  // The file resolved here, not the raw flag: the daemon's working directory is not ours.
  if (options.configFile) args.push("--config", paths.configFile);
  if (options.logLevel) args.push("--log-level", options.logLevel);
  const fd = openPrivateAppend(paths.logFile);
  if (note) logNote(fd, { dir: paths.stateDir, msg: note });
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let spawnError: Error | undefined;
  let pid: number | undefined;
  try {
    // The allocator settings let the daemon's memory return near its baseline after a load (see there).
    const child = spawn(process.execPath, args, {
      detached: true,
      stdio: ["ignore", fd, fd],
      env: withAllocatorEnv(ctx.env),
      cwd: ctx.cwd,
    });
    pid = child.pid;
    child.once("error", (err) => (spawnError = err));
    child.once("exit", (code, signal) => (exited = { code, signal }));
    child.unref();
  } finally {
    closeSync(fd);
  }

  const timeoutMs = options.timeoutMs ?? startTimeoutMs(ctx.env);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const up = await probeDaemon(ctx, 1_000);
    if (up) return { started: up.pid === pid, pid: up.pid, socketPath: up.socketPath, logFile: paths.logFile };
    if (spawnError) throw new CliError(`cannot start the daemon: ${spawnError.message}`);
    if (exited) {
      // A daemon started at the same moment by someone else wins the socket; ours exits. That is success.
      const other = await probeDaemon(ctx);
      if (other) return { started: false, pid: other.pid, socketPath: other.socketPath, logFile: paths.logFile };
      const how = exited.signal ? `was killed by ${exited.signal}` : `exited with code ${exited.code}`;
      throw new CliError(
        failureMessage(`the daemon ${how} before its socket answered`, await logSince(paths.logFile, offset), paths.logFile),
      );
    }
    if (Date.now() >= deadline) {
      const why =
        `the daemon (pid ${pid}) did not answer on ${paths.socketPath} within ${timeoutMs} ms; ` +
        "it may still be starting (see 'mcpd status')";
      throw new CliError(failureMessage(why, await logSince(paths.logFile, offset), paths.logFile));
    }
    await delay(CLI_DEFAULTS.pollMs * 2);
  }
}

function failureMessage(what: string, lines: string[], logFile: string): string {
  if (lines.length === 0) return `${what}; its log (${logFile}) says nothing more`;
  return `${what}. From ${logFile}:\n${lines.map((l) => `  ${l}`).join("\n")}`;
}
