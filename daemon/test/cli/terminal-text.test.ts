/** The one sanitizer of remote text on the terminal, and the renderers that print through it. */
import { describe, expect, it } from "vitest";
import { formatLogLine } from "../../src/cli/log-format.js";
import { renderProgress } from "../../src/cli/progress-bar.js";
import { formatToolResult } from "../../src/cli/result-format.js";
import { terminalJson, terminalSafe, terminalText } from "../../src/cli/terminal-text.js";

// biome-ignore lint/suspicious/noControlCharactersInRegex: these control characters are what the test looks for.
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe("terminalText", () => {
  it.each([
    ["ESC (CSI, OSC)", "\u001b[2J\u001b]0;t\u0007", "\\u001b[2J\\u001b]0;t\\u0007"],
    ["NUL, backspace, a lone CR, form feed", "a\u0000b\bc\rd\fe", "a\\u0000b\\u0008c\\u000dd\\u000ce"],
    ["DEL and C1 (U+009B CSI)", "x\u007fy\u009b31m\u0085", "x\\u007fy\\u009b31m\\u0085"],
    ["bidi overrides and isolates", "a\u202eb\u202ac\u2066d\u2069", "a\\u202eb\\u202ac\\u2066d\\u2069"],
    ["newlines and tabs kept, CRLF as LF", "one\r\ntwo\tthree\n", "one\ntwo\tthree\n"],
    ["plain text, accents, emoji", "café ✓ 🚀", "café ✓ 🚀"],
  ])("%s", (_what, input, shown) => {
    expect(terminalText(input)).toBe(shown);
    expect(RAW_CONTROL.test(terminalText(input))).toBe(false);
  });

  it("terminalSafe makes every string of a structure safe, keys too, and leaves the rest", () => {
    expect(terminalSafe({ "k\u001b": ["v\u009b", 1, null, { d: "\u202e" }] })).toEqual({
      "k\\u001b": ["v\\u009b", 1, null, { d: "\\u202e" }],
    });
  });

  it("terminalJson writes DEL, C1 and bidi characters as JSON escapes: no raw control, and it parses to the same value", () => {
    const value = { text: "a\u001bb\u007fc\u009bd\u202ee\n", n: 1 };
    const json = terminalJson(value);
    expect(RAW_CONTROL.test(json.replace(/\n/g, ""))).toBe(false);
    expect(JSON.parse(json)).toEqual(value);
  });
});

describe("renderers print remote text safely", () => {
  it("a log line: message, unquoted field values and a line that is not JSON", () => {
    const line = JSON.stringify({ level: 30, time: 0, msg: "m\u001b[2J", server: "s\u009b1m", stderr: "x\u202ey" });
    expect(RAW_CONTROL.test(formatLogLine(line))).toBe(false);
    expect(formatLogLine(line)).toContain("m\\u001b[2J");
    expect(formatLogLine("crash \u001b]0;t\u0007")).toBe("crash \\u001b]0;t\\u0007");
  });

  it("a tool result and a progress message", () => {
    expect(formatToolResult({ content: [{ type: "text", text: "r\u001b[31m\r\nok" }] })).toBe("r\\u001b[31m\nok");
    expect(formatToolResult({ structuredContent: { a: "\u009b" } })).not.toMatch(RAW_CONTROL);
    expect(renderProgress({ progress: 1, total: 2, message: "p\u001b]0;t\u0007" })).toContain("p\\u001b]0;t\\u0007");
  });
});
