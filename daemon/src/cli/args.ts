import { parseArgs } from "node:util";

/**
 * Exit codes of the `mcpd` command (documented in docs/operations.md).
 * 130 is the shell's convention for "ended by SIGINT" (128 + 2).
 */
export const ExitCode = {
  Ok: 0,
  Failure: 1,
  Usage: 2,
  NotRunning: 3,
  Interrupted: 130,
} as const;

/** A mistake in how the command was invoked. `main` prints it with a hint and exits 2. */
export class UsageError extends Error {
  override name = "UsageError";
  /** The command whose help the hint points at, when known. */
  readonly command: string | undefined;
  constructor(message: string, command?: string) {
    super(message);
    this.command = command;
  }
}

/** A failure the command already explained; `main` prints the message and exits with `exitCode`. */
export class CliError extends Error {
  override name = "CliError";
  readonly exitCode: number;
  constructor(message: string, exitCode: number = ExitCode.Failure) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** One option of a command, as `node:util` parseArgs takes it, plus a help line. */
export interface OptionSpec {
  type: "boolean" | "string";
  short?: string;
  multiple?: boolean;
  /** Placeholder shown in help for string options, e.g. `FILE`. */
  value?: string;
  description: string;
}

/** The accepted shape of one command: its options and how many positionals it takes. */
export interface CommandSpec {
  name: string;
  /** Usage line after `mcpd `, e.g. `call SERVER TOOL [JSON] [options]`. */
  usage: string;
  summary: string;
  options: Record<string, OptionSpec>;
  /** Inclusive bounds on positional arguments. */
  minPositionals: number;
  maxPositionals: number;
  /** Extra help text (examples, notes), shown after the options. */
  details?: string;
  /** Hidden from `mcpd help` (internal flags still parse). */
  hidden?: boolean;
}

/** The result of {@link parseCommand}: option values by long name, and positionals. */
export interface ParsedCommand {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

/** Every command accepts `--help`/`-h`. */
const HELP_OPTION: OptionSpec = { type: "boolean", short: "h", description: "Show this help" };

/**
 * Parses a command's arguments (everything after the command name) strictly.
 * @throws UsageError for an unknown option, a missing option value, or a wrong number of positionals.
 */
export function parseCommand(spec: CommandSpec, argv: string[]): ParsedCommand {
  const options: Record<string, { type: "boolean" | "string"; short?: string; multiple?: boolean }> = {
    help: { type: HELP_OPTION.type, short: "h" },
  };
  for (const [name, o] of Object.entries(spec.options)) {
    options[name] = { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) };
  }
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(describeParseError(err), spec.name);
  }
  const values = parsed.values as ParsedCommand["values"];
  if (values.help) return { values, positionals: parsed.positionals };
  const n = parsed.positionals.length;
  if (n < spec.minPositionals) {
    throw new UsageError(`missing argument: usage: mcpd ${spec.usage}`, spec.name);
  }
  if (n > spec.maxPositionals) {
    const extra = parsed.positionals.slice(spec.maxPositionals).join(" ");
    throw new UsageError(`unexpected argument${n - spec.maxPositionals > 1 ? "s" : ""}: ${extra}`, spec.name);
  }
  return { values, positionals: parsed.positionals };
}

/** Turns parseArgs' Node-flavoured messages into short ones that name the option. */
function describeParseError(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: string }).code;
  const unknown = /Unknown option '([^']+)'/.exec(message);
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && unknown) return `unknown option ${unknown[1]}`;
  const missing = /Option '([^']+)' argument missing/.exec(message);
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && missing)
    return `option ${missing[1].replace(/^-., /, "").replace(/ <value>$/, "")} needs a value`;
  return message.split("\n")[0] ?? message;
}

/**
 * Reads a positive integer option (`-n 50`, `--timeout 5000`).
 * @throws UsageError naming the option when the value is not a positive integer.
 */
export function intOption(values: ParsedCommand["values"], name: string, command: string, fallback: number): number;
export function intOption(values: ParsedCommand["values"], name: string, command: string): number | undefined;
export function intOption(values: ParsedCommand["values"], name: string, command: string, fallback?: number): number | undefined {
  const raw = values[name];
  if (raw === undefined) return fallback;
  if (typeof raw !== "string" || !/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw)) || Number(raw) <= 0) {
    throw new UsageError(`--${name} needs a positive integer, got ${JSON.stringify(raw)}`, command);
  }
  return Number(raw);
}

/**
 * Reads a count option that may be 0 (`-n 0`, like `tail -n 0`).
 * @throws UsageError naming the option when the value is not a non-negative integer.
 */
export function countOption(values: ParsedCommand["values"], name: string, command: string, fallback: number): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  if (typeof raw !== "string" || !/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
    throw new UsageError(`--${name} needs a whole number (0 or more), got ${JSON.stringify(raw)}`, command);
  }
  return Number(raw);
}

/** Reads a string option that may be absent. */
export function stringOption(values: ParsedCommand["values"], name: string): string | undefined {
  const raw = values[name];
  return typeof raw === "string" ? raw : undefined;
}

/**
 * Builds tool-call arguments from `--arg key=value` pairs. A value that parses as JSON is used as
 * parsed (`n=3` -> 3, `tags=["a"]` -> array, `ok=true` -> true); anything else is the raw string.
 * @throws UsageError for a pair without `=` or with an empty key.
 */
export function parseArgPairs(pairs: string[], command = "call"): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new UsageError(`--arg needs key=value, got ${JSON.stringify(pair)}`, command);
    const key = pair.slice(0, eq);
    const raw = pair.slice(eq + 1);
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      // Not JSON: the value is the string as typed (`--arg q=hello world`).
    }
    out[key] = value;
  }
  return out;
}

/**
 * Parses the JSON object given as the arguments of `mcpd call`.
 * @throws UsageError when it is not JSON or not an object.
 */
export function parseJsonArguments(text: string, command = "call"): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`arguments are not valid JSON: ${(err as Error).message}`, command);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new UsageError('arguments must be a JSON object, e.g. \'{"path": "/tmp"}\'', command);
  }
  return value as Record<string, unknown>;
}
