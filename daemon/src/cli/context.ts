import { palette, useColour, type Palette } from "./format.js";
import type { CommandSpec, ParsedCommand } from "./args.js";
import { terminalJson, terminalText } from "./terminal-text.js";

/**
 * Everything a command touches outside itself: streams, environment, working directory, platform.
 * `main` builds it from the process; it is one object so that a command's inputs are visible at a glance.
 */
export interface CliContext {
  env: NodeJS.ProcessEnv;
  cwd: string;
  platform: NodeJS.Platform;
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  /** Colours for stdout (off unless stdout is a TTY and NO_COLOR is unset). */
  out: Palette;
  /** Colours for stderr. */
  err: Palette;
}

/** A command: its accepted arguments and what it does. `run` resolves with the exit code. */
export interface Command {
  spec: CommandSpec;
  run(ctx: CliContext, args: ParsedCommand): Promise<number>;
}

/** The context of the running process. */
export function processContext(): CliContext {
  const stdout = process.stdout;
  const stderr = process.stderr;
  // A reader that went away (`mcpd http | head -1`) is the reader's choice, not a failure to report with
  // a stack trace: the command ends quietly. (Nothing else can be written there anyway.)
  for (const stream of [stdout, stderr]) {
    if (stream.listenerCount("error") === 0)
      stream.on("error", (err: NodeJS.ErrnoException) => process.exit(err.code === "EPIPE" ? (process.exitCode ?? 0) : 1));
  }
  return {
    env: process.env,
    cwd: process.cwd(),
    platform: process.platform,
    // Made on first use: building process.stdin costs a few ms of start-up (a stream over the fd, and the
    // stream modules behind it), and only `mcpd connect` reads it.
    get stdin(): NodeJS.ReadableStream {
      return process.stdin;
    },
    stdout,
    stderr,
    out: palette(useColour(stdout, process.env)),
    err: palette(useColour(stderr, process.env)),
  };
}

/** Writes a line to stdout. */
export function println(ctx: CliContext, text = ""): void {
  ctx.stdout.write(`${text}\n`);
}

/** Writes `value` to stdout as indented JSON, safe on a terminal ({@link terminalJson}): the `--json` forms. */
export function printJson(ctx: CliContext, value: unknown): void {
  println(ctx, terminalJson(value));
}

/**
 * Writes a line to stderr, prefixed `mcpd: `. Errors quote remote text (a server's error, an authorization
 * server's `error_description`), so control characters are shown escaped ({@link terminalText}).
 */
export function eprintln(ctx: CliContext, text: string): void {
  ctx.stderr.write(`mcpd: ${terminalText(text)}\n`);
}
