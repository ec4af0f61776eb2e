import type { McpdPaths } from "@mcpd/client";
import type { LogLevel } from "../config/index.js";
import { RUNTIME_DEFAULTS } from "../defaults.js";
import { RotatingFileStream, type LogWriteStatus } from "../infra/log-file.js";
import { JsonLogger } from "../infra/logger.js";
import { StderrLog, ignoreStdioErrors } from "../infra/stderr-log.js";

/** The daemon's log: the root logger and where its lines go. */
export interface DaemonLog {
  root: JsonLogger;
  sink: RotatingFileStream | StderrLog;
}

/**
 * Opens the daemon's log: JSON lines to stderr in the foreground (falling back to the log file once stderr
 * cannot be written: a closed terminal, a pipe whose reader left), to the rotating log file otherwise.
 * Stdio errors (EPIPE on a closed terminal) never end the daemon.
 */
export function openDaemonLog(paths: McpdPaths, foreground: boolean, level: LogLevel): DaemonLog {
  ignoreStdioErrors();
  // The root logger is made below; the sinks call back into it only later, once lines are written.
  let root: JsonLogger | undefined;
  const onResume = (s: LogWriteStatus): void =>
    root?.warn({ dropped: s.droppedLines, err: s.lastError }, "the log could not be written for a while; lines were dropped");
  const openLogFile = (): RotatingFileStream =>
    new RotatingFileStream(paths.logFile, {
      maxBytes: RUNTIME_DEFAULTS.logFileMaxBytes,
      maxFiles: RUNTIME_DEFAULTS.logFileMaxFiles,
      onResume,
    });
  const sink = foreground
    ? new StderrLog(process.stderr, {
        openFallback: openLogFile,
        onFallback: (err) => root?.warn({ err }, `stderr cannot be written; logging to ${paths.logFile} from now on`),
      })
    : openLogFile();
  root = new JsonLogger(level, sink);
  return { root, sink };
}
