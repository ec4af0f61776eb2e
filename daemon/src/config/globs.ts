/**
 * The glob syntax of filters and profiles: `*` matches any run of characters (none included), `?` exactly
 * one, `\` makes the next character literal (`\*` is a star); every other character matches itself,
 * case-sensitively. A glob matches a whole name, never part of one.
 */

/** Why `glob` is not a glob (an empty string, a trailing lone `\`), or undefined when it is one. */
export function globProblem(glob: string): string | undefined {
  if (glob === "") return "an empty glob matches nothing";
  let escaped = false;
  for (const ch of glob) escaped = !escaped && ch === "\\";
  return escaped ? 'it ends with a lone "\\" (write "\\\\" for a backslash)' : undefined;
}

/** Whether `glob` has a wildcard (`*` or `?` not escaped), i.e. could match more than one name. */
export function hasWildcard(glob: string): boolean {
  let escaped = false;
  for (const ch of glob) {
    if (escaped) escaped = false;
    else if (ch === "\\") escaped = true;
    else if (ch === "*" || ch === "?") return true;
  }
  return false;
}

/** One glob, compiled: its characters (code points), with `*` and `?` marked; runs of `*` collapsed. */
interface CompiledGlob {
  readonly chars: readonly string[];
  /** Per position: 0 a literal character, 1 `?`, 2 `*`. */
  readonly kinds: Uint8Array;
}

const LITERAL = 0;
const ONE = 1;
const ANY = 2;

function compileGlob(glob: string): CompiledGlob {
  const chars: string[] = [];
  const kinds: number[] = [];
  let escaped = false;
  for (const ch of glob) {
    if (escaped) {
      chars.push(ch);
      kinds.push(LITERAL);
      escaped = false;
    } else if (ch === "\\") escaped = true;
    else if (ch === "*") {
      if (kinds.at(-1) !== ANY) {
        chars.push(ch);
        kinds.push(ANY);
      }
    } else {
      chars.push(ch);
      kinds.push(ch === "?" ? ONE : LITERAL);
    }
  }
  return { chars, kinds: Uint8Array.from(kinds) };
}

/**
 * Whether `g` matches all of `name` (its code points). Greedy, going back only to the last `*` seen: at
 * most name length x glob length steps, whatever the glob (a backtracking RegExp of `*a*a*a*b` would take
 * exponential time on a long run of `a`: one config line or one client's selection could stall the daemon).
 */
function matches(g: CompiledGlob, name: readonly string[]): boolean {
  const { chars, kinds } = g;
  const m = chars.length;
  let p = 0;
  let i = 0;
  let star = -1;
  let resume = 0;
  while (i < name.length) {
    if (p < m && kinds[p] !== ANY && (kinds[p] === ONE || chars[p] === name[i])) {
      p++;
      i++;
    } else if (p < m && kinds[p] === ANY) {
      star = p++;
      resume = i;
    } else if (star >= 0) {
      p = star + 1;
      i = ++resume;
    } else return false;
  }
  while (p < m && kinds[p] === ANY) p++;
  return p === m;
}

/**
 * A predicate: whether any of `globs` (valid ones: see {@link globProblem}) matches the whole of a name.
 * Globs without wildcards are one Set lookup together; the others are tried in turn, each in time
 * linear in the name's length times its own.
 */
export function compileGlobs(globs: readonly string[]): (name: string) => boolean {
  const exact = new Set<string>();
  const patterns: CompiledGlob[] = [];
  for (const glob of globs) {
    if (hasWildcard(glob)) patterns.push(compileGlob(glob));
    else exact.add(compileGlob(glob).chars.join(""));
  }
  return (name) => {
    if (exact.has(name)) return true;
    if (patterns.length === 0) return false;
    const cps = Array.from(name);
    return patterns.some((g) => matches(g, cps));
  };
}

/** A name as a glob that matches exactly it (`*`, `?` and `\` escaped). */
export function literalGlob(name: string): string {
  return name.replace(/[*?\\]/g, "\\$&");
}
