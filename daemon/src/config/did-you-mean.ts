/**
 * "Did you mean" hints for unknown config keys: a renamed key maps to its new name; otherwise the known
 * key closest in spelling, ignoring case, `_` and `-` (so `max_queue` finds `maxQueue`), when it is within
 * a third of the key's length in edit distance (at most 3 edits).
 */
export function suggestKey(key: string, known: readonly string[], renamed: Readonly<Record<string, string>> = {}): string | undefined {
  if (Object.hasOwn(renamed, key)) return renamed[key];
  const wanted = normalize(key);
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = editDistance(wanted, normalize(candidate));
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= allowedEdits(wanted) ? best : undefined;
}

/** The sentence fragment for a warning: ` (did you mean "timeout"?)`, or "" when nothing is close. */
export function hintFor(key: string, known: readonly string[], renamed?: Readonly<Record<string, string>>): string {
  const suggestion = suggestKey(key, known, renamed);
  return suggestion === undefined ? "" : ` (did you mean "${suggestion}"?)`;
}

/** A name as compared for typos: lower case, without `-` and `_`. */
export function normalize(s: string): string {
  return s.toLowerCase().replace(/[-_]/g, "");
}

/** Edits that still count as a typo of `s` (normalized): a third of its length, from 1 to 3. */
export function allowedEdits(s: string): number {
  return Math.min(3, Math.max(1, Math.floor(s.length / 3)));
}

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions: `tiemout` is one edit). */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  // Keys are short; a key over 64 characters is nobody's typo.
  if (a.length > 64 || b.length > 64) return Infinity;
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[rows - 1]![cols - 1]!;
}
