import { describe, expect, it } from "vitest";
import { expandDeep, expandVars } from "../../src/config/expand-vars.js";

const env = { HOME: "/home/ann", TOKEN: "t0k", EMPTY: "" };

describe("expandVars", () => {
  it("leaves text without references untouched, including lone $ signs", () => {
    expect(expandVars("plain $HOME $ { } $5", env)).toEqual({ value: "plain $HOME $ { } $5", unset: [], errors: [] });
  });

  it("expands ${NAME} anywhere in a string, several times", () => {
    expect(expandVars("${HOME}/x:${TOKEN}-${TOKEN}", env).value).toBe("/home/ann/x:t0k-t0k");
  });

  it("expands a set-but-empty variable to the empty string without error", () => {
    expect(expandVars("a${EMPTY}b", env)).toEqual({ value: "ab", unset: [], errors: [] });
  });

  it("${NAME:-default} uses the default when the variable is unset or empty, as sh does", () => {
    expect(expandVars("${NOPE:-fallback}", env).value).toBe("fallback");
    expect(expandVars("${EMPTY:-fallback}", env).value).toBe("fallback");
    expect(expandVars("${TOKEN:-fallback}", env).value).toBe("t0k");
    expect(expandVars("${NOPE:-}", env)).toEqual({ value: "", unset: [], errors: [] });
    expect(expandVars("${NOPE:-a b:c/d}", env).value).toBe("a b:c/d");
  });

  it("accepts VS Code's ${env:NAME} spelling", () => {
    expect(expandVars("${env:TOKEN}", env).value).toBe("t0k");
    expect(expandVars("${env:NOPE:-d}", env).value).toBe("d");
  });

  it("reports unset variables without a default, once each, in order", () => {
    expect(expandVars("${A}${B}${A}", env)).toEqual({ value: "", unset: ["A", "B"], errors: [] });
  });

  it("$${ is an escape for a literal ${", () => {
    expect(expandVars("$${TOKEN} and ${TOKEN}", env).value).toBe("${TOKEN} and t0k");
    expect(expandVars("$${NOPE}", env)).toEqual({ value: "${NOPE}", unset: [], errors: [] });
  });

  it("reports malformed references", () => {
    expect(expandVars("x${TOKEN", env).errors[0]).toMatch(/unterminated/);
    expect(expandVars("${1BAD}", env).errors[0]).toMatch(/invalid variable reference "\$\{1BAD\}"/);
    expect(expandVars("${}", env).errors[0]).toMatch(/invalid variable reference/);
    expect(expandVars("${input:apiKey}", env).errors[0]).toMatch(/VS Code input variables are not supported/);
    expect(expandVars("${A:-${B}}", env).errors[0]).toMatch(/default cannot contain another variable/);
  });
});

describe("expandDeep", () => {
  it("expands strings in nested values (never keys) and reports problems with their paths", () => {
    const input = { command: "${HOME}/bin", args: ["--t", "${TOKEN}", 3], env: { "${TOKEN}": "${MISSING}" }, n: 1 };
    const { value, problems } = expandDeep(input, env);
    expect(value).toEqual({ command: "/home/ann/bin", args: ["--t", "t0k", 3], env: { "${TOKEN}": "" }, n: 1 });
    expect(problems).toEqual([{ path: "env.${TOKEN}", kind: "unset", message: "MISSING" }]);
  });

  it("keeps a __proto__ key as a plain property", () => {
    const input = JSON.parse('{"env": {"__proto__": "x"}}') as unknown;
    const { value } = expandDeep(input, env);
    const out = value as { env: Record<string, string> };
    expect(Object.getPrototypeOf(out.env)).toBe(Object.prototype);
    expect(Object.keys(out.env)).toEqual(["__proto__"]);
  });
});
