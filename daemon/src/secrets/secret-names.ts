/**
 * The one rule for which names name a secret: env keys, header names, flags (`--api-key`), `NAME=value`
 * arguments, URL query parameters and log fields all ask it. A name is split into its lower-case words
 * (at `_`, `-`, `.` and camelCase: `X-Api-Key` -> x, api, key; `ghToken` -> gh, token) and judged by them.
 */

/** Words that make a name a secret's, whatever its value looks like: `DB_PASS`, `apiKey`, `X-Api-Key`. */
const SECRET_WORDS: ReadonlySet<string> = new Set([
  "token",
  "secret",
  "secrets",
  "password",
  "passwd",
  "pwd",
  "pass",
  "passphrase",
  "key",
  "apikey",
  "credential",
  "credentials",
  "creds",
  "cookie",
  "bearer",
  "authorization",
  "signature",
  "jwt",
  "pat",
]);

/**
 * Words that make a name a secret's only for a value that is not a plain word: `AUTH=oauth` or
 * `SESSION=default` are settings, `SESSION=Qm7v...` is not.
 */
const WEAK_SECRET_WORDS: ReadonlySet<string> = new Set(["auth", "session", "private", "sig"]);

/** A secret word run together with others at the end of one word: `PGPASSWORD`, `GHTOKEN`, `MYAPIKEY`. */
const SECRET_WORD_END = /(?:password|passwd|secret|token|apikey|accesskey|privatekey|secretkey|credentials?)$/;

/**
 * Last words that name something about a secret rather than the secret itself: `AUTH_MODE`, `TOKEN_URL`,
 * `KEY_FILE`, `SESSION_TIMEOUT`, `CLIENT_ID` (`MAX_TOKENS` is covered by `tokens` not being a secret word).
 * Their values are still taken when they look generated or hold URL credentials.
 */
const NOT_THE_SECRET: ReadonlySet<string> = new Set([
  "mode",
  "type",
  "method",
  "methods",
  "provider",
  "url",
  "uri",
  "endpoint",
  "host",
  "hostname",
  "port",
  "path",
  "file",
  "dir",
  "directory",
  "name",
  "names",
  "enabled",
  "disabled",
  "enable",
  "disable",
  "ttl",
  "timeout",
  "expiry",
  "expires",
  "header",
  "scheme",
  "kind",
  "id",
  "version",
  "format",
  "level",
  "region",
  "scope",
  "scopes",
  "prefix",
  "strategy",
  "length",
  "size",
  "limit",
  "count",
  "user",
  "username",
]);

/** The lower-case words of a name: `X-Api-Key` -> x, api, key; `ghToken` -> gh, token. */
function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== "");
}

/** How strongly a name names a secret. */
export type SecretNameStrength = "strong" | "weak";

/**
 * How strongly `name` names a secret: `strong` (its value is a secret whatever it is), `weak` (`auth`,
 * `session`, `private`, `sig`: only a value that is not a plain word), undefined when it does not. A
 * secret word counts as a whole word of the name or run together at the end of one (`PGPASSWORD`); not
 * when the name's last word says the value is about the secret (`AUTH_MODE`, `TOKEN_URL`, `KEY_FILE`).
 */
export function secretNameStrength(name: string): SecretNameStrength | undefined {
  const words = nameWords(name);
  if (words.length === 0) return undefined;
  if (words.length > 1 && NOT_THE_SECRET.has(words[words.length - 1] as string)) return undefined;
  if (words.some((w) => SECRET_WORDS.has(w) || SECRET_WORD_END.test(w))) return "strong";
  if (words.some((w) => WEAK_SECRET_WORDS.has(w))) return "weak";
  return undefined;
}

/**
 * Whether an env key, header, flag, `NAME=` argument or URL query parameter names a secret, strongly or
 * weakly ({@link secretNameStrength}). What is shown (a config, a URL, a command line) masks its value:
 * masking a setting costs the reader little, leaking a secret costs much more.
 */
export function isSecretName(name: string): boolean {
  return secretNameStrength(name) !== undefined;
}

/** Fields that hold a record of settings (a process's environment, a request's headers): masked whole. */
const SETTINGS_RECORDS: ReadonlySet<string> = new Set(["env", "headers"]);

/** Verdicts of {@link isSecretField}: log fields are a small set named by mcpd's code; bounded all the same. */
const fieldVerdicts = new Map<string, boolean>();
const MAX_FIELD_VERDICTS = 1024;

/**
 * Whether a log field (or an error's own property) named `key` is masked whole: a strong secret name
 * (`token`, `authorization`, `apiKey`, `GITHUB_TOKEN`), or a record of settings (`env`, `headers`). A
 * weak name (`session`, `auth`) is not: a field's name is chosen by mcpd's code, where those words name
 * its own ids and settings; the scrubber masks any configured secret value they may hold.
 */
export function isSecretField(key: string): boolean {
  let verdict = fieldVerdicts.get(key);
  if (verdict === undefined) {
    verdict = SETTINGS_RECORDS.has(key) || secretNameStrength(key) === "strong";
    if (fieldVerdicts.size >= MAX_FIELD_VERDICTS) fieldVerdicts.clear();
    fieldVerdicts.set(key, verdict);
  }
  return verdict;
}

/** Schemes whose next word is a credential in a header or env value: `Authorization: Bearer X`, `AUTH_HEADER=Basic X`. */
export const AUTH_SCHEMES: readonly string[] = ["Bearer", "Basic", "Token"];
