/** Summaries over rounds: every figure the report shows is the median of the rounds, with min and max. */

export function median(values) {
  const v = [...values].sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

/** {median, min, max, values} of one figure over rounds. */
export function summarize(values) {
  if (values.some((v) => !Number.isFinite(v))) throw new Error(`a round produced a non-finite figure: ${values.join(", ")}`);
  return { median: median(values), min: Math.min(...values), max: Math.max(...values), values };
}

/** Rotates `items` by `round` so no path always runs first (warm caches, thermal state). */
export function rotate(items, round) {
  const k = round % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}
