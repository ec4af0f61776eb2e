import type { McpdPaths } from "@mcpd/client";
import type { LogLevel } from "../config/index.js";
import { RUNTIME_DEFAULTS } from "../defaults.js";
import type { DaemonLogger } from "../infra/daemon-logger.js";
import { RotatingFileStream, type LogWriteStatus } from "../infra/log-file.js";
import { createRootLogger, type LineScrubber } from "../infra/logger.js";
import { StderrLog, ignoreStdioErrors, unblockTerminal } from "../infra/stderr-log.js";

/**
 * The daemon's log: the root logger (pino) and where its lines go, the stderr log in the foreground or the
 * log file. What the file's asynchronous writer holds is written at exit and after a crash's fatal line:
 * an uncaught exception (or unhandled rejection) is logged at `fatal` (pino then flushes the
 * destination synchronously) before Node reports it and exits, so the lines that explain a crash are on
 * disk. {@link close} (at shutdown) removes those hooks.
 */
export class DaemonLog {
  readonly root: DaemonLogger;
  readonly sink: RotatingFileStream | StderrLog;
  private readonly scrubbing: (scrub: LineScrubber) => void;
  private readonly onExit = (): void => this.sink.flushSync();
  private readonly onCrash = (err: unknown, origin: string): void => this.root.fatal({ err, origin }, "mcpd crashed");

  constructor(root: { log: DaemonLogger; setScrubber(scrub: LineScrubber): void }, sink: RotatingFileStream | StderrLog) {
    this.root = root.log;
    this.sink = sink;
    this.scrubbing = (scrub) => root.setScrubber(scrub);
    process.on("exit", this.onExit);
    // A monitor, not a handler: the crash still ends the process, as it would have.
    process.on("uncaughtExceptionMonitor", this.onCrash);
  }

  /** Makes every later line pass through `scrub` (the daemon's SecretScrubber) before it is written. */
  setScrubber(scrub: LineScrubber): void {
    this.scrubbing(scrub);
  }

  /** Sets the root logger's level; children without a level of their own follow it. */
  setLevel(level: LogLevel): void {
    if (this.root.level !== level) this.root.level = level;
  }

  /** Stops logging (the daemon has stopped): what is held is written and the file closed. */
  close(): Promise<void> {
    process.off("exit", this.onExit);
    process.off("uncaughtExceptionMonitor", this.onCrash);
    return this.sink.close();
  }
}

/**
 * Opens the daemon's log: JSON lines to stderr in the foreground (falling back to the log file once stderr
 * cannot be written: a closed terminal, a pipe whose reader left), to the rotating log file otherwise.
 * Stdio errors (EPIPE on a closed terminal) never end the daemon.
 */
export function openDaemonLog(paths: McpdPaths, foreground: boolean, level: LogLevel): DaemonLog {
  ignoreStdioErrors();
  // The root logger is made below; the sinks call back into it only later, once lines are written.
  let root: DaemonLogger | undefined;
  const onResume = (s: LogWriteStatus): void =>
    root?.warn(
      { dropped: s.droppedLines, err: s.lastError },
      "the log could not be written for a while; what was held is written now, the lines past the bound were dropped",
    );
  const openLogFile = (): RotatingFileStream =>
    new RotatingFileStream(paths.logFile, {
      maxBytes: RUNTIME_DEFAULTS.logFileMaxBytes,
      maxFiles: RUNTIME_DEFAULTS.logFileMaxFiles,
      maxHeldBytes: RUNTIME_DEFAULTS.logHeldMaxBytes,
      retryMs: RUNTIME_DEFAULTS.logRetryMs,
      onResume,
    });
  if (foreground) unblockTerminal();
  const sink = foreground
    ? new StderrLog(2, {
        openFallback: openLogFile,
        onResume,
        maxHeldBytes: RUNTIME_DEFAULTS.logHeldMaxBytes,
        closeWaitMs: RUNTIME_DEFAULTS.stderrCloseWaitMs,
        onFallback: (err) => root?.warn({ err }, `stderr cannot be written; logging to ${paths.logFile} from now on`),
      })
    : openLogFile();
  const made = createRootLogger(level, sink);
  root = made.log;
  return new DaemonLog(made, sink);
}
