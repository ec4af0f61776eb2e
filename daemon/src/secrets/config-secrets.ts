import type { ResolvedServerConfig } from "../config/config-schema.js";
import { looksGenerated } from "./generated-value.js";
import { redactArgs } from "./redact-args.js";
import { REDACTED } from "./redacted.js";
import { AUTH_SCHEMES, isSecretName, secretNameStrength } from "./secret-names.js";

/** Letters only, optionally joined by `-`/`_`/space: a setting (`production`, `oauth-device`), not a credential. */
const PLAIN_WORDS = /^[A-Za-z]+(?:[-_ ][A-Za-z]+)*$/;

/** A file path (`/home/me/x`, `~/.config/x`, `./x`, `C:\\x`): where a credential may be, not the credential. */
const PATH_LIKE = /^(?:~?\/|\.\.?\/|[A-Za-z]:\\)/;

/** The credential after an auth scheme, whatever the name (`Authorization: Bearer X`, `AUTH_HEADER=Basic X`). */
const SCHEME_CREDENTIAL = new RegExp(`^(?:${AUTH_SCHEMES.join("|")})\\s+(.+)$`, "i");

/** The secrets of a `NAME=value` setting (env value, header): by its name, its shape and any URL in it. */
function settingSecrets(name: string, value: string): string[] {
  const out: string[] = [];
  const strength = secretNameStrength(name);
  const byName =
    (strength === "strong" && !(PATH_LIKE.test(value) && !looksGenerated(value))) ||
    (strength === "weak" && !PLAIN_WORDS.test(value) && !PATH_LIKE.test(value));
  if (byName || looksGenerated(value)) out.push(value);
  const scheme = SCHEME_CREDENTIAL.exec(value);
  if (scheme?.[1]) out.push(scheme[1]);
  out.push(...urlSecrets(value));
  return out;
}

/**
 * The secret values one server config holds, by this rule:
 * - `env` and `headers` values whose name names a secret ({@link secretNameStrength}; for `auth`,
 *   `session`, `private`, `sig` only values that are not plain words), except file paths;
 * - any `env`, `headers` or argument value that {@link looksGenerated};
 * - the credential after `Bearer `/`Basic `/`Token `;
 * - values of secret-looking arguments (those {@link redactArgs} masks: `--api-key=X`, `--token X`);
 * - the user, password and secret-named query values of URLs (the server's own, and any in its env,
 *   headers or arguments);
 * - the OAuth `auth.clientSecret` and `auth.privateKey` (and each line of the key).
 * Never the server's own name. Values too short to mask are dropped by the scrubber.
 */
export function secretValues(config: ResolvedServerConfig): string[] {
  const out: string[] = [];
  const t = config.transport;
  if ("command" in t) {
    for (const [name, value] of Object.entries(t.env ?? {})) out.push(...settingSecrets(name, value));
    const args = t.args ?? [];
    const masked = redactArgs(args);
    args.forEach((arg, i) => {
      const m = masked[i];
      if (looksGenerated(arg)) out.push(arg);
      if (m === undefined || m === arg) return;
      if (m === REDACTED) out.push(arg);
      else if (m.endsWith(`=${REDACTED}`) && arg.startsWith(m.slice(0, -REDACTED.length))) out.push(arg.slice(m.length - REDACTED.length));
      else out.push(...urlSecrets(arg));
    });
  } else {
    out.push(...urlSecrets(t.url));
    for (const [name, value] of Object.entries(t.headers ?? {})) out.push(...settingSecrets(name, value));
    if (config.auth) {
      // The OAuth client's credentials; its key also line by line, in case a line of it is quoted alone.
      if (config.auth.clientSecret !== undefined) out.push(config.auth.clientSecret);
      if (config.auth.privateKey !== undefined) out.push(config.auth.privateKey, ...pemLines(config.auth.privateKey));
    }
  }
  return out.filter((v) => v !== config.name);
}

/** The base64 lines of a PEM block (not its BEGIN/END lines). */
export function pemLines(pem: string): string[] {
  return pem
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("-----"));
}

/** Credentials in a URL (or in a string holding one): user, password, values of secret-named query parameters. */
function urlSecrets(text: string): string[] {
  const out: string[] = [];
  const match = /[a-z][a-z0-9+.-]*:\/\/\S+/i.exec(text);
  let url: URL;
  try {
    url = new URL(match?.[0] ?? "");
  } catch {
    return out;
  }
  // Both as written and decoded: a `%` that starts no escape (`pw%zz`) stays as it is in the decoded form.
  const user = safeDecode(url.username);
  const password = safeDecode(url.password);
  for (const [raw, decoded] of [
    [url.username, user],
    [url.password, password],
  ]) {
    if (decoded) out.push(decoded);
    if (raw && raw !== decoded) out.push(raw);
  }
  // What HTTP clients send for URL credentials (Authorization: Basic ...).
  if (user || password) out.push(Buffer.from(`${user}:${password}`).toString("base64"));
  // The values redactUrl masks.
  for (const [name, value] of url.searchParams) if (value !== REDACTED && isSecretName(name)) out.push(value);
  return out;
}

/** `text` percent-decoded; as written when it holds a `%` that starts no valid escape (decodeURIComponent throws). */
function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
