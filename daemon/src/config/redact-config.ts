import type { TransportConfig } from "@mcpd/transports";
import { REDACTED, redactArgs, redactUrl } from "../secrets/index.js";
import type { ResolvedServerConfig } from "./config-schema.js";

/**
 * A copy of a server config that is safe to print or log: every `env` and `headers` value becomes
 * `"***"` (names kept), so do `auth.clientSecret` and `auth.privateKey`; credentials in URLs are masked
 * (user:password@ and secret-named query parameters: `redactUrl`), and so are secret-looking arguments
 * (`--token=x`, `--api-key x`, URLs with credentials: `redactArgs`), by the one secret-name rule of
 * `secrets/secret-names.ts`. Best effort for `args`: a secret passed as a bare positional argument cannot
 * be recognized.
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
