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

/** The line filter of each root logger made by {@link createLogger}, set later by {@link setLogScrubber}. */
const scrubbers = new WeakMap<object, { scrub: ((line: string) => string) | undefined }>();

/** The daemon's root logger: JSON lines to `destination` (stderr in the foreground, the log file otherwise). */
export function createLogger(level: string, destination: Writable | NodeJS.WritableStream): PinoLogger {
  const slot: { scrub: ((line: string) => string) | undefined } = { scrub: undefined };
  const logger = pino(
    {
      level,
      base: { pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: "***" },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Path redaction cannot see a secret inside a message (a server's stderr line echoing its
      // --api-key, an error quoting a URL): every finished line also goes through the scrubber, if any.
      hooks: { streamWrite: (line: string) => (slot.scrub ? slot.scrub(line) : line) },
    },
    destination as Writable,
  );
  scrubbers.set(logger, slot);
  return logger;
}

/**
 * Makes every line that `logger` (a root logger from {@link createLogger}) and its children write pass
 * through `scrub` first. Returns false, and does nothing, for any other logger (silent ones, tests').
 */
export function setLogScrubber(logger: unknown, scrub: (line: string) => string): boolean {
  const slot = typeof logger === "object" && logger !== null ? scrubbers.get(logger) : undefined;
  if (!slot) return false;
  slot.scrub = scrub;
  return true;
}
