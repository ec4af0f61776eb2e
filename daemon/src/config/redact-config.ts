import type { TransportConfig } from "@mcpd/transports";
import type { ResolvedServerConfig } from "./config-schema.js";

/** What replaces a secret. */
export const REDACTED = "***";

/** Query parameter and flag names whose values are treated as secrets. */
const SECRET_NAME =
  /(token|secret|passw(or)?d|pwd|api[-_]?key|apikey|access[-_]?key|auth|credential|signature|sig|session|cookie|^key$|[-_]key$)/i;

/**
 * A copy of a server config that is safe to print or log: every `env` and `headers` value becomes
 * `"***"` (names kept), so do `auth.clientSecret` and `auth.privateKey`, credentials in URLs are masked (user:password@ and secret-looking query
 * parameters), and secret-looking arguments (`--token=x`, `--api-key x`, URLs with credentials) are
 * masked. Best effort for `args`: a secret passed as a bare positional argument cannot be recognized.
 * Accepts a {@link ResolvedServerConfig} or a bare transport config; returns the same shape, unfrozen.
 */
export function redactServerConfig<T extends ResolvedServerConfig | TransportConfig>(cfg: T): T {
  if ("transport" in cfg) {
    const copy = { ...cfg, transport: redactTransport(cfg.transport) };
    // OAuth client credentials: the secret and the private key (a key file's path is not a secret).
    if (cfg.auth) {
      const auth = { ...cfg.auth };
      if (auth.clientSecret !== undefined) auth.clientSecret = REDACTED;
      if (auth.privateKey !== undefined) auth.privateKey = REDACTED;
      (copy as { auth?: unknown }).auth = auth;
    }
    return copy as T;
  }
  return redactTransport(cfg as TransportConfig) as T;
}

function redactTransport(t: TransportConfig): TransportConfig {
  if ("command" in t) {
    const copy = { ...t };
    if (t.args) copy.args = redactArgs(t.args);
    if (t.env) copy.env = maskValues(t.env);
    return copy;
  }
  const copy = { ...t, url: redactUrl(t.url) };
  if (t.headers) copy.headers = maskValues(t.headers);
  return copy;
}

function maskValues(record: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.keys(record).map((k) => [k, REDACTED]));
}

/**
 * Masks credentials in a URL: `user:password@` becomes `***:***@`, and values of query parameters named
 * like token/key/secret/password/auth/signature become `***`. Text that is not a URL is returned with any
 * `//user:pass@` masked.
 */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url.replace(/\/\/[^/@\s]+@/, `//${REDACTED}:${REDACTED}@`);
  }
  let changed = false;
  if (parsed.username || parsed.password) {
    parsed.username = REDACTED;
    if (parsed.password) parsed.password = REDACTED;
    changed = true;
  }
  for (const name of new Set(parsed.searchParams.keys())) {
    if (SECRET_NAME.test(name)) {
      parsed.searchParams.set(name, REDACTED);
      changed = true;
    }
  }
  // Re-serialize only when something was masked, so a harmless URL prints exactly as written.
  return changed ? parsed.href : url;
}

/** Masks `--token=x`, the value after `--api-key`/`-p`-style secret flags, and credentials in URL arguments. */
export function redactArgs(args: readonly string[]): string[] {
  const out: string[] = [];
  let maskNext = false;
  for (const arg of args) {
    if (maskNext) {
      out.push(REDACTED);
      maskNext = false;
      continue;
    }
    const flag = /^(--?[A-Za-z0-9][A-Za-z0-9_.-]*)(=(.*))?$/s.exec(arg);
    if (flag && SECRET_NAME.test(flag[1]!.replace(/^-+/, ""))) {
      if (flag[2] !== undefined) out.push(`${flag[1]}=${REDACTED}`);
      else {
        out.push(arg);
        maskNext = true;
      }
      continue;
    }
    // NAME=value pairs (env-style arguments to `env`, `docker -e`): mask the value of a secret-looking name.
    const pair = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(arg);
    if (pair && SECRET_NAME.test(pair[1]!)) {
      out.push(`${pair[1]}=${REDACTED}`);
      continue;
    }
    out.push(/^[a-z][a-z0-9+.-]*:\/\//i.test(arg) ? redactUrl(arg) : arg);
  }
  return out;
}
