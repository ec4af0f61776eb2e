import { ConfigError } from "@mcpd/protocol";
import { printParseErrorCode, visit, type JSONVisitor, type ParseErrorCode } from "jsonc-parser";
import { CONFIG_DEFAULTS } from "../defaults.js";

/** What {@link parseJsonc} found besides the value. */
export interface JsoncResult {
  value: unknown;
  /** Duplicate keys, as `duplicate key "x" at line L:C (in path); the last one wins`. */
  warnings: string[];
}

/**
 * Parses JSON that may also contain `//` and `/* *\/` comments and trailing commas (VS Code's JSONC, so
 * files copied from `.vscode/mcp.json` load as they are). A leading UTF-8 BOM is skipped.
 *
 * The tokens and the grammar are jsonc-parser's (the parser VS Code uses for the same files); this module
 * builds the value from its visitor and turns its first error into a message a person can act on.
 * Why not `JSON.parse`: its errors carry no line and column on Node 20, it silently keeps the last of two
 * duplicate keys (a duplicated server name would vanish without a word), and it has no nesting bound.
 * Why not jsonc-parser's `parse`: it assigns keys with `=`, so a `__proto__` key would set the prototype,
 * and it recovers from errors where a config must stop at the first one. Keys named `__proto__` become
 * ordinary own properties, as with `JSON.parse`.
 *
 * @throws ConfigError (MCPD_CONFIG_INVALID): `<file>:<line>:<column>: invalid JSON: <what was expected>`.
 */
export function parseJsonc(text: string, file: string, maxDepth: number = CONFIG_DEFAULTS.maxConfigNestingDepth): JsoncResult {
  // Offsets are taken in the text without its BOM, so a BOM never counts as a column.
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const builder = new ValueBuilder(source, file, maxDepth);
  visit(source, builder, { allowTrailingComma: true });
  return builder.result();
}

/** What the parser expects next inside one open object or array; used to word an error. */
type Expecting = "key" | "colon" | "value" | "comma";

/** One open object or array; `path` names it in warnings (`mcpServers.a`, `args[0]`). */
type Frame =
  | { kind: "array"; value: unknown[]; path: string; expecting: Expecting }
  | {
      kind: "object";
      value: Record<string, unknown>;
      path: string;
      expecting: Expecting;
      /** The key whose value comes next, where it stands, and the keys seen so far (duplicates warn). */
      key: string;
      keyAt: number;
      seen: Set<string>;
    };

/** Builds the value from jsonc-parser's events and throws at the first error; the visitor's callbacks are its methods. */
class ValueBuilder implements JSONVisitor {
  private readonly stack: Frame[] = [];
  private readonly warnings: string[] = [];
  private root: { value: unknown } | undefined;

  constructor(
    private readonly text: string,
    private readonly file: string,
    private readonly maxDepth: number,
  ) {}

  result(): JsoncResult {
    // visit() reports an empty document as an error, so a finished visit always has a value.
    if (!this.root) return this.fail('the file is empty; expected a JSON object such as {"mcpServers": {}}', this.text.length);
    return { value: this.root.value, warnings: this.warnings };
  }

  onObjectBegin = (offset: number): void => {
    this.open(offset, { kind: "object", value: {}, path: this.childPath(), expecting: "key", key: "", keyAt: 0, seen: new Set() });
  };

  onArrayBegin = (offset: number): void => {
    this.open(offset, { kind: "array", value: [], path: this.childPath(), expecting: "value" });
  };

  onObjectProperty = (key: string, offset: number): void => {
    const top = this.stack.at(-1);
    if (top?.kind !== "object") return;
    top.key = key;
    top.keyAt = offset;
    top.expecting = "colon";
  };

  onSeparator = (character: string): void => {
    const top = this.stack.at(-1);
    if (!top) return;
    if (character === ":") top.expecting = "value";
    else top.expecting = top.kind === "object" ? "key" : "value";
  };

  onLiteralValue = (value: unknown, offset: number, length: number): void => {
    // The scanner ends a number at the first character that cannot continue it, so "01" or "2x" arrive as a
    // number followed by more tokens; JSON has no such number.
    if (typeof value === "number" && /[0-9A-Za-z.]/.test(this.text[offset + length] ?? "")) this.fail("invalid number", offset);
    this.add(value);
  };

  // The visitor also ends a container at the end of the file; only a real bracket closes it.
  onObjectEnd = (offset: number): void => this.close(offset, "}");
  onArrayEnd = (offset: number): void => this.close(offset, "]");

  onError = (error: ParseErrorCode, offset: number): void => {
    const expecting = this.expecting();
    switch (printParseErrorCode(error)) {
      case "UnexpectedEndOfComment":
        return this.fail("unterminated /* comment", offset);
      // The scanner flags a bad token before the grammar asks whether that kind of token may stand here; a
      // string or number where none may stand is reported as out of place, as the grammar would.
      case "UnexpectedEndOfString":
      case "InvalidCharacter":
      case "InvalidEscapeCharacter":
      case "InvalidUnicode":
        if (expecting === "value" || expecting === "key") this.failInString(offset);
        break;
      case "UnexpectedEndOfNumber":
      case "InvalidNumberFormat":
        if (expecting === "value") this.fail("invalid number", offset);
        break;
    }
    // The grammar errors (a symbol, value, name, colon, comma or bracket where another was due): say what
    // this place expected, from the state the events left.
    this.failExpecting(offset, expecting);
  };

  private open(offset: number, frame: Frame): void {
    if (this.stack.length >= this.maxDepth) this.fail(`nesting deeper than ${this.maxDepth} levels`, offset);
    this.stack.push(frame);
  }

  private close(offset: number, bracket: "}" | "]"): void {
    if (this.text[offset] !== bracket) this.failExpecting(offset, this.expecting());
    this.add(this.stack.pop()!.value);
  }

  /** The path of a value about to start in the innermost open container, for duplicate-key warnings. */
  private childPath(): string {
    const top = this.stack.at(-1);
    if (!top) return "";
    if (top.kind === "array") return `${top.path}[${top.value.length}]`;
    return top.path ? `${top.path}.${top.key}` : top.key;
  }

  private add(value: unknown): void {
    const top = this.stack.at(-1);
    if (!top) {
      this.root = { value };
      return;
    }
    top.expecting = "comma";
    if (top.kind === "array") {
      top.value.push(value);
      return;
    }
    if (top.seen.has(top.key)) {
      const { line, column } = this.lineColumn(top.keyAt);
      const where = top.path ? ` in "${top.path}"` : "";
      this.warnings.push(`${this.file}:${line}:${column}: duplicate key "${top.key}"${where}; the last one wins`);
    }
    top.seen.add(top.key);
    // defineProperty: a "__proto__" key must stay data, never become the object's prototype.
    Object.defineProperty(top.value, top.key, { value, enumerable: true, writable: true, configurable: true });
  }

  /** What may come next: inside the innermost container, else a first value or the end of the file. */
  private expecting(): Expecting | "end" {
    return this.stack.at(-1)?.expecting ?? (this.root ? "end" : "value");
  }

  private failExpecting(at: number, expecting: Expecting | "end"): never {
    const found = this.describe(at);
    const top = this.stack.at(-1);
    switch (expecting) {
      case "end":
        return this.fail(`unexpected ${found} after the end of the JSON value`, at);
      case "key":
        return this.fail(`expected a double-quoted property name or "}", found ${found}`, at);
      case "colon":
        return this.fail(`expected ":" after property name "${top?.kind === "object" ? top.key : ""}", found ${found}`, at);
      case "comma":
        return top?.kind === "array"
          ? this.fail(`expected "," or "]" in array, found ${found}`, at)
          : this.fail(`expected "," or "}" in object, found ${found}`, at);
      case "value":
        break;
    }
    if (!top && at >= this.text.length) this.fail('the file is empty; expected a JSON object such as {"mcpServers": {}}', at);
    if (this.text[at] === "'") this.fail("strings must use double quotes", at);
    // The scanner reads a minus without digits as an unknown symbol.
    if (this.text[at] === "-") this.fail("invalid number", at);
    // It also reads "truex" as one unknown word: the value is "true", and what follows it is out of place.
    const word = ["true", "false", "null"].find((w) => this.text.startsWith(w, at));
    if (word) this.failExpecting(at + word.length, top ? "comma" : "end");
    return this.fail(`expected a value, found ${found}`, at);
  }

  /**
   * The scanner flags a string token as a whole (and keeps only its last problem); this walks the token from
   * its opening quote to name the first problem at its own position.
   */
  private failInString(start: number): never {
    const text = this.text;
    for (let i = start + 1; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (code === 0x22) break;
      if (code < 0x20) this.fail("control character in string (write newlines as \\n)", i);
      if (code !== 0x5c) continue;
      const esc = text[i + 1];
      if (esc === "u") {
        if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) this.fail("invalid \\u escape (expected four hex digits)", i);
        i += 5;
      } else if (esc !== undefined && '"\\/bfnrt'.includes(esc)) {
        i++;
      } else {
        this.fail(`invalid escape "\\${esc ?? ""}" in string (write a backslash as \\\\)`, i);
      }
    }
    return this.fail("unterminated string", start);
  }

  private describe(at: number): string {
    if (at >= this.text.length) return "the end of the file";
    const ch = this.text.codePointAt(at)!;
    return ch < 0x20 ? `character U+${ch.toString(16).padStart(4, "0")}` : `"${String.fromCodePoint(ch)}"`;
  }

  /** Line and column, both from 1. Lines end at LF, CRLF or a lone CR, as for jsonc-parser and VS Code. */
  private lineColumn(at: number): { line: number; column: number } {
    let line = 1;
    let lineStart = 0;
    for (let i = 0; i < at; i++) {
      const code = this.text.charCodeAt(i);
      if (code !== 0x0a && code !== 0x0d) continue;
      if (code === 0x0d && this.text.charCodeAt(i + 1) === 0x0a) i++;
      line++;
      lineStart = i + 1;
    }
    return { line, column: at - lineStart + 1 };
  }

  private fail(message: string, at: number): never {
    const { line, column } = this.lineColumn(Math.min(at, this.text.length));
    throw new ConfigError(`${this.file}:${line}:${column}: invalid JSON: ${message}`);
  }
}
