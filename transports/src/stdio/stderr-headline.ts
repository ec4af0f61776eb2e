/** How far back from the end of a process's stderr the line that names its error is looked for. */
const HEADLINE_SCAN_LINES = 40;

/**
 * A line that states an error the way runtimes print an uncaught one: `Error: ...`,
 * `TypeError [ERR_X]: ...`, `ValueError: ...`, `pkg.SomeException: ...`.
 */
const ERROR_LINE = /^(?:[A-Za-z_$][\w$]*\.)*[A-Za-z_$]*(?:Error|Exception)(?: \[[\w.-]+\])?: \S/;

/** The last line among the last 40 that states an error (trimmed), or undefined. */
export function stderrErrorLine(lines: readonly string[]): string | undefined {
  for (let i = lines.length - 1, seen = 0; i >= 0 && seen < HEADLINE_SCAN_LINES; i--, seen++) {
    const line = (lines[i] as string).trim();
    if (ERROR_LINE.test(line)) return line;
  }
  return undefined;
}

/** The last line that is not blank (trimmed), or undefined. */
export function lastStderrLine(lines: readonly string[]): string | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = (lines[i] as string).trim();
    if (line !== "") return line;
  }
  return undefined;
}

/**
 * The line of a process's stderr that best says why it ended: the last line that states an error (Node
 * prints its stack trace and version after it; Python prints it last), else the last line that is not
 * blank. Undefined when there is none.
 */
export function stderrHeadline(lines: readonly string[]): string | undefined {
  return stderrErrorLine(lines) ?? lastStderrLine(lines);
}
