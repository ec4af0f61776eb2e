/** A `Bearer` challenge of a `WWW-Authenticate` header (RFC 6750 section 3, RFC 9728 section 5.1). */
export interface BearerChallenge {
  /** The scopes the server asks for (`scope`), split at spaces; undefined when absent. */
  scopes?: string[];
  /** The protected resource metadata URL (`resource_metadata`), if given. */
  resourceMetadata?: string;
  /** `invalid_token`, `insufficient_scope`, `invalid_request`, ... */
  error?: string;
  errorDescription?: string;
}

/** Longest header parsed; a longer one is cut there (a server cannot make us scan megabytes). */
const MAX_HEADER_CHARS = 16 * 1024;

/**
 * The first `Bearer` challenge of a `WWW-Authenticate` value (RFC 7235 syntax: several challenges may
 * share one header, each a scheme followed by `name=value` or `name="quoted value"` parameters).
 * Undefined when there is none. Parameter names are case-insensitive; unknown ones are ignored.
 */
export function parseBearerChallenge(header: string | undefined): BearerChallenge | undefined {
  if (!header) return undefined;
  for (const challenge of parseChallenges(header.slice(0, MAX_HEADER_CHARS))) {
    if (challenge.scheme.toLowerCase() !== "bearer") continue;
    const p = challenge.params;
    const out: BearerChallenge = {};
    if (p.scope !== undefined) out.scopes = splitScopes(p.scope);
    if (p.resource_metadata) out.resourceMetadata = p.resource_metadata;
    if (p.error) out.error = p.error;
    if (p.error_description) out.errorDescription = p.error_description;
    return out;
  }
  return undefined;
}

/** A space-separated scope string as a list, without empty entries or repeats. */
export function splitScopes(scope: string): string[] {
  return [...new Set(scope.split(/\s+/).filter((s) => s !== ""))];
}

interface Challenge {
  scheme: string;
  params: Record<string, string>;
}

const TOKEN = /[!#$%&'*+.^_`|~0-9A-Za-z-]+/y;
const SPACE = /[ \t]*/y;

/** Every challenge of a header value, in order. */
function parseChallenges(text: string): Challenge[] {
  const out: Challenge[] = [];
  let pos = 0;
  const skip = (): void => {
    SPACE.lastIndex = pos;
    SPACE.exec(text);
    pos = SPACE.lastIndex;
  };
  const token = (): string | undefined => {
    TOKEN.lastIndex = pos;
    const m = TOKEN.exec(text);
    if (!m) return undefined;
    pos = TOKEN.lastIndex;
    return m[0];
  };
  while (pos < text.length) {
    skip();
    if (text[pos] === ",") {
      pos++;
      continue;
    }
    const scheme = token();
    if (scheme === undefined) {
      pos++; // not a challenge: step over the character
      continue;
    }
    const challenge: Challenge = { scheme, params: {} };
    out.push(challenge);
    // Parameters until the next scheme (a token followed by a space and not by "=").
    for (;;) {
      skip();
      const start = pos;
      const name = token();
      if (name === undefined) {
        // token68 (base64-like) or junk: skip to the next comma.
        while (pos < text.length && text[pos] !== ",") pos++;
        if (pos >= text.length) break;
        pos++;
        continue;
      }
      skip();
      if (text[pos] !== "=") {
        pos = start; // the next challenge's scheme
        break;
      }
      pos++;
      skip();
      let value: string;
      if (text[pos] === '"') {
        pos++;
        value = "";
        while (pos < text.length && text[pos] !== '"') {
          if (text[pos] === "\\" && pos + 1 < text.length) pos++;
          value += text[pos];
          pos++;
        }
        pos++;
      } else {
        value = token() ?? "";
      }
      challenge.params[name.toLowerCase()] ??= value;
      skip();
      if (text[pos] === ",") pos++;
      else break;
    }
  }
  return out;
}
