import { oauthLibrary } from "./oauth-http.js";

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
 * The first `Bearer` challenge of a `WWW-Authenticate` value, parsed by oauth4webapi (RFC 7235 syntax:
 * several challenges may share one header; parameter names are case-insensitive). Its parser is reached
 * through a response it is asked to process: a 401 carrying the header makes it throw a
 * `WWWAuthenticateChallengeError` with the challenges. Undefined when there is no `Bearer` challenge or
 * the header does not parse.
 */
export async function parseBearerChallenge(header: string | undefined): Promise<BearerChallenge | undefined> {
  if (!header) return undefined;
  const lib = await oauthLibrary();
  try {
    await lib.processRevocationResponse(
      new Response(null, { status: 401, headers: { "www-authenticate": header.slice(0, MAX_HEADER_CHARS) } }),
    );
  } catch (err) {
    if (!(err instanceof lib.WWWAuthenticateChallengeError)) return undefined;
    const bearer = err.cause.find((c) => c.scheme === "bearer");
    if (!bearer) return undefined;
    const p = bearer.parameters;
    const out: BearerChallenge = {};
    if (typeof p.scope === "string") out.scopes = splitScopes(p.scope);
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
