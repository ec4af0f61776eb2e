/**
 * `${VAR}` expansion in config strings. Syntax (docs/configuration.md):
 * - `${NAME}`: the variable's value; an unset variable is an error (an empty one expands to "").
 * - `${NAME:-default}`: the value, or `default` when the variable is unset or empty (as in sh).
 * - `${env:NAME}` and `${env:NAME:-default}`: the same (the spelling VS Code and Cursor use).
 * - `$${`: a literal `${` (so `$${NAME}` gives the text `${NAME}`). Any other `$` is literal.
 * NAME is `[A-Za-z_][A-Za-z0-9_]*`. Defaults are plain text: they cannot contain `}` or another `${`.
 */

/** The outcome of expanding one string. */
export interface ExpandResult {
  /** The expanded text; unset variables without a default expand to "" (or stay as written, with `keepUnset`). */
  value: string;
  /** Variables referenced without a default that are not set, in order of first use. */
  unset: string[];
  /** Syntax problems (unterminated or malformed references), as sentences. */
  errors: string[];
}

const REFERENCE = /^(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s;

/** Options of {@link expandVars} and {@link expandDeep}. */
export interface ExpandOptions {
  /**
   * Leave a reference to an unset variable without a default as written (`${NAME}`) instead of expanding
   * it to "" (it is still reported in `unset`). For checking a file for another environment than this one.
   */
  keepUnset?: boolean;
}

/** Expands every variable reference in `input` from `env`. Pure; never throws. */
export function expandVars(input: string, env: NodeJS.ProcessEnv, options: ExpandOptions = {}): ExpandResult {
  const result: ExpandResult = { value: "", unset: [], errors: [] };
  if (!input.includes("${")) {
    result.value = input;
    return result;
  }
  let out = "";
  let i = 0;
  while (i < input.length) {
    const dollar = input.indexOf("$", i);
    if (dollar === -1) {
      out += input.slice(i);
      break;
    }
    out += input.slice(i, dollar);
    if (input.startsWith("$${", dollar)) {
      out += "${";
      i = dollar + 3;
      continue;
    }
    if (input[dollar + 1] !== "{") {
      out += "$";
      i = dollar + 1;
      continue;
    }
    const close = input.indexOf("}", dollar + 2);
    if (close === -1) {
      result.errors.push(`unterminated "\${" (add "}", or write "$\${" for a literal "\${")`);
      out += input.slice(dollar);
      break;
    }
    const body = input.slice(dollar + 2, close);
    out += resolveReference(body, env, result, options);
    i = close + 1;
  }
  result.value = out;
  return result;
}

function resolveReference(body: string, env: NodeJS.ProcessEnv, result: ExpandResult, options: ExpandOptions): string {
  const match = REFERENCE.exec(body);
  if (!match) {
    if (body.startsWith("input:")) {
      result.errors.push(`"\${${body}}": VS Code input variables are not supported; put the value in the environment and write \${NAME}`);
    } else {
      result.errors.push(`invalid variable reference "\${${body}}" (expected \${NAME} or \${NAME:-default})`);
    }
    return "";
  }
  const name = match[1]!;
  const fallback = match[2];
  if (fallback?.includes("${")) {
    result.errors.push(`"\${${body}}": a default cannot contain another variable`);
    return "";
  }
  const value = env[name];
  if (fallback !== undefined) return value ? value : fallback;
  if (value === undefined) {
    if (!result.unset.includes(name)) result.unset.push(name);
    return options.keepUnset ? `\${${body}}` : "";
  }
  return value;
}

/** A problem found while expanding a nested value, with the path of the string it was in. */
export interface ExpandProblem {
  /** `command`, `args[2]`, `env.TOKEN`, `headers.Authorization`, `roots[0].uri`. */
  path: string;
  /** Names of unset variables, or a syntax error sentence. */
  kind: "unset" | "syntax";
  message: string;
}

/**
 * Expands every string inside `value` (array elements and object property values, never keys) and
 * returns a new value plus the problems found. Non-string leaves are kept as they are.
 */
export function expandDeep(
  value: unknown,
  env: NodeJS.ProcessEnv,
  path = "",
  options: ExpandOptions = {},
): { value: unknown; problems: ExpandProblem[] } {
  const problems: ExpandProblem[] = [];
  const walk = (v: unknown, at: string): unknown => {
    if (typeof v === "string") {
      const r = expandVars(v, env, options);
      for (const name of r.unset) problems.push({ path: at, kind: "unset", message: name });
      for (const message of r.errors) problems.push({ path: at, kind: "syntax", message });
      return r.value;
    }
    if (Array.isArray(v)) return v.map((item, index) => walk(item, `${at}[${index}]`));
    if (v !== null && typeof v === "object") {
      // fromEntries defines own properties, so a "__proto__" key stays a plain key.
      return Object.fromEntries(Object.entries(v).map(([k, item]) => [k, walk(item, at ? `${at}.${k}` : k)]));
    }
    return v;
  };
  return { value: walk(value, path), problems };
}
