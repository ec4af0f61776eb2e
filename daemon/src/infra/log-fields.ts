import { stdSerializers } from "pino";
import { isSecretField, REDACTED } from "../secrets/index.js";

/**
 * Keys the line itself writes. A call's field of the same name is written as `_<name>` (`_pid`): pino
 * would write the key twice, and a reader keeps the last (a server's pid would pass for the daemon's).
 */
const OWN_KEYS: ReadonlySet<string> = new Set(["level", "time", "pid"]);

/** `String(value)`, or `"[unprintable]"` for a value that cannot be made a string (a null-prototype object). */
export function printable(value: unknown): string {
  try {
    return value instanceof Error ? value.message : String(value);
  } catch {
    return "[unprintable]";
  }
}

/** `obj` with its secret-named fields ({@link isSecretField}) `***`; `obj` itself when it has none. */
function masked(obj: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(obj)) {
    if (!isSecretField(key) || obj[key] === undefined) continue;
    out ??= { ...obj };
    out[key] = REDACTED;
  }
  return out ?? obj;
}

/**
 * An error as pino writes it (pino's `err` serializer: type, message and stack with their causes, own
 * properties), with its own properties that have a secret's name (`token`, an `apiKey`) masked.
 */
export function serializeError(err: unknown): unknown {
  const out = stdSerializers.err(err as Error);
  return out === err ? err : masked(out as unknown as Record<string, unknown>);
}

/**
 * A field's value as written: an error serialized, an object one level down with secret fields masked. An
 * object that throws when read (a getter, a Proxy) is left to pino, which writes what it can.
 */
function fieldValue(value: unknown): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  try {
    return readable(value);
  } catch {
    return value;
  }
}

function readable(value: object): unknown {
  if (value instanceof Error) return serializeError(value);
  let out: Record<string, unknown> | undefined;
  const inner = value as Record<string, unknown>;
  for (const key of Object.keys(inner)) {
    const v = inner[key];
    const next = isSecretField(key) ? (v === undefined ? undefined : REDACTED) : v instanceof Error ? serializeError(v) : v;
    if (next === v) continue;
    out ??= { ...inner };
    out[key] = next;
  }
  return out ?? value;
}

/**
 * The root logger's `formatters.log`: a call's fields as the line holds them. A field with a secret's name
 * ({@link isSecretField}: `GITHUB_TOKEN`, `X-Api-Key`, `env`, `headers`), top level or one object down, is
 * `***` (pino's `redact` takes only the paths it is given; this takes any name); an error anywhere in
 * those two levels is written as pino writes `err`; a field named like the line's own keys becomes
 * `_level`, `_time`, `_pid`. The caller's object is never changed: a copy is made when anything differs.
 */
export function logFields(obj: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(obj)) {
    const value = obj[key];
    // pino serializes `err` itself (with serializeError).
    const next = isSecretField(key) ? (value === undefined ? undefined : REDACTED) : key === "err" ? value : fieldValue(value);
    const own = OWN_KEYS.has(key);
    if (next === value && !own) continue;
    out ??= { ...obj };
    if (own) {
      delete out[key];
      out[`_${key}`] = next;
    } else out[key] = next;
  }
  return out ?? obj;
}
