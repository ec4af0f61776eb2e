import { NotFoundError } from "@mcpd/protocol";
import { allowedEdits, editDistance, normalize } from "../config/did-you-mean.js";

/** Most names an unknown-name error suggests: a few close ones, never the whole list. */
export const MAX_SUGGESTIONS = 5;
/** Longest part of a name a client sent that an error quotes back, in characters. */
const MAX_QUOTED_CHARS = 200;

/** The part of an exposed name after its `<server>__` prefix (the whole name when it has none). */
function unprefixed(name: string): string {
  const i = name.indexOf("__");
  return i > 0 ? name.slice(i + 2) : name;
}

/**
 * The names closest to `wanted`, best first, at most `max`: a name whose part after `<server>__` is the
 * unprefixed part of `wanted` (the server's own name, typed with or without a prefix), then names within
 * a third of the length of `wanted` in edit distance (ignoring case, `_` and `-`; at most 3 edits), then
 * names whose unprefixed part is that close to the unprefixed part of `wanted` (the right tool on another
 * server), then names that contain `wanted` (4 characters or more). Ties go alphabetically. Only the
 * first 256 characters of `wanted` count; names over 64 characters match only by containment.
 */
export function closeMatches(wanted: string, names: readonly string[], max = MAX_SUGGESTIONS): string[] {
  const w = normalize(wanted.slice(0, 256));
  const wt = normalize(unprefixed(wanted.slice(0, 256)));
  const scored: Array<{ name: string; score: number }> = [];
  for (const name of names) {
    const n = normalize(name);
    const t = normalize(unprefixed(name));
    let score: number | undefined;
    if (t === wt) score = 0;
    else {
      const full = editDistance(w, n);
      const tail = editDistance(wt, t);
      if (full <= allowedEdits(w)) score = full;
      else if (tail <= allowedEdits(wt)) score = tail + 0.5;
      else if (w.length >= 4 && n.includes(w)) score = 4;
    }
    if (score !== undefined) scored.push({ name, score });
  }
  scored.sort((a, b) => a.score - b.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return scored.slice(0, max).map((s) => s.name);
}

/** A name a client sent, quoted for an error message and cut to a bounded length. */
export function quoted(name: string): string {
  return name.length > MAX_QUOTED_CHARS ? `"${name.slice(0, MAX_QUOTED_CHARS)}..." (${name.length} characters)` : `"${name}"`;
}

/**
 * An unknown tool, prompt or resource: the message quotes what was asked (cut to a bounded length) and
 * suggests at most a few close names (see closeMatches), never the whole list, which can run to
 * hundreds: `Unknown tool "fx__ecoh"; did you mean fx__echo? (104 tools; tools/list lists them)`.
 */
export function notFound(
  code: "MCPD_UNKNOWN_TOOL" | "MCPD_UNKNOWN_PROMPT" | "MCPD_UNKNOWN_RESOURCE",
  what: string,
  wanted: string,
  names: readonly string[],
  list: { noun: string; method: string },
): NotFoundError {
  const close = closeMatches(wanted, names);
  const count = `${names.length} ${list.noun}${names.length === 1 ? "" : "s"}; ${list.method} lists them`;
  const hint = close.length > 0 ? `did you mean ${close.join(", ")}? (${count})` : `no ${list.noun} has a close name (${count})`;
  return new NotFoundError(code, `${what}; ${hint}`);
}
