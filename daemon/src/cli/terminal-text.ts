/**
 * The one place where text that came from elsewhere (servers' names, descriptions, results and stderr
 * lines, authorization servers' error descriptions, the daemon's log) is made safe to print: a terminal
 * obeys control characters, so an escape sequence in a tool description could retitle the window, clear
 * the screen, rewrite what was printed before it or (through OSC 52) fill the clipboard. Every command
 * prints remote text through {@link terminalText} or {@link terminalJson}, and every error through
 * `eprintln`, which applies {@link terminalText}.
 */

/**
 * Characters never written raw: C0 controls but tab and newline (ESC, BEL, CR, backspace ...), DEL, the
 * C1 controls (U+0080-U+009F: U+009B is a one-character CSI to some terminals), and the bidirectional
 * overrides and isolates (U+202A-U+202E, U+2066-U+2069), which reorder what the reader sees.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these control characters are what the pattern exists to find.
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the same characters, for a test without state.
const HAS_UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** `\u001b` for ESC: visible, and what the character was. */
function visible(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/**
 * `text` with every unsafe character shown as a `\uXXXX` escape instead; newlines and tabs are kept (a
 * Windows line end `\r\n` becomes `\n`), so multi-line text stays multi-line. Text with nothing to
 * replace is returned as it is.
 */
export function terminalText(text: string): string {
  if (!HAS_UNSAFE.test(text)) return text;
  return text.replace(/\r\n/g, "\n").replace(UNSAFE, visible);
}

/** Every string in `value` (object keys too) through {@link terminalText}: for a structure a human view renders field by field. */
export function terminalSafe<T>(value: T): T {
  if (typeof value === "string") return terminalText(value) as T;
  if (Array.isArray(value)) return value.map((v) => terminalSafe(v)) as T;
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[terminalText(k)] = terminalSafe(v);
    return out as T;
  }
  return value;
}

/**
 * `value` as indented JSON that is safe on a terminal and parses to exactly `value`: JSON.stringify
 * escapes C0 controls already; DEL, C1 and the bidirectional controls, which it leaves raw, are written
 * as JSON `\uXXXX` escapes too (they can only occur inside strings).
 */
export function terminalJson(value: unknown): string {
  return (JSON.stringify(value, null, 2) ?? "null").replace(/[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, visible);
}
