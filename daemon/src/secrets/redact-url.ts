import { REDACTED } from "./redacted.js";
import { isSecretName } from "./secret-names.js";

/**
 * A URL as written, with its credentials masked: `user:password@` becomes `***:***@`, and the values of
 * query parameters whose name names a secret ({@link isSecretName}: `token`, `api_key`, `sig`, ...)
 * become `***`; everything else is kept, and a URL with nothing to mask is returned exactly as written.
 * For showing a config to its owner (`mcpd config`, an import's preview) and for telling the scrubber which
 * query values are secrets. Text that is not a URL is returned with any `//user:pass@` masked.
 * (The transports name a URL in their messages by a label that drops userinfo and query altogether.)
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
    if (isSecretName(name)) {
      parsed.searchParams.set(name, REDACTED);
      changed = true;
    }
  }
  // Re-serialize only when something was masked, so a harmless URL prints exactly as written.
  return changed ? parsed.href : url;
}

/**
 * `text` with the password of every `scheme://user:password@` in it masked (user names kept): the CLI's
 * defence in depth for what the daemon sends it, which the daemon has already scrubbed.
 */
export function redactUrlCredentials(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/[^/\s:@]*):[^@\s/]*@/gi, `$1:${REDACTED}@`);
}
