import type { Logger } from "@mcpd/protocol";
import type { LogLevel } from "../config/config-schema.js";
import { isSecretField, REDACTED } from "../secrets/index.js";
import { isoTime } from "./iso-time.js";
import { errorFields, printable, toLoggable } from "./loggable.js";
import { LEVEL_VALUES, type LevelName } from "./log-line-levels.js";

export { LEVEL_VALUES };

/**
 * Keys the line itself writes. A call's field of the same name is written as `_<name>` (`_pid`) rather
 * than twice; a `msg` field stands in for a missing message.
 */
const OWN_KEYS = new Set(["level", "time", "pid", "msg"]);

/**
 * What the root logger runs every finished line through: the line with secrets masked, or undefined when
 * it cannot be (the line is then dropped). `SecretScrubber.scrubValue` is one.
 */
export type LineScrubber = (line: string) => string | undefined;

/** Where finished lines go: the log file or the foreground stderr log. Never expected to throw. */
export interface LineSink {
  write(chunk: string): unknown;
}

/**
 * A shallow copy of `obj` whose secret fields ({@link isSecretField}: a strong secret name such as `token`,
 * `authorization`, `apiKey`, or `env`/`headers`), top level and one object down, are `***`; `obj` itself
 * when none is there. Applied by the root logger itself, so no caller can forget it. An error one level
 * down is first written as {@link errorFields}, so its own properties (`headers`, `token`, ...) are masked
 * as an object's are.
 */
function redacted(obj: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(obj)) {
    const value = obj[key];
    let next = value;
    if (isSecretField(key)) next = value === undefined ? undefined : REDACTED;
    else if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      const inner = value instanceof Error ? errorFields(value) : (value as Record<string, unknown>);
      if (inner !== value) next = inner;
      for (const k of Object.keys(inner)) {
        if (!isSecretField(k) || inner[k] === undefined) continue;
        if (next === value) next = { ...inner };
        (next as Record<string, unknown>)[k] = REDACTED;
      }
    }
    if (next !== value) {
      out ??= { ...obj };
      out[key] = next;
    }
  }
  return out ?? obj;
}

/** JSON.stringify's replacer for the fast path: errors as pino writes them, bigints as decimal strings. */
function replacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return errorFields(value);
  if (typeof value === "bigint") return value.toString();
  return value;
}

/** `fields` as JSON object members without the braces (`,"a":1,"b":2`), or "" for none. */
function members(fields: Record<string, unknown>): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(fields, replacer);
  } catch {
    // A cycle, a throwing getter or toJSON: the careful copy always serialises.
    json = JSON.stringify(toLoggable(fields));
  }
  return json === undefined || json.length <= 2 ? "" : `,${json.slice(1, -1)}`;
}

/**
 * The daemon's root logger: one JSON line per call (`{"level":30,"time":"<ISO>","pid":N,...fields,"msg":"..."}`,
 * pino's shape, levels from {@link LEVEL_VALUES}), written synchronously to a {@link LineSink}, with
 * secret fields masked (see {@link redacted}) and every finished line passed through the scrubber, if one is
 * set. Logging
 * never throws: a value JSON cannot hold (a cycle, a BigInt, a throwing getter) is written as far as it
 * can be, and a failing sink is the sink's concern (the daemon's sinks count what they drop).
 *
 * Why not pino: the daemon used one root logger of pino's, a sync destination and its redaction, and
 * paid for the rest at start-up (pino's twenty modules, `worker_threads` and `assert` for transports it
 * never used): about 0.8 MB of its resident memory, measured.
 */
export class JsonLogger implements Logger {
  private readonly min: number;
  /** `,"pid":N`: the base fields every line carries after its level and time. */
  private readonly base: string;
  private scrub: LineScrubber | undefined;

  constructor(
    level: LogLevel,
    private readonly sink: LineSink,
    pid: number = process.pid,
  ) {
    this.min = level === "silent" ? Number.POSITIVE_INFINITY : (LEVEL_VALUES[level] ?? LEVEL_VALUES.info);
    this.base = `,"pid":${pid}`;
  }

  /** Whether a call at `level` writes a line (callers skip building costly fields otherwise). */
  isLevelEnabled(level: LevelName): boolean {
    return LEVEL_VALUES[level] >= this.min;
  }

  /** Makes every later line pass through `scrub` (the daemon's SecretScrubber) before it is written. */
  setScrubber(scrub: LineScrubber): void {
    this.scrub = scrub;
  }

  trace(obj: object | string, msg?: string): void {
    if (LEVEL_VALUES.trace >= this.min) this.write(LEVEL_VALUES.trace, obj, msg);
  }

  debug(obj: object | string, msg?: string): void {
    if (LEVEL_VALUES.debug >= this.min) this.write(LEVEL_VALUES.debug, obj, msg);
  }

  info(obj: object | string, msg?: string): void {
    if (LEVEL_VALUES.info >= this.min) this.write(LEVEL_VALUES.info, obj, msg);
  }

  warn(obj: object | string, msg?: string): void {
    if (LEVEL_VALUES.warn >= this.min) this.write(LEVEL_VALUES.warn, obj, msg);
  }

  error(obj: object | string, msg?: string): void {
    if (LEVEL_VALUES.error >= this.min) this.write(LEVEL_VALUES.error, obj, msg);
  }

  fatal(obj: object | string, msg?: string): void {
    if (LEVEL_VALUES.fatal >= this.min) this.write(LEVEL_VALUES.fatal, obj, msg);
  }

  private write(level: number, obj: object | string | null | undefined, msg: string | undefined): void {
    let line: string;
    try {
      line = this.line(level, this.body(obj, msg));
    } catch (err) {
      // Only a hostile value gets here (a Proxy that throws on every trap): say so instead of the line.
      line = this.line(level, `,"msg":${JSON.stringify(`unloggable value: ${printable(err)}`)}`);
    }
    if (this.scrub) {
      let scrubbed: string | undefined;
      let why = "the scrubber could not mask it";
      try {
        scrubbed = this.scrub(line);
      } catch (err) {
        why = printable(err);
      }
      // The line may hold a secret the scrubber was to mask: it is not written, and that is said instead.
      line = scrubbed ?? this.line(level, `,"msg":${JSON.stringify(`a log line was dropped: scrubbing it failed: ${why}`)}`);
    }
    this.sink.write(line);
  }

  /** One finished line: level, time, the base fields, then `body` (JSON members, each led by a comma). */
  private line(level: number, body: string): string {
    return `{"level":${level},"time":"${isoTime(Date.now())}"${this.base}${body}}\n`;
  }

  /** The line after its base fields: the call's fields, then `msg`. */
  private body(obj: object | string | null | undefined, msg: string | undefined): string {
    if (typeof obj === "string") return `,"msg":${JSON.stringify(obj)}`;
    if (obj === null || obj === undefined) return msg === undefined ? "" : `,"msg":${JSON.stringify(msg)}`;
    if (obj instanceof Error) return `${members(redacted({ err: obj }))},"msg":${JSON.stringify(msg ?? printable(obj))}`;
    const fields = obj as Record<string, unknown>;
    let own: Record<string, unknown> = fields;
    for (const key of Object.keys(fields)) {
      if (!OWN_KEYS.has(key)) continue;
      if (own === fields) own = { ...fields };
      if (key !== "msg") own[`_${key}`] = fields[key];
      delete own[key];
    }
    // A `msg` field stands in for a missing message, as it does in pino.
    const message = msg ?? (typeof fields.msg === "string" ? fields.msg : undefined);
    const tail = message === undefined ? "" : `,"msg":${JSON.stringify(message)}`;
    return `${members(redacted(own))}${tail}`;
  }
}
