import { pino, type DestinationStream, type LogFn } from "pino";
import type { LogLevel } from "../config/config-schema.js";
import { REDACTED } from "../secrets/index.js";
import type { DaemonLogger } from "./daemon-logger.js";
import { isoTime } from "./iso-time.js";
import { logFields, printable, serializeError } from "./log-fields.js";

export { LEVEL_VALUES } from "./log-line-levels.js";

/**
 * What the root logger runs every finished line through: the line with secrets masked, or undefined when
 * it cannot be (the line is then dropped). `SecretScrubber.scrubValue` is one.
 */
export type LineScrubber = (line: string) => string | undefined;

/**
 * The known secret paths pino's `redact` masks on the root logger: the fields the daemon's code logs that
 * hold secrets or records of them, and where an HTTP library's error keeps the request it made (`err.config.
 * headers`), deeper than the name rule of {@link logFields} looks (two levels: any field with a secret's
 * name, top level or one object down). A known secret value anywhere in a line is the scrubber's.
 * No path starts with `*`: pino would then run every object field of every line through its redactor.
 */
export const REDACT_PATHS: readonly string[] = [
  ...["env", "headers", "authorization", "token", "accessToken", "refreshToken", "clientSecret", "password", "secret", "apiKey"],
  ...["config", "request", "options"].flatMap((holder) => [`err.${holder}.headers`, `err.${holder}.env`]),
];

/** The root logger and the one setting that comes after it is made. */
export interface RootLogger {
  readonly log: DaemonLogger;
  /** Makes every later line pass through `scrub` (the daemon's SecretScrubber) before it is written. */
  setScrubber(scrub: LineScrubber): void;
}

/**
 * The line written instead of one the scrubber could not mask (it threw, or had no answer): the line may
 * hold the very secret it was to mask.
 */
function droppedLine(line: string, why: string, pid: number): string {
  const level = /^\{"level":(\d+)/.exec(line)?.[1] ?? "50";
  const msg = JSON.stringify(`a log line was dropped: scrubbing it failed: ${why}`);
  return `{"level":${level},"time":"${isoTime(Date.now())}","pid":${pid},"msg":${msg}}\n`;
}

/**
 * Every log call goes through here (pino's `logMethod` hook). A `msg` field yields to the message given
 * with it (pino would write both). A call that cannot be made (only a hostile value gets here: a Proxy
 * that throws on every trap, a getter pino reads) writes a line saying so instead of throwing into the
 * caller.
 */
function logCall(this: pino.Logger, args: Parameters<LogFn>, method: LogFn): void {
  try {
    const [obj, msg] = args as unknown[];
    if (typeof msg === "string" && typeof obj === "object" && obj !== null && "msg" in obj) {
      const { msg: _field, ...rest } = obj as Record<string, unknown>;
      (args as unknown[])[0] = rest;
    }
    method.apply(this, args);
  } catch (err) {
    method.call(this, `unloggable value: ${printable(err)}`);
  }
}

/**
 * The daemon's root logger: pino, one JSON line per call (`{"level":30,"time":"<ISO>","pid":N,...fields,
 * "msg":"..."}`) to `destination` (the log file or the foreground stderr log). Secrets are masked on the
 * root, so no child can forget it: pino's `redact` for {@link REDACT_PATHS}, {@link logFields} as its
 * `formatters.log` for any other field with a secret's name, and each finished line through the scrubber
 * set with {@link RootLogger.setScrubber} (pino's `streamWrite` hook: it sees the message and the child's
 * bindings too, so a configured secret nested anywhere is masked). Timestamps come from {@link isoTime}
 * (pino's `isoTime` would open ICU's time-zone data). Logging never throws.
 */
export function createRootLogger(level: LogLevel, destination: DestinationStream, pid: number = process.pid): RootLogger {
  let scrub: LineScrubber | undefined;
  const streamWrite = (line: string): string => {
    if (scrub === undefined) return line;
    let out: string | undefined;
    let why = "the scrubber could not mask it";
    try {
      out = scrub(line);
    } catch (err) {
      why = printable(err);
    }
    return out ?? droppedLine(line, why, pid);
  };
  const log = pino(
    {
      level,
      base: { pid },
      timestamp: () => `,"time":"${isoTime(Date.now())}"`,
      redact: { paths: [...REDACT_PATHS], censor: REDACTED },
      serializers: { err: serializeError },
      formatters: { log: logFields },
      hooks: { logMethod: logCall, streamWrite },
    },
    destination,
  );
  return {
    log,
    setScrubber(next) {
      scrub = next;
    },
  };
}
