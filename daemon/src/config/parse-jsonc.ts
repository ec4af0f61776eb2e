import { ConfigError } from "@mcpd/protocol";
import { DAEMON_DEFAULTS } from "../defaults.js";

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
 * Why not `JSON.parse`: its errors carry no line and column on Node 20, it silently keeps the last of two
 * duplicate keys (a duplicated server name would vanish without a word), and it has no nesting bound.
 * Keys named `__proto__` become ordinary own properties, as with `JSON.parse`.
 *
 * @throws ConfigError (MCPD_CONFIG_INVALID): `<file>:<line>:<column>: <what was expected>`.
 */
export function parseJsonc(text: string, file: string, maxDepth: number = DAEMON_DEFAULTS.maxConfigNestingDepth): JsoncResult {
  return new JsoncParser(text, file, maxDepth).parseDocument();
}

class JsoncParser {
  private pos = 0;
  private readonly warnings: string[] = [];

  constructor(
    private readonly text: string,
    private readonly file: string,
    private readonly maxDepth: number,
  ) {
    if (text.charCodeAt(0) === 0xfeff) this.pos = 1;
  }

  parseDocument(): JsoncResult {
    this.skipTrivia();
    if (this.pos >= this.text.length) this.fail("the file is empty; expected a JSON object such as {\"mcpServers\": {}}");
    const value = this.parseValue(0, "");
    this.skipTrivia();
    if (this.pos < this.text.length) this.fail(`unexpected ${this.describeHere()} after the end of the JSON value`);
    return { value, warnings: this.warnings };
  }

  private parseValue(depth: number, path: string): unknown {
    const ch = this.text[this.pos];
    if (ch === "{") return this.parseObject(depth + 1, path);
    if (ch === "[") return this.parseArray(depth + 1, path);
    if (ch === '"') return this.parseString();
    if (ch === "-" || (ch !== undefined && ch >= "0" && ch <= "9")) return this.parseNumber();
    for (const [word, value] of [["true", true], ["false", false], ["null", null]] as const) {
      if (this.text.startsWith(word, this.pos)) {
        this.pos += word.length;
        return value;
      }
    }
    if (ch === "'") this.fail("strings must use double quotes");
    return this.fail(`expected a value, found ${this.describeHere()}`);
  }

  private parseObject(depth: number, path: string): Record<string, unknown> {
    this.checkDepth(depth);
    this.pos++; // "{"
    const out: Record<string, unknown> = {};
    const seen = new Set<string>();
    this.skipTrivia();
    while (this.text[this.pos] !== "}") {
      if (this.text[this.pos] !== '"') {
        this.fail(`expected a double-quoted property name or "}", found ${this.describeHere()}`);
      }
      const keyAt = this.pos;
      const key = this.parseString();
      this.skipTrivia();
      if (this.text[this.pos] !== ":") this.fail(`expected ":" after property name "${key}", found ${this.describeHere()}`);
      this.pos++;
      this.skipTrivia();
      const value = this.parseValue(depth, path ? `${path}.${key}` : key);
      if (seen.has(key)) {
        const { line, column } = this.lineColumn(keyAt);
        this.warnings.push(
          `${this.file}:${line}:${column}: duplicate key "${key}"${path ? ` in "${path}"` : ""}; the last one wins`,
        );
      }
      seen.add(key);
      // defineProperty: a "__proto__" key must stay data, never become the object's prototype.
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      if (!this.afterElement("}")) break;
    }
    this.pos++; // "}"
    return out;
  }

  private parseArray(depth: number, path: string): unknown[] {
    this.checkDepth(depth);
    this.pos++; // "["
    const out: unknown[] = [];
    this.skipTrivia();
    while (this.text[this.pos] !== "]") {
      out.push(this.parseValue(depth, `${path}[${out.length}]`));
      if (!this.afterElement("]")) break;
    }
    this.pos++; // "]"
    return out;
  }

  /** After an element: consumes a comma (a trailing one is allowed) or stops at `close`. Returns false at `close`. */
  private afterElement(close: "}" | "]"): boolean {
    this.skipTrivia();
    const ch = this.text[this.pos];
    if (ch === ",") {
      this.pos++;
      this.skipTrivia();
      return this.text[this.pos] !== close;
    }
    if (ch === close) return false;
    const what = close === "}" ? "object" : "array";
    return this.fail(`expected "," or "${close}" in ${what}, found ${this.describeHere()}`);
  }

  private parseString(): string {
    const start = this.pos;
    this.pos++; // opening quote
    let out = "";
    let chunkStart = this.pos;
    for (;;) {
      const code = this.text.charCodeAt(this.pos);
      if (Number.isNaN(code)) this.fail("unterminated string", start);
      if (code === 0x22) break;
      if (code < 0x20) this.fail("control character in string (write newlines as \\n)");
      if (code === 0x5c) {
        out += this.text.slice(chunkStart, this.pos);
        out += this.parseEscape();
        chunkStart = this.pos;
        continue;
      }
      this.pos++;
    }
    out += this.text.slice(chunkStart, this.pos);
    this.pos++; // closing quote
    return out;
  }

  private parseEscape(): string {
    const esc = this.text[this.pos + 1];
    const simple: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
    if (esc !== undefined && esc in simple) {
      this.pos += 2;
      return simple[esc]!;
    }
    if (esc === "u") {
      const hex = this.text.slice(this.pos + 2, this.pos + 6);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail("invalid \\u escape (expected four hex digits)");
      this.pos += 6;
      return String.fromCharCode(parseInt(hex, 16));
    }
    return this.fail(`invalid escape "\\${esc ?? ""}" in string (write a backslash as \\\\)`);
  }

  private parseNumber(): number {
    const match = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(this.text.slice(this.pos, this.pos + 400));
    if (!match) return this.fail(`invalid number`);
    const next = this.text[this.pos + match[0].length];
    if (next !== undefined && /[0-9A-Za-z.]/.test(next)) this.fail(`invalid number`);
    this.pos += match[0].length;
    return Number(match[0]);
  }

  private skipTrivia(): void {
    for (;;) {
      const ch = this.text[this.pos];
      if (ch === " " || ch === "\t" || ch === "\n" || ch === "\r") {
        this.pos++;
      } else if (ch === "/" && this.text[this.pos + 1] === "/") {
        const end = this.text.indexOf("\n", this.pos);
        this.pos = end === -1 ? this.text.length : end + 1;
      } else if (ch === "/" && this.text[this.pos + 1] === "*") {
        const end = this.text.indexOf("*/", this.pos + 2);
        if (end === -1) this.fail("unterminated /* comment");
        this.pos = end + 2;
      } else {
        return;
      }
    }
  }

  private checkDepth(depth: number): void {
    if (depth > this.maxDepth) this.fail(`nesting deeper than ${this.maxDepth} levels`);
  }

  private describeHere(): string {
    if (this.pos >= this.text.length) return "the end of the file";
    const ch = this.text.codePointAt(this.pos)!;
    const s = String.fromCodePoint(ch);
    return ch < 0x20 ? `character U+${ch.toString(16).padStart(4, "0")}` : `"${s}"`;
  }

  private lineColumn(at: number): { line: number; column: number } {
    let line = 1;
    let lineStart = 0;
    for (let i = 0; i < at; i++) {
      if (this.text.charCodeAt(i) === 10) {
        line++;
        lineStart = i + 1;
      }
    }
    // Columns count from 1, skipping the BOM on the first line.
    const column = at - lineStart + 1 - (line === 1 && this.text.charCodeAt(0) === 0xfeff ? 1 : 0);
    return { line, column };
  }

  private fail(message: string, at: number = this.pos): never {
    const { line, column } = this.lineColumn(Math.min(at, this.text.length));
    throw new ConfigError(`${this.file}:${line}:${column}: invalid JSON: ${message}`);
  }
}
