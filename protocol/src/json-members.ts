/**
 * Finding a member's value in the text of a JSON object without parsing it again: the text is known to be
 * valid JSON (`JSON.parse` has just accepted it), so only string boundaries and bracket depth need
 * tracking. Strings are skipped with `indexOf` (most of a message's bytes are inside strings).
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

export function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** Index just past the string that opens at `start` (a `"`). */
function stringEnd(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const q = text.indexOf('"', from);
    if (q < 0) return text.length;
    // Escaped when an odd number of backslashes stand before it.
    let b = q - 1;
    while (text.charCodeAt(b) === BACKSLASH) b--;
    if ((q - 1 - b) % 2 === 0) return q + 1;
    from = q + 1;
  }
}

/** Index just past the value that starts at `start` (no leading whitespace). */
export function valueEnd(text: string, start: number): number {
  const c = text.charCodeAt(start);
  if (c === QUOTE) return stringEnd(text, start);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) {
    let depth = 0;
    for (let i = start; i < text.length; ) {
      const d = text.charCodeAt(i);
      if (d === QUOTE) {
        i = stringEnd(text, i);
        continue;
      }
      if (d === OPEN_BRACE || d === OPEN_BRACKET) depth++;
      else if ((d === CLOSE_BRACE || d === CLOSE_BRACKET) && --depth === 0) return i + 1;
      i++;
    }
    return text.length;
  }
  // A number, true, false or null: up to the next delimiter.
  let i = start;
  while (i < text.length) {
    const d = text.charCodeAt(i);
    if (d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET || isSpace(d)) break;
    i++;
  }
  return i;
}

/**
 * The text of the value of member `key` of the JSON object `text`, exactly as written, or undefined when
 * the object has no such member, `text` is not an object, or a member name is written with an escape (it
 * might spell `key`: the caller falls back to encoding the parsed value). With duplicate names the last one
 * counts, as it does for `JSON.parse`.
 * @param text valid JSON (behaviour on invalid text is unspecified, but always terminates)
 */
export function memberText(text: string, key: string): string | undefined {
  let i = 0;
  const n = text.length;
  while (i < n && isSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== OPEN_BRACE) return undefined;
  i++;
  let found: string | undefined;
  while (i < n) {
    while (i < n && isSpace(text.charCodeAt(i))) i++;
    if (text.charCodeAt(i) !== QUOTE) return found; // `}` of an empty object
    const nameEnd = stringEnd(text, i);
    const name = text.slice(i + 1, nameEnd - 1);
    if (name.includes("\\")) return undefined;
    i = nameEnd;
    while (i < n && text.charCodeAt(i) !== COLON) i++;
    i++;
    while (i < n && isSpace(text.charCodeAt(i))) i++;
    const end = valueEnd(text, i);
    if (name === key) found = text.slice(i, end);
    i = end;
    while (i < n && isSpace(text.charCodeAt(i))) i++;
    if (text.charCodeAt(i) !== COMMA) return found;
    i++;
  }
  return found;
}
