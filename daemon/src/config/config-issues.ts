import { quote } from "@mcpd/protocol";

/**
 * Collects the errors and warnings found while validating one config file, each as one self-contained
 * line: `<file>: <where>: <what>`, e.g. `/home/a/.config/mcpd/config.json: server "github": "timeout"
 * must be a positive integer (milliseconds), got "abc"`.
 */
export class ConfigIssues {
  readonly errors: string[] = [];
  readonly warnings: string[] = [];

  constructor(readonly file: string) {}

  /** `where` names the place: `server "github"`, `"mcpd.defaults"`, or "" for the whole file. */
  error(where: string, message: string): void {
    this.errors.push(this.line(where, message));
  }

  warn(where: string, message: string): void {
    this.warnings.push(this.line(where, message));
  }

  private line(where: string, message: string): string {
    return where ? `${this.file}: ${where}: ${message}` : `${this.file}: ${message}`;
  }
}

/** How long a bad value's rendering in a config error may be, in characters: config lines stay one short line each. */
const DESCRIBED_VALUE_CHARS = 60;

/** A short, printable rendering of a bad value for "got ..." (strings quoted, long values cut). */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return value.length === 0 ? "an empty array" : `an array (${cut(JSON.stringify(value))})`;
  if (typeof value === "object") return `an object (${cut(JSON.stringify(value))})`;
  return cut(JSON.stringify(value));
}

/** At most {@link DESCRIBED_VALUE_CHARS} characters, `...` included. */
function cut(s: string): string {
  return s.length > DESCRIBED_VALUE_CHARS ? quote(s, DESCRIBED_VALUE_CHARS - 3, "...") : s;
}

/** True for `{...}` objects (not arrays, not null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
