/**
 * No source file over {@link MAX_LINES} lines: a file that long does several jobs, and one concern per
 * file is the house rule. The files already past it are listed with their size when the rule came in,
 * as maxima: each may only shrink, and leaves the list once it is under the bound.
 */
import { describe, expect, it } from "vitest";
import { loadWorkspace } from "./helpers/workspace-sources.js";

/** Most lines a source file under `<pkg>/src/` may have. */
const MAX_LINES = 300;

/** Files over {@link MAX_LINES} when this check came in -> the most lines each may have until split (none left: all were split). */
const KNOWN_LONG_FILES: Readonly<Record<string, number>> = {};

/** Lines as `wc -l` counts them, plus a last line without its newline. */
function lineCount(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return text.length > 0 && !text.endsWith("\n") ? n + 1 : n;
}

/** What is wrong with the sizes of these files (root-relative path -> text), one line each. */
export function sizeViolations(files: ReadonlyMap<string, string>, known: Readonly<Record<string, number>> = KNOWN_LONG_FILES): string[] {
  const out: string[] = [];
  for (const [file, text] of [...files].sort(([a], [b]) => a.localeCompare(b))) {
    const lines = lineCount(text);
    const max = known[file];
    if (max === undefined) {
      if (lines > MAX_LINES) out.push(`${file} has ${lines} lines (at most ${MAX_LINES}): split it by concern`);
    } else if (lines > max) {
      out.push(`${file} has ${lines} lines: it was ${max} when the ${MAX_LINES}-line rule came in and may only shrink`);
    } else if (lines <= MAX_LINES) {
      out.push(`${file} has ${lines} lines, within the bound: remove it from KNOWN_LONG_FILES in tests/file-sizes.test.ts`);
    }
  }
  for (const file of Object.keys(known).sort()) {
    if (!files.has(file)) out.push(`${file} is listed in KNOWN_LONG_FILES but no longer exists: remove it from the list`);
  }
  return out;
}

const lines = (n: number, last = "\n"): string => "x\n".repeat(n - 1) + `x${last}`;

describe("file size check on synthetic trees", () => {
  it("counts lines as wc -l does, with or without a last newline", () => {
    expect(lineCount("")).toBe(0);
    expect(lineCount("a")).toBe(1);
    expect(lineCount("a\n")).toBe(1);
    expect(lineCount("a\nb")).toBe(2);
    expect(lineCount(lines(300))).toBe(300);
  });

  it("accepts files within the bound and listed files within their maximum", () => {
    const files = new Map([
      ["p/src/a.ts", lines(300)],
      ["p/src/b.ts", lines(350, "")],
    ]);
    expect(sizeViolations(files, { "p/src/b.ts": 360 })).toEqual([]);
  });

  it("fails on a new file over the bound", () => {
    expect(sizeViolations(new Map([["p/src/a.ts", lines(301)]]), {})).toEqual([
      "p/src/a.ts has 301 lines (at most 300): split it by concern",
    ]);
  });

  it("fails on a listed file that grew past its maximum", () => {
    expect(sizeViolations(new Map([["p/src/b.ts", lines(361)]]), { "p/src/b.ts": 360 })).toEqual([
      "p/src/b.ts has 361 lines: it was 360 when the 300-line rule came in and may only shrink",
    ]);
  });

  it("fails on a listed file that is now within the bound or gone, so the list only shrinks", () => {
    expect(sizeViolations(new Map([["p/src/b.ts", lines(299)]]), { "p/src/b.ts": 360, "p/src/gone.ts": 400 })).toEqual([
      "p/src/b.ts has 299 lines, within the bound: remove it from KNOWN_LONG_FILES in tests/file-sizes.test.ts",
      "p/src/gone.ts is listed in KNOWN_LONG_FILES but no longer exists: remove it from the list",
    ]);
  });
});

describe("file sizes in the real tree", () => {
  const { files } = loadWorkspace();

  it(`reads every package's sources`, () => {
    for (const dir of ["protocol", "transports", "daemon", "client-sdk"]) {
      expect(
        [...files.keys()].some((f) => f.startsWith(`${dir}/src/`)),
        dir,
      ).toBe(true);
    }
  });

  it(`has no source file over ${MAX_LINES} lines but the listed ones, and those not past their size`, () => {
    expect(sizeViolations(files)).toEqual([]);
  });
});
