import { describe, expect, it } from "vitest";
import {
  countOption,
  intOption,
  parseArgPairs,
  parseCommand,
  parseJsonArguments,
  UsageError,
  type CommandSpec,
} from "../../src/cli/args.js";

const spec: CommandSpec = {
  name: "call",
  usage: "call SERVER TOOL [JSON]",
  summary: "Call a tool",
  options: {
    arg: { type: "string", multiple: true, description: "key=value" },
    timeout: { type: "string", value: "MS", description: "deadline" },
    json: { type: "boolean", description: "raw JSON" },
  },
  minPositionals: 2,
  maxPositionals: 3,
};

describe("parseCommand", () => {
  it("parses options and positionals", () => {
    const p = parseCommand(spec, ["srv", "tool", "--arg", "a=1", "--arg=b=x", "--json", "--timeout", "50"]);
    expect(p.positionals).toEqual(["srv", "tool"]);
    expect(p.values.arg).toEqual(["a=1", "b=x"]);
    expect(p.values.json).toBe(true);
    expect(intOption(p.values, "timeout", "call")).toBe(50);
  });

  it("accepts --help with no positionals", () => {
    expect(parseCommand(spec, ["--help"]).values.help).toBe(true);
    expect(parseCommand(spec, ["-h"]).values.help).toBe(true);
  });

  it.each([
    [["srv"], /missing argument: usage: mcpd call SERVER TOOL/],
    [["a", "b", "c", "d"], /unexpected argument: d/],
    [["a", "b", "--nope"], /unknown option --nope/],
    [["a", "b", "--timeout"], /option --timeout needs a value/],
  ])("rejects %j with a UsageError naming the problem", (argv, message) => {
    let caught: unknown;
    try {
      parseCommand(spec, argv);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(UsageError);
    expect((caught as UsageError).message).toMatch(message);
    expect((caught as UsageError).command).toBe("call");
  });

  it("rejects a timeout that is not a positive integer", () => {
    for (const bad of ["0", "-1", "1.5", "abc", ""]) {
      expect(() => intOption({ timeout: bad }, "timeout", "call")).toThrow(/--timeout needs a positive integer/);
    }
    expect(intOption({}, "timeout", "call", 7)).toBe(7);
  });

  it("regression: a count option accepts 0 (`mcpd logs -n 0` was a usage error)", () => {
    expect(countOption({ lines: "0" }, "lines", "logs", 50)).toBe(0);
    expect(countOption({ lines: "12" }, "lines", "logs", 50)).toBe(12);
    expect(countOption({}, "lines", "logs", 50)).toBe(50);
    for (const bad of ["-1", "1.5", "abc", "", "99999999999999999999"]) {
      expect(() => countOption({ lines: bad }, "lines", "logs", 50)).toThrow(/--lines needs a whole number \(0 or more\)/);
    }
  });
});

describe("parseArgPairs", () => {
  it("parses values as JSON when they parse, else keeps the string", () => {
    expect(parseArgPairs(["n=3", "ok=true", 'tags=["a",1]', "q=hello world", 's="quoted"', "empty=", "eq=a=b", 'obj={"x":1}'])).toEqual({
      n: 3,
      ok: true,
      tags: ["a", 1],
      q: "hello world",
      s: "quoted",
      empty: "",
      eq: "a=b",
      obj: { x: 1 },
    });
  });

  it("rejects a pair without a key", () => {
    expect(() => parseArgPairs(["novalue"])).toThrow(UsageError);
    expect(() => parseArgPairs(["=x"])).toThrow(/--arg needs key=value/);
  });
});

describe("parseJsonArguments", () => {
  it("accepts an object and refuses anything else", () => {
    expect(parseJsonArguments('{"ms": 10}')).toEqual({ ms: 10 });
    expect(() => parseJsonArguments("[1]")).toThrow(/must be a JSON object/);
    expect(() => parseJsonArguments("{bad")).toThrow(/not valid JSON/);
  });
});
