/**
 * No function over {@link MAX_FUNCTION_LINES} lines, from its first line to its last: a function that
 * long does several things, and each belongs in a function named for it. Every function counts:
 * declarations, expressions, arrows, methods, accessors and constructors, nested ones too (a long
 * callback inside a long function is reported as well as its host). The functions already past the bound
 * are listed with their size when the rule came in, as maxima: each may only shrink, and leaves the list
 * once it is under the bound.
 *
 * The check is a pure function over file contents (parsed with the same parser as layering.test.ts), so
 * it is shown to measure and name functions in synthetic files before it runs on the real tree.
 */
import { parseSync } from "vite";
import { describe, expect, it } from "vitest";
import { loadWorkspace } from "./helpers/workspace-sources.js";

/** Most lines a function in a source file under `<pkg>/src/` may span, first line to last. */
const MAX_FUNCTION_LINES = 80;

/** `file#function` over {@link MAX_FUNCTION_LINES} when this check came in -> the most lines it may have until split. */
const KNOWN_LONG_FUNCTIONS: Readonly<Record<string, number>> = {};

interface AstNode {
  type: string;
  start: number;
  end: number;
  [key: string]: unknown;
}

function isNode(value: unknown): value is AstNode {
  return typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string";
}

const FUNCTION_TYPES = new Set(["FunctionDeclaration", "FunctionExpression", "ArrowFunctionExpression"]);

/** One function of a file: its name, the line it starts on (1-based) and how many lines it spans. */
export interface FunctionSize {
  name: string;
  line: number;
  lines: number;
}

/** The name a key or binding node spells (`foo`, `"foo"`, `#foo`, `[Symbol.iterator]` as written). */
function keyName(node: unknown, code: string): string | undefined {
  if (!isNode(node)) return undefined;
  if (node.type === "Identifier") return node.name as string;
  if (node.type === "PrivateIdentifier") return `#${node.name as string}`;
  if (node.type === "Literal") return String(node.value);
  return `[${code.slice(node.start, node.end)}]`;
}

/** The name of a class node, or `(class)` for an anonymous class expression not bound to a name. */
function className(node: AstNode | undefined, parent: AstNode | undefined): string {
  if (node && isNode(node.id)) return node.id.name as string;
  if (parent?.type === "VariableDeclarator" && isNode(parent.id)) return keyName(parent.id, "") ?? "(class)";
  return "(class)";
}

/**
 * The name a function is known by, from where it stands: its own name, the class member it is, the
 * variable, property or assignment target it is bound to; otherwise `(anonymous)` inside the nearest
 * named function around it.
 */
function functionName(node: AstNode, ancestors: readonly AstNode[], code: string, outer: string | undefined): string {
  if (isNode(node.id)) return node.id.name as string;
  const parent = ancestors[ancestors.length - 1];
  const member = (prefix: string): string => {
    const cls = ancestors[ancestors.length - 3];
    return `${className(cls, ancestors[ancestors.length - 4])}.${prefix}${keyName(parent?.key, code)}`;
  };
  switch (parent?.type) {
    case "MethodDefinition":
      return member(parent.kind === "get" ? "get " : parent.kind === "set" ? "set " : "");
    case "PropertyDefinition":
      return member("");
    case "Property":
      if (parent.value === node) return keyName(parent.key, code) ?? "(anonymous)";
      break;
    case "VariableDeclarator":
      if (parent.init === node) return keyName(parent.id, code) ?? "(anonymous)";
      break;
    case "AssignmentExpression": {
      const left = parent.left as AstNode;
      if (left.type === "MemberExpression") return keyName(left.property, code) ?? "(anonymous)";
      return keyName(left, code) ?? "(anonymous)";
    }
  }
  return outer === undefined ? "(anonymous)" : `${outer} > (anonymous)`;
}

/** The 1-based line of a UTF-16 offset, given the offsets of every newline. */
function lineOf(newlines: readonly number[], offset: number): number {
  let lo = 0;
  let hi = newlines.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((newlines[mid] as number) < offset) lo = mid + 1;
    else hi = mid;
  }
  return lo + 1;
}

/** Every function with a body in one source file, in source order; throws when the file does not parse. */
export function functionSizes(file: string, code: string): FunctionSize[] {
  const parsed = parseSync(file, code, { lang: file.endsWith(".tsx") ? "tsx" : "ts", sourceType: "module" });
  if (parsed.errors.length > 0) throw new Error(`${file} does not parse: ${parsed.errors.map((e) => e.message).join("; ")}`);
  const newlines: number[] = [];
  for (let i = code.indexOf("\n"); i !== -1; i = code.indexOf("\n", i + 1)) newlines.push(i);
  const out: FunctionSize[] = [];
  const ancestors: AstNode[] = [];
  const visit = (node: AstNode, outer: string | undefined): void => {
    let inner = outer;
    if (FUNCTION_TYPES.has(node.type) && node.body) {
      const name = functionName(node, ancestors, code, outer);
      // A method's or accessor's function node starts at its parameters: measure from its name.
      const parent = ancestors[ancestors.length - 1];
      const isMethod = parent?.type === "MethodDefinition" || (parent?.type === "Property" && parent.method === true);
      const holder = isMethod ? (parent as AstNode) : node;
      const line = lineOf(newlines, holder.start);
      out.push({ name, line, lines: lineOf(newlines, node.end - 1) - line + 1 });
      inner = name;
    }
    ancestors.push(node);
    for (const child of Object.values(node)) {
      if (Array.isArray(child)) {
        for (const item of child) if (isNode(item)) visit(item, inner);
      } else if (isNode(child)) {
        visit(child, inner);
      }
    }
    ancestors.pop();
  };
  visit(parsed.program as unknown as AstNode, undefined);
  return out;
}

/** `file#name` -> size for every function of these files, the second of two same names in a file as `name (2)`. */
export function functionTable(files: ReadonlyMap<string, string>): Map<string, FunctionSize> {
  const table = new Map<string, FunctionSize>();
  for (const [file, code] of [...files].sort(([a], [b]) => a.localeCompare(b))) {
    const seen = new Map<string, number>();
    for (const fn of functionSizes(file, code)) {
      const n = (seen.get(fn.name) ?? 0) + 1;
      seen.set(fn.name, n);
      table.set(`${file}#${n === 1 ? fn.name : `${fn.name} (${n})`}`, fn);
    }
  }
  return table;
}

/** What is wrong with the sizes of the functions in these files (root-relative path -> text), one line each. */
export function functionViolations(
  files: ReadonlyMap<string, string>,
  known: Readonly<Record<string, number>> = KNOWN_LONG_FUNCTIONS,
): string[] {
  const out: string[] = [];
  const table = functionTable(files);
  for (const [key, { line, lines }] of table) {
    const max = known[key];
    const where = `${key} (line ${line})`;
    if (max === undefined) {
      if (lines > MAX_FUNCTION_LINES) out.push(`${where} has ${lines} lines (at most ${MAX_FUNCTION_LINES}): split it by concern`);
    } else if (lines > max) {
      out.push(`${where} has ${lines} lines: it was ${max} when the ${MAX_FUNCTION_LINES}-line rule came in and may only shrink`);
    } else if (lines <= MAX_FUNCTION_LINES) {
      out.push(`${where} has ${lines} lines, within the bound: remove it from KNOWN_LONG_FUNCTIONS in tests/function-sizes.test.ts`);
    }
  }
  for (const key of Object.keys(known).sort()) {
    if (!table.has(key)) out.push(`${key} is listed in KNOWN_LONG_FUNCTIONS but no longer exists: remove it from the list`);
  }
  return out;
}

/** A body of `n` lines in all, braces included, when wrapped as `{` + `n - 2` statements + `}`. */
const body = (n: number): string => `{\n${"  x++;\n".repeat(n - 2)}}`;

describe("function size check on synthetic files", () => {
  it("measures every kind of function from its first line to its last, by the name it is known by", () => {
    const code = [
      `function declared() ${body(3)}`,
      `const arrow = () => ${body(4)};`,
      `const expr = function () ${body(5)};`,
      "class Box {",
      `  method() ${body(6)}`,
      `  get size() ${body(3)}`,
      `  field = () => ${body(3)};`,
      `  constructor() ${body(3)}`,
      "}",
      `const o = { short() ${body(3)}, long: async () => ${body(3)} };`,
      `exports.assigned = () => ${body(3)};`,
      `function outer() { return [1].map((x) => ${body(3)}); }`,
      `declare function overload(a: string): void;`,
    ].join("\n");
    expect(functionSizes("p/src/a.ts", code).map((f) => `${f.name}@${f.line}:${f.lines}`)).toEqual([
      "declared@1:3",
      "arrow@4:4",
      "expr@8:5",
      "Box.method@14:6",
      "Box.get size@20:3",
      "Box.field@23:3",
      "Box.constructor@26:3",
      "short@30:3",
      "long@32:3",
      "assigned@35:3",
      "outer@38:3",
      "outer > (anonymous)@38:3",
    ]);
  });

  it("counts a function's lines from the line of its name, not of its parameters", () => {
    const code = `class A {\n  async run(\n    a: number,\n  ): Promise<void> ${body(2)}\n}\n`;
    expect(functionSizes("p/src/a.ts", code)).toEqual([{ name: "A.run", line: 2, lines: 4 }]);
  });

  it("keeps two functions of one name in a file apart", () => {
    const code = `class A { run() ${body(2)} }\nclass B { run() ${body(2)} }\nfunction f() { const g = () => 1; }\nfunction h() { const g = () => 2; }\n`;
    expect([...functionTable(new Map([["p/src/a.ts", code]])).keys()]).toEqual([
      "p/src/a.ts#A.run",
      "p/src/a.ts#B.run",
      "p/src/a.ts#f",
      "p/src/a.ts#g",
      "p/src/a.ts#h",
      "p/src/a.ts#g (2)",
    ]);
  });

  it("accepts functions within the bound and listed functions within their maximum", () => {
    const files = new Map([["p/src/a.ts", `function ok() ${body(80)}\nfunction long() ${body(95)}\n`]]);
    expect(functionViolations(files, { "p/src/a.ts#long": 100 })).toEqual([]);
  });

  it("fails on a new function over the bound, naming file, function, line and length", () => {
    const files = new Map([["p/src/a.ts", `\nexport class A {\n  run() ${body(81)}\n}\n`]]);
    expect(functionViolations(files, {})).toEqual(["p/src/a.ts#A.run (line 3) has 81 lines (at most 80): split it by concern"]);
  });

  it("fails on a nested function over the bound, and on its host", () => {
    const files = new Map([["p/src/a.ts", `function host() {\n  const inner = () => ${body(81)};\n}\n`]]);
    expect(functionViolations(files, {})).toEqual([
      "p/src/a.ts#host (line 1) has 83 lines (at most 80): split it by concern",
      "p/src/a.ts#inner (line 2) has 81 lines (at most 80): split it by concern",
    ]);
  });

  it("fails on a listed function that grew past its maximum", () => {
    const files = new Map([["p/src/a.ts", `function long() ${body(101)}\n`]]);
    expect(functionViolations(files, { "p/src/a.ts#long": 100 })).toEqual([
      "p/src/a.ts#long (line 1) has 101 lines: it was 100 when the 80-line rule came in and may only shrink",
    ]);
  });

  it("fails on a listed function that is now within the bound or gone, so the list only shrinks", () => {
    const files = new Map([["p/src/a.ts", `function long() ${body(80)}\n`]]);
    expect(functionViolations(files, { "p/src/a.ts#long": 100, "p/src/a.ts#gone": 90 })).toEqual([
      "p/src/a.ts#long (line 1) has 80 lines, within the bound: remove it from KNOWN_LONG_FUNCTIONS in tests/function-sizes.test.ts",
      "p/src/a.ts#gone is listed in KNOWN_LONG_FUNCTIONS but no longer exists: remove it from the list",
    ]);
  });

  it("fails on a file that does not parse", () => {
    expect(() => functionSizes("p/src/a.ts", "function (")).toThrow(/p\/src\/a\.ts does not parse/);
  });
});

describe("function sizes in the real tree", () => {
  const { files } = loadWorkspace();

  it("finds the functions of every package's sources", () => {
    const table = functionTable(files);
    for (const dir of ["protocol", "transports", "daemon", "client-sdk"]) {
      expect(
        [...table.keys()].some((k) => k.startsWith(`${dir}/src/`)),
        dir,
      ).toBe(true);
    }
  });

  it(`has no function over ${MAX_FUNCTION_LINES} lines but the listed ones, and those not past their size`, () => {
    expect(functionViolations(files)).toEqual([]);
  });
});
