/** How deep {@link toLoggable} copies before writing `"[Object]"`: log fields are a few levels at most. */
const MAX_DEPTH = 8;

/**
 * An error as pino's standard serializer writes it: `type` (the constructor's name), `message`, `stack`,
 * then its own enumerable properties (`code`, `errno`, `syscall`, ...). Shallow: the values are left for
 * the caller to serialise.
 */
export function errorFields(err: Error): Record<string, unknown> {
  const out: Record<string, unknown> = { type: err.constructor?.name ?? err.name, message: err.message, stack: err.stack };
  for (const key of Object.keys(err)) if (!(key in out)) out[key] = (err as unknown as Record<string, unknown>)[key];
  if (err.cause !== undefined && !("cause" in out)) out.cause = err.cause;
  return out;
}

/** `String(value)`, or `"[unprintable]"` for a value that cannot be made a string (a null-prototype object). */
export function printable(value: unknown): string {
  try {
    return value instanceof Error ? value.message : String(value);
  } catch {
    return "[unprintable]";
  }
}

/** A property read that may throw (a getter, a Proxy trap). */
function read(obj: object, key: string): unknown {
  try {
    return (obj as Record<string, unknown>)[key];
  } catch (err) {
    return `[Throws: ${printable(err)}]`;
  }
}

function copy(value: unknown, ancestors: object[], depth: number): unknown {
  if (typeof value === "bigint") return value.toString();
  if (typeof value !== "object" || value === null) return typeof value === "function" || typeof value === "symbol" ? undefined : value;
  if (ancestors.includes(value)) return "[Circular]";
  if (depth >= MAX_DEPTH) return Array.isArray(value) ? "[Array]" : "[Object]";
  let source: unknown = value;
  if (value instanceof Error) source = errorFields(value);
  else if (typeof (value as { toJSON?: unknown }).toJSON === "function") {
    try {
      source = (value as { toJSON: () => unknown }).toJSON();
    } catch (err) {
      return `[Throws: ${printable(err)}]`;
    }
    if (typeof source !== "object" || source === null) return copy(source, ancestors, depth);
  }
  ancestors.push(value);
  try {
    if (Array.isArray(source)) return source.map((v) => copy(v, ancestors, depth + 1) ?? null);
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(source as object)) {
      const v = copy(read(source as object, key), ancestors, depth + 1);
      if (v !== undefined) out[key] = v;
    }
    return out;
  } finally {
    ancestors.pop();
  }
}

/**
 * A copy of `value` that JSON.stringify can always write: a reference back to an enclosing object becomes
 * `"[Circular]"` (as in pino), a BigInt its decimal string, an error {@link errorFields}, a throwing getter
 * or toJSON `"[Throws: ...]"`, and anything deeper than 8 levels `"[Object]"`. Used when the fast
 * JSON.stringify of a log line's fields has thrown.
 */
export function toLoggable(value: unknown): unknown {
  return copy(value, [], 0);
}
