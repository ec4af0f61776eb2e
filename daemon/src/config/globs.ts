/**
 * The glob syntax of filters and profiles: `*` matches any run of characters (none included), `?` exactly
 * one, `\` makes the next character literal (`\*` is a star); every other character matches itself,
 * case-sensitively. A glob matches a whole name, never part of one.
 */

/** Characters that mean something in a RegExp source. */
const REGEX_SPECIAL = /[.*+?^${}()|[\]\\/]/g;

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

/** The RegExp source (unanchored) of a valid glob (see {@link globProblem}). */
export function globSource(glob: string): string {
  let out = "";
  let escaped = false;
  for (const ch of glob) {
    if (escaped) {
      out += ch.replace(REGEX_SPECIAL, "\\$&");
      escaped = false;
    } else if (ch === "\\") escaped = true;
    else if (ch === "*") out += "[\\s\\S]*";
    else if (ch === "?") out += "[\\s\\S]";
    else out += ch.replace(REGEX_SPECIAL, "\\$&");
  }
  return out;
}

/** One RegExp matching a whole name when any of `globs` (valid ones) matches it. */
export function globsRegExp(globs: readonly string[]): RegExp {
  return new RegExp(`^(?:${globs.map(globSource).join("|")})$`, "u");
}

/** A name as a glob that matches exactly it (`*`, `?` and `\` escaped). */
export function literalGlob(name: string): string {
  return name.replace(/[*?\\]/g, "\\$&");
}
