import { AUTH_SCHEMES, REDACTED, redactArgs, redactUrl } from "../secrets/index.js";
import type { ServerEntry } from "./import-types.js";

/** A `${...}` reference (mcpd resolves it when it loads the file; the text itself is no secret). */
const REFERENCE = /\$\{[^}]*\}/g;

/** An auth scheme word and its space, all that is left of `Bearer ${TOKEN}` once its reference is taken out. */
const SCHEME_ONLY = new RegExp(`^(?:${AUTH_SCHEMES.join("|")}) $`, "i");

/** An `env` or `headers` value as shown: references and an auth scheme word kept, any other text masked. */
function showValue(value: string): string {
  const literal = value.replace(REFERENCE, "");
  if (literal === "") return value;
  // `Bearer ${TOKEN}`: the scheme says how the reference is used; the secret is the reference.
  if (SCHEME_ONLY.test(literal) && value.startsWith(literal) && literal.length < value.length) return value;
  return REDACTED;
}

function showRecord(record: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, showValue(v)]));
}

/**
 * One imported entry as compact JSON, safe to print: the entry as written into mcpd's config, except
 * that literal `env` and `headers` values, credentials in URLs and secret-looking arguments are masked
 * (`${VAR}` references are shown: they are names, not values).
 */
export function displayEntry(entry: ServerEntry): string {
  const shown: ServerEntry = { ...entry };
  if (entry.args) shown.args = redactArgs(entry.args);
  if (entry.env) shown.env = showRecord(entry.env);
  if (entry.url !== undefined) shown.url = redactUrl(entry.url);
  if (entry.headers) shown.headers = showRecord(entry.headers);
  return JSON.stringify(shown);
}
