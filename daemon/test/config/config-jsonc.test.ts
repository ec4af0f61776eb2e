import { ConfigError } from "@mcpd/protocol";
import { describe, expect, it } from "vitest";
import { parseJsonc } from "../../src/config/parse-jsonc.js";

function errorOf(text: string, maxDepth?: number): ConfigError {
  try {
    parseJsonc(text, "/c/config.json", maxDepth);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).code).toBe("MCPD_CONFIG_INVALID");
    return err as ConfigError;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(text)}`);
}

describe("parseJsonc", () => {
  it("parses what JSON.parse parses, to the same value", () => {
    const samples = ['{"a":[1,-2.5e3,true,false,null,"s\\n\\u00e9\\"\\\\\\/"]}', "[]", '"x"', "0", '{"":{}}'];
    for (const s of samples) expect(parseJsonc(s, "f").value).toEqual(JSON.parse(s));
  });

  it("accepts comments, trailing commas and a BOM", () => {
    const text = '\ufeff{\n  // servers\n  "a": [1, 2,], /* block\n comment */\n  "b": {"c": 1,},\n}\n';
    expect(parseJsonc(text, "f").value).toEqual({ a: [1, 2], b: { c: 1 } });
  });

  it("names the file, line and column of a syntax error", () => {
    const err = errorOf('{\n  "a": 1\n  "b": 2\n}');
    expect(err.message).toBe('/c/config.json:3:3: invalid JSON: expected "," or "}" in object, found """');
  });

  it("explains common mistakes", () => {
    expect(errorOf("").message).toMatch(/:1:1: invalid JSON: the file is empty/);
    expect(errorOf("{'a': 1}").message).toMatch(/expected a double-quoted property name/);
    expect(errorOf("{\"a\": 'x'}").message).toMatch(/:1:7: invalid JSON: strings must use double quotes/);
    expect(errorOf('{"a": "x').message).toMatch(/:1:7: invalid JSON: unterminated string/);
    expect(errorOf('{"a": 01}').message).toMatch(/invalid number/);
    expect(errorOf('{"a": 1} x').message).toMatch(/:1:10: invalid JSON: unexpected "x" after the end/);
    expect(errorOf('{"a": 1').message).toMatch(/found the end of the file/);
    expect(errorOf('{"a": "C:\\path"}').message).toMatch(/invalid escape "\\p"/);
    expect(errorOf("/* open").message).toMatch(/unterminated \/\* comment/);
    expect(errorOf('{"a": "line\nbreak"}').message).toMatch(/control character in string/);
  });

  it("places every kind of syntax error at the offending character, with what was expected there", () => {
    const at = (text: string) => errorOf(text).message.replace("/c/config.json:", "");
    expect(at('{"a" 1}')).toBe('1:6: invalid JSON: expected ":" after property name "a", found "1"');
    expect(at('{"a": }')).toBe('1:7: invalid JSON: expected a value, found "}"');
    expect(at('{"a": 1,')).toBe('1:9: invalid JSON: expected a double-quoted property name or "}", found the end of the file');
    expect(at("{")).toBe('1:2: invalid JSON: expected a double-quoted property name or "}", found the end of the file');
    expect(at("[1 2]")).toBe('1:4: invalid JSON: expected "," or "]" in array, found "2"');
    expect(at("[1,")).toBe("1:4: invalid JSON: expected a value, found the end of the file");
    expect(at("[,1]")).toBe('1:2: invalid JSON: expected a value, found ","');
    expect(at("[1,,]")).toBe('1:4: invalid JSON: expected a value, found ","');
    expect(at('{"a": 1}}')).toBe('1:9: invalid JSON: unexpected "}" after the end of the JSON value');
    expect(at('"x" y')).toBe('1:5: invalid JSON: unexpected "y" after the end of the JSON value');
    expect(at("[tru]")).toBe('1:2: invalid JSON: expected a value, found "t"');
    expect(at("[/]")).toBe('1:2: invalid JSON: expected a value, found "/"');
    expect(at("[\u0001]")).toBe("1:2: invalid JSON: expected a value, found character U+0001");
    expect(at("  // only a comment\n")).toBe('2:1: invalid JSON: the file is empty; expected a JSON object such as {"mcpServers": {}}');
    // Numbers: leading zeros, a bare minus, a missing fraction or exponent, letters glued on.
    for (const n of ["01", "-", "1.", "1e", "1.5.3", "2x", "-a"]) expect(at(`[${n}]`)).toBe("1:2: invalid JSON: invalid number");
    // Strings: the position is the bad character or escape, not the opening quote.
    expect(at('["ab\tc"]')).toBe("1:5: invalid JSON: control character in string (write newlines as \\n)");
    expect(at('["ab\\u12x4"]')).toBe("1:5: invalid JSON: invalid \\u escape (expected four hex digits)");
    expect(at('["a", "b\\q\\"]')).toBe('1:9: invalid JSON: invalid escape "\\q" in string (write a backslash as \\\\)');
    expect(at('\n\n  ["x\\')).toBe('3:6: invalid JSON: invalid escape "\\" in string (write a backslash as \\\\)');
    expect(at("[1, /* open\n")).toBe("1:5: invalid JSON: unterminated /* comment");
    // A BOM does not count as a column.
    expect(at("\ufeff{x}")).toBe('1:2: invalid JSON: expected a double-quoted property name or "}", found "x"');
    // A CRLF file gives the same line numbers as an LF one.
    expect(at('{\r\n"a": 1\r\n"b": 2}')).toBe('3:1: invalid JSON: expected "," or "}" in object, found """');
    // A lone CR ends a line, and a // comment, as it does in VS Code.
    expect(at('{ // servers\r"a": 1\r"b": 2}')).toBe('3:1: invalid JSON: expected "," or "}" in object, found """');
  });

  it("reports nested duplicates with their path, in document order of the values' ends", () => {
    const { value, warnings } = parseJsonc('{"s": [{"k": 1, "k": 2}], "s": {"x": {"y": 1, "y": 2}}}', "f");
    expect(value).toEqual({ s: { x: { y: 2 } } });
    expect(warnings).toEqual([
      'f:1:17: duplicate key "k" in "s[0]"; the last one wins',
      'f:1:47: duplicate key "y" in "s.x"; the last one wins',
      'f:1:27: duplicate key "s"; the last one wins',
    ]);
  });

  it("bounds nesting depth", () => {
    expect(parseJsonc("[[[1]]]", "f", 3).value).toEqual([[[1]]]);
    expect(errorOf("[[[[1]]]]", 3).message).toMatch(/nesting deeper than 3 levels/);
    // The default bound stops a pathological file long before the stack does.
    expect(errorOf("[".repeat(100_000)).message).toMatch(/nesting deeper than 64 levels/);
  });

  it("warns about duplicate keys with their position; the last one wins like JSON.parse", () => {
    const { value, warnings } = parseJsonc('{"mcpServers": {\n "a": 1,\n "a": 2}}', "/c/config.json");
    expect(value).toEqual({ mcpServers: { a: 2 } });
    expect(warnings).toEqual(['/c/config.json:3:2: duplicate key "a" in "mcpServers"; the last one wins']);
  });

  it("keeps a __proto__ key as a plain property, never as the prototype", () => {
    const { value } = parseJsonc('{"__proto__": {"polluted": true}}', "f");
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect((value as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(value as object)).toEqual(["__proto__"]);
  });
});
