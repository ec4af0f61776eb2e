import { pino, type Logger as PinoLogger } from "pino";
import type { Writable } from "node:stream";

/**
 * Paths pino redacts on every log line: environment values, headers (Authorization, API keys), tokens.
 * Redaction is set once here, on the root logger, so no child logger can forget it.
 */
export const REDACT_PATHS = [
  "env",
  "*.env",
  "headers",
  "*.headers",
  "*.authorization",
  "*.Authorization",
  "token",
  "*.token",
  "password",
  "*.password",
  "secret",
  "*.secret",
];

/** The daemon's root logger: JSON lines to `destination` (stderr in the foreground, the log file otherwise). */
export function createLogger(level: string, destination: Writable | NodeJS.WritableStream): PinoLogger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: "***" },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination as Writable,
  );
}
