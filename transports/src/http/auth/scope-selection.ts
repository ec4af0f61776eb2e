import type { BearerChallenge } from "./www-authenticate.js";

/** The scopes of several lists, each once, in order of first appearance. */
export function unionScopes(...lists: readonly (readonly string[] | undefined)[]): string[] {
  return [...new Set(lists.flatMap((l) => l ?? []))];
}

/**
 * The scopes to request, as the MCP spec's scope selection strategy orders them:
 * 1. the configured `scopes`, when set (the user knows better);
 * 2. the challenge's `scope` (authoritative for the request that failed);
 * 3. the protected resource metadata's `scopes_supported`;
 * 4. none (the `scope` parameter is left out).
 * A step-up (403 `insufficient_scope`) keeps what was granted and adds what is asked, so no permission
 * is lost on the way.
 */
export function chooseScopes(options: {
  configured: readonly string[] | undefined;
  challenge: BearerChallenge | undefined;
  scopesSupported: readonly string[] | undefined;
  granted: readonly string[];
  stepUp: boolean;
}): string[] {
  const { configured, challenge, scopesSupported, granted, stepUp } = options;
  const wanted = configured ?? challenge?.scopes ?? scopesSupported ?? [];
  // A step-up must at least ask for what the challenge named, even with configured scopes.
  return stepUp ? unionScopes(granted, wanted, challenge?.scopes) : [...wanted];
}
