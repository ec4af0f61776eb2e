/**
 * Reads one object of the config file with its zod schema, key by key, into the keys whose values are
 * valid: each bad value is an error line naming the file, the place and the key's path (`"restart.windowMs"
 * must be ...`), each unknown key a warning with the closest known key. Key by key, not in one parse, so
 * one bad value leaves the others read (a cross-key check still sees them), and lines come in the
 * schema's key order, the order docs/configuration.md lists them in.
 */
import { z } from "zod";
import { isPlainObject, type ConfigIssues } from "./config-issues.js";
import { hintFor } from "./did-you-mean.js";

/** Where an object sits, and how its unknown keys are worded. */
export interface SchemaPlace {
  issues: ConfigIssues;
  /** The place in a line: `server "github"`, `"mcpd.defaults"`, or "" for the whole file. */
  where: string;
  /** What the object's keys are prefixed with in a line: "" or `mcpd.http.`. */
  prefix: string;
  /** Keys the caller reads itself (another place, another reader): neither read nor warned of here. */
  skip?: readonly string[];
  /** Keys a hint never suggests (other tools' keys, accepted and ignored). */
  noHint?: readonly string[];
  /** Old or other tools' names of keys, for hints: `timeoutMs` -> `timeout`. */
  renamed?: Readonly<Record<string, string>>;
  /** A warning of its own for an unknown key at this object's level; undefined for the usual one. */
  unknownKey?: (key: string) => string | undefined;
}

type AnyObject = z.ZodObject<z.ZodRawShape>;

/** Other names of an object schema's keys that hints point from (`allow` -> `include`). */
const RENAMED = new WeakMap<AnyObject, Readonly<Record<string, string>>>();

/** Registers `renamed` as the old or other names of `schema`'s keys, for hints; returns `schema`. */
export function renamedKeys<S extends AnyObject>(renamed: Readonly<Record<string, string>>, schema: S): S {
  RENAMED.set(schema, renamed);
  return schema;
}
const FAILED: unique symbol = Symbol("failed");

/**
 * The valid keys of `raw` read with `schema`; undefined when `raw` is no object (reported). Nested
 * objects are read key by key too.
 */
export function readWithSchema<S extends AnyObject>(schema: S, raw: unknown, place: SchemaPlace): Partial<z.output<S>> | undefined {
  const label = place.prefix.replace(/\.$/, "");
  if (!isPlainObject(raw)) {
    const result = schema.safeParse(raw);
    if (!result.success) reportErrors(result.error.issues, label, place);
    return undefined;
  }
  const shape = schema.shape;
  const known = Object.keys(shape).filter((k) => !place.noHint?.includes(k));
  for (const key of Object.keys(raw)) {
    if (Object.hasOwn(shape, key) || place.skip?.includes(key)) continue;
    const own = place.unknownKey?.(key);
    place.issues.warn(
      place.where,
      own ?? `unknown key "${place.prefix}${key}" ignored${hintFor(key, known, place.renamed ?? RENAMED.get(schema))}`,
    );
  }
  const out: Record<string, unknown> = {};
  for (const [key, sub] of Object.entries(shape)) {
    if (place.skip?.includes(key) || !Object.hasOwn(raw, key) || raw[key] === undefined) continue;
    const inner = sub instanceof z.ZodOptional ? sub.unwrap() : sub;
    if (inner instanceof z.ZodObject) {
      const nested = readWithSchema(inner, raw[key], { issues: place.issues, where: place.where, prefix: `${place.prefix}${key}.` });
      if (nested !== undefined) out[key] = nested;
      continue;
    }
    const value = readValue(sub as z.ZodType, raw[key], `${place.prefix}${key}`, place);
    if (value !== FAILED) out[key] = value;
  }
  return out as Partial<z.output<S>>;
}

/**
 * One key's value: its parsed value, or FAILED (reported). Unknown keys inside it (an object in an array)
 * are warned of and dropped, and the value is read again without them.
 */
function readValue(schema: z.ZodType, value: unknown, label: string, place: SchemaPlace): unknown {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const unknown = result.error.issues.filter((i) => i.code === "unrecognized_keys");
  for (const issue of unknown) {
    for (const key of issue.keys) place.issues.warn(place.where, `unknown key "${pathLabel(label, issue.path)}.${key}" ignored`);
  }
  if (unknown.length < result.error.issues.length) {
    reportErrors(result.error.issues, label, place);
    return FAILED;
  }
  const again = schema.safeParse(withoutKeys(value, unknown));
  if (again.success) return again.data;
  reportErrors(again.error.issues, label, place);
  return FAILED;
}

function reportErrors(issues: readonly z.core.$ZodIssue[], label: string, place: SchemaPlace): void {
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys") continue;
    const at = pathLabel(label, issue.path);
    place.issues.error(place.where, at === "" ? issue.message : `"${at}" ${issue.message}`);
  }
}

/** `roots` and [1, "uri"] -> `roots[1].uri`. */
export function pathLabel(label: string, path: readonly PropertyKey[]): string {
  let out = label;
  for (const step of path) out += typeof step === "number" ? `[${step}]` : out === "" ? String(step) : `.${String(step)}`;
  return out;
}

/** A copy of `value` without the unknown keys the issues name. */
function withoutKeys(value: unknown, issues: readonly z.core.$ZodIssueUnrecognizedKeys[]): unknown {
  const copy = structuredClone(value);
  for (const issue of issues) {
    let target: unknown = copy;
    for (const step of issue.path) target = (target as Record<PropertyKey, unknown>)[step];
    for (const key of issue.keys) delete (target as Record<string, unknown>)[key];
  }
  return copy;
}
