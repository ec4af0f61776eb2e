/**
 * The building blocks of the config file's schema (config-file-schema.ts): each a zod 4 schema whose
 * error is the sentence mcpd prints after the key's name, `must be ..., got ...`, so the schema that
 * checks the file also words its errors, and its JSON Schema (`mcpd config schema`) carries the same
 * bounds for editors.
 */
import { z } from "zod";
import { describeValue } from "./config-issues.js";
import { hintFor } from "./did-you-mean.js";

/** The sentence after a key's name for a value that is not `expected`: `must be <expected>, got <value>`. */
export function mustBe(expected: string): (issue: { input?: unknown }) => string {
  return (issue) => `must be ${expected}, got ${describeValue(issue.input)}`;
}

/**
 * An integer from `min` to `max`; `expected` words it (`a positive integer (milliseconds)`). With
 * `sayMax`, a too large integer's error adds `of at most <max>` (for bounds the wording leaves out).
 */
export function intIn(min: number, max: number, expected: string, sayMax = false) {
  const error = mustBe(expected);
  const tooBig = sayMax ? mustBe(`${expected} of at most ${max}`) : error;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error: tooBig });
}

/** true or false. */
export function bool() {
  return z.boolean({ error: mustBe("true or false") });
}

/** One of `values`; a misspelt one gets a `did you mean` hint. */
export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  const list = values.map((v) => `"${v}"`).join(", ");
  return z.enum(values, {
    error: (issue) => {
      const hint = typeof issue.input === "string" ? hintFor(issue.input, values) : "";
      return `must be one of ${list}, got ${describeValue(issue.input)}${hint}`;
    },
  });
}

/** An object with these keys; other keys are warned of (read-with-schema.ts), and an editor flags them. */
export function keys<S extends z.ZodRawShape>(shape: S, expected: string) {
  return z.strictObject(shape, { error: (issue) => objectError(issue, expected) });
}

/** The error of an object schema: the sentence for a value that is no object; the caller words unknown keys. */
function objectError(issue: { code?: string; input?: unknown }, expected: string): string | undefined {
  if (issue.code === "unrecognized_keys") return undefined;
  return `must be ${expected}, got ${describeValue(issue.input)}`;
}

/**
 * What a value that is not a string is called in a message that must not quote it (env values and
 * headers may be secrets): `a number`, `a null`, `an array`.
 */
export function kindOf(value: unknown): string {
  const kind = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
  return `${/^[aeiou]/.test(kind) ? "an" : "a"} ${kind}`;
}

/**
 * The error of a key whose value may hold secrets (`env`, `headers`) when it is not `expected`:
 * `must be <expected>, got <kind>`, never the value itself (`"headers": "Authorization: Bearer ..."`).
 */
export function mustBeSecretSafe(expected: string): (issue: { input?: unknown }) => string {
  return (issue) => `must be ${expected}, got ${kindOf(issue.input)}`;
}
