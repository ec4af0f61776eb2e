import { REDACTED, redactArgs, redactUrl, type ResolvedServerConfig } from "../config/index.js";

/**
 * Secret values shorter than this many characters are not scrubbed: replacing every "1" or "true" in
 * the logs would destroy them, and values that short are not credentials anyway.
 */
export const MIN_SCRUBBED_SECRET_CHARS = 6;

/**
 * Words that make a name (env key, header, flag) a secret's name, whatever its value looks like. Matched
 * as whole words of the name (split at `_`, `-`, `.` and camelCase): `DB_PASS`, `apiKey`, `X-Api-Key`.
 */
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
 * `KEY_FILE`, `SESSION_TIMEOUT`, `MAX_TOKENS` is covered by `tokens` not being a secret word. Their values
 * are still taken when they look generated or hold URL credentials.
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

/** How strongly a name names a secret: `strong` (any value), `weak` (values that are not plain words), none. */
function secretNameStrength(name: string): "strong" | "weak" | undefined {
  const words = nameWords(name);
  if (words.length === 0) return undefined;
  if (words.length > 1 && NOT_THE_SECRET.has(words[words.length - 1] as string)) return undefined;
  if (words.some((w) => SECRET_WORDS.has(w) || SECRET_WORD_END.test(w))) return "strong";
  if (words.some((w) => WEAK_SECRET_WORDS.has(w))) return "weak";
  return undefined;
}

/**
 * Whether an env key, header or flag name names a secret (token, secret, password, key, credential,
 * auth, cookie, session, ...), as whole words of the name; not when its last word says it is about the
 * secret (`AUTH_MODE`, `TOKEN_URL`, `KEY_FILE`).
 */
export function isSecretName(name: string): boolean {
  return secretNameStrength(name) !== undefined;
}

/** Prefixes of well-known generated credentials (GitHub, GitLab, OpenAI/Stripe, Slack, AWS, Google, JWT, ...). */
const KNOWN_PREFIX = new RegExp(
  "^(?:gh[pousr]_|github_pat_|glpat-|sk-|sk_(?:live|test)_|rk_(?:live|test)_|pk_live_|xox[abposr]-|xapp-|hf_|npm_|pypi-" +
    "|AKIA|ASIA|AIza|ya29\\.|dop_v1_|shp(?:at|ss|ca|pa)_|SG\\.|eyJ)",
);

/** Bits of Shannon entropy per character. */
function entropy(text: string): number {
  const counts = new Map<string, number>();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) bits -= (n / text.length) * Math.log2(n / text.length);
  return bits;
}

/** Character class for {@link looksGenerated}: lower, upper, digit, other. */
function charClass(ch: string): number {
  if (ch >= "a" && ch <= "z") return 0;
  if (ch >= "A" && ch <= "Z") return 1;
  if (ch >= "0" && ch <= "9") return 2;
  return 3;
}

/**
 * Whether a value looks like a generated credential: a well-known token prefix (`ghp_`, `sk-`,
 * `xoxb-`, `AKIA`, a JWT, ...; 12+ characters, no space), 32+ hex digits, a UUID, or 16+ characters of
 * the base64/base64url alphabet that mix letters and digits the way random strings do (the character
 * class changes at 30%+ of positions, 20%+ from 32 characters on, and parts between `-`/`_` are not
 * plain words or numbers). Paths, flags (`--x=y`), dotted versions, e-mail addresses, URLs and words
 * joined by dashes never match.
 */
export function looksGenerated(value: string): boolean {
  if (/\s/.test(value)) return false;
  if (value.length >= 12 && KNOWN_PREFIX.test(value)) return true;
  if (/^[0-9a-f]{32,}$/i.test(value)) return true;
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) return true;
  // `=` only as base64 padding; a leading `-` or `/` is a flag or a path.
  if (value.length < 16 || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(value) || /^[-/]/.test(value)) return false;
  if (!/[0-9]/.test(value) || !/[A-Za-z]/.test(value)) return false;
  // Words and numbers joined by separators (`node_modules_v18_2024`) are names, not randomness.
  const parts = value.split(/[-_]+/).filter((p) => p.length >= 4);
  if (value.split(/[-_]+/).length > 1 && parts.every((p) => /^[A-Za-z]+$/.test(p) || /^[0-9]+$/.test(p))) return false;
  let changes = 0;
  for (let i = 1; i < value.length; i++) if (charClass(value[i] as string) !== charClass(value[i - 1] as string)) changes++;
  // Random text over 36-64 symbols changes class at 40-60% of positions; names and words far less.
  return changes / (value.length - 1) >= (value.length >= 32 ? 0.2 : 0.3) && entropy(value) >= 3;
}

/** Letters only, optionally joined by `-`/`_`/space: a setting (`production`, `oauth-device`), not a credential. */
const PLAIN_WORDS = /^[A-Za-z]+(?:[-_ ][A-Za-z]+)*$/;

/** A file path (`/home/me/x`, `~/.config/x`, `./x`, `C:\\x`): where a credential may be, not the credential. */
const PATH_LIKE = /^(?:~?\/|\.\.?\/|[A-Za-z]:\\)/;

/** The secrets of a `NAME=value` setting (env value, header): by its name, its shape and any URL in it. */
function settingSecrets(name: string, value: string): string[] {
  const out: string[] = [];
  const strength = secretNameStrength(name);
  const byName =
    (strength === "strong" && !(PATH_LIKE.test(value) && !looksGenerated(value))) ||
    (strength === "weak" && !PLAIN_WORDS.test(value) && !PATH_LIKE.test(value));
  if (byName || looksGenerated(value)) out.push(value);
  // The credential after an auth scheme, whatever the name (`Authorization: Bearer X`, `AUTH_HEADER=Basic X`).
  const scheme = /^(?:Bearer|Basic|Token)\s+(.+)$/i.exec(value);
  if (scheme?.[1]) out.push(scheme[1]);
  out.push(...urlSecrets(value));
  return out;
}

/**
 * The secret values one server config holds, by this rule:
 * - `env` and `headers` values whose name names a secret ({@link isSecretName}; for `auth`, `session`,
 *   `private` only values that are not plain words), except file paths;
 * - any `env`, `headers` or argument value that {@link looksGenerated};
 * - the credential after `Bearer `/`Basic `/`Token `;
 * - values of secret-looking arguments (those {@link redactArgs} masks: `--api-key=X`, `--token X`);
 * - the user, password and secret-looking query values of URLs (the server's own, and any in its env,
 *   headers or arguments);
 * - the OAuth `auth.clientSecret` and `auth.privateKey` (and each line of the key).
 * Never the server's own name. Values under {@link MIN_SCRUBBED_SECRET_CHARS} are dropped later.
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

/** Credentials in a URL (or in a string holding one): user, password, secret-looking query values. */
function urlSecrets(text: string): string[] {
  const out: string[] = [];
  const match = /[a-z][a-z0-9+.-]*:\/\/\S+/i.exec(text);
  let url: URL;
  try {
    url = new URL(match?.[0] ?? "");
  } catch {
    return out;
  }
  const user = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  if (user) out.push(user);
  if (password) out.push(password);
  // What HTTP clients send for URL credentials (Authorization: Basic ...).
  if (user || password) out.push(Buffer.from(`${user}:${password}`).toString("base64"));
  // Query values are secret when redactUrl masks them.
  const masked = new URL(redactUrl(url.href));
  for (const [name, value] of url.searchParams) {
    if (value !== REDACTED && masked.searchParams.getAll(name).includes(REDACTED)) out.push(value);
  }
  return out;
}

/**
 * Replaces the secret values of every configured server ({@link secretValues}: by name, shape and URL
 * credentials, never a server's name) with `***` in text the daemon emits about its servers: log lines,
 * and the errors, states and stderr lines it reports to clients. Config redaction
 * masks the config itself; this catches the secrets a server echoes back (a usage error naming its
 * `--api-key=...`, an HTTP library quoting its URL) on their way out. Each value is matched as written,
 * URL-encoded and JSON-escaped. Not applied to results relayed to clients: those are the server's data.
 */
export class SecretScrubber {
  private seen = new Set<ResolvedServerConfig>();
  private readonly values = new Set<string>();
  /** Every server name seen: never masked, nor any part of one. */
  private readonly names = new Set<string>();
  private needles: string[] = [];
  /** The secrets {@link extra} gave at its last version (replaced whole when its version changes). */
  private extraValues = new Set<string>();
  private extraVersion = -1;

  /**
   * @param source the configs whose secrets to scrub; asked again on every use. Secrets of configs that
   * are gone (a server removed or changed by reload) stay scrubbed: its last lines may still come.
   * @param extra secrets that are not in any config (OAuth tokens and client secrets), read again
   * whenever its `version` changes.
   */
  constructor(
    private readonly source: () => Iterable<ResolvedServerConfig>,
    private readonly extra?: { readonly version: number; secrets(): string[] },
  ) {}

  private refresh(): void {
    let changed = false;
    if (this.extra && this.extra.version !== this.extraVersion) {
      this.extraVersion = this.extra.version;
      this.extraValues = new Set(
        this.extra
          .secrets()
          .filter((v) => v.length >= MIN_SCRUBBED_SECRET_CHARS)
          .flatMap((v) => [v, encodeURIComponent(v), JSON.stringify(v).slice(1, -1)]),
      );
      changed = true;
    }
    for (const c of this.source()) {
      if (this.seen.has(c)) continue;
      this.seen.add(c);
      if (!this.names.has(c.name)) {
        this.names.add(c.name);
        changed = true;
      }
      for (const v of secretValues(c)) {
        if (v.length < MIN_SCRUBBED_SECRET_CHARS) continue;
        for (const form of [v, encodeURIComponent(v), JSON.stringify(v).slice(1, -1)]) {
          if (!this.values.has(form)) {
            this.values.add(form);
            changed = true;
          }
        }
      }
    }
    if (!changed) return;
    // A value that is (part of) a server's name is not masked: `Unknown tool "***__echo"` helps no one,
    // and a name is in the config file, the socket's answers and every log line anyway.
    const names = [...this.names];
    // Longest first, so a secret that contains another is replaced whole.
    this.needles = [...new Set([...this.values, ...this.extraValues])]
      .filter((v) => !names.some((n) => n.includes(v)))
      .sort((a, b) => b.length - a.length);
  }

  /** `text` with every known secret value replaced by `***`. */
  scrub(text: string): string {
    this.refresh();
    let out = text;
    for (const n of this.needles) if (out.includes(n)) out = out.split(n).join(REDACTED);
    return out;
  }

  /**
   * A copy of a JSON value with every string scrubbed; the value itself when it holds no secret.
   * `undefined` when it cannot be scrubbed (no JSON form): better lost than leaked.
   */
  scrubValue<T>(value: T): T | undefined {
    this.refresh();
    if (this.needles.length === 0 || value === undefined) return value;
    try {
      const json = JSON.stringify(value);
      const scrubbed = this.scrub(json);
      return scrubbed === json ? value : (JSON.parse(scrubbed) as T);
    } catch {
      return undefined;
    }
  }
}
