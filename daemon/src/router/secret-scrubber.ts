import { REDACTED, redactArgs, redactUrl, type ResolvedServerConfig } from "../config/index.js";

/**
 * Secret values shorter than this many characters are not scrubbed: replacing every "1" or "true" in
 * the logs would destroy them, and values that short are not credentials anyway.
 */
export const MIN_SCRUBBED_SECRET_CHARS = 6;

/**
 * The secret values one server config holds: every `env` and `headers` value (and the credential after
 * `Bearer `/`Basic `), the values of secret-looking arguments (those {@link redactArgs} masks), and the
 * user, password and secret-looking query values of URLs (the server's own and any in its arguments).
 */
export function secretValues(config: ResolvedServerConfig): string[] {
  const out: string[] = [];
  const t = config.transport;
  if ("command" in t) {
    for (const v of Object.values(t.env ?? {})) out.push(v);
    const args = t.args ?? [];
    const masked = redactArgs(args);
    args.forEach((arg, i) => {
      const m = masked[i];
      if (m === undefined || m === arg) return;
      if (m === REDACTED) out.push(arg);
      else if (m.endsWith(`=${REDACTED}`) && arg.startsWith(m.slice(0, -REDACTED.length))) out.push(arg.slice(m.length - REDACTED.length));
      else out.push(...urlSecrets(arg));
    });
  } else {
    out.push(...urlSecrets(t.url));
    for (const v of Object.values(t.headers ?? {})) {
      out.push(v);
      const scheme = /^(?:Bearer|Basic|Token)\s+(.+)$/i.exec(v);
      if (scheme?.[1]) out.push(scheme[1]);
    }
  }
  return out;
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
 * Replaces the secret values of every configured server with `***` in text the daemon emits about its
 * servers: log lines, and the errors, states and stderr lines it reports to clients. Config redaction
 * masks the config itself; this catches the secrets a server echoes back (a usage error naming its
 * `--api-key=...`, an HTTP library quoting its URL) on their way out. Each value is matched as written,
 * URL-encoded and JSON-escaped. Not applied to results relayed to clients: those are the server's data.
 */
export class SecretScrubber {
  private seen = new Set<ResolvedServerConfig>();
  private readonly values = new Set<string>();
  private needles: string[] = [];

  /**
   * @param source the configs whose secrets to scrub; asked again on every use. Secrets of configs that
   * are gone (a server removed or changed by reload) stay scrubbed: its last lines may still come.
   */
  constructor(private readonly source: () => Iterable<ResolvedServerConfig>) {}

  private refresh(): void {
    let changed = false;
    for (const c of this.source()) {
      if (this.seen.has(c)) continue;
      this.seen.add(c);
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
    // Longest first, so a secret that contains another is replaced whole.
    if (changed) this.needles = [...this.values].sort((a, b) => b.length - a.length);
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
