/** Number formatting shared by the console table and docs/benchmarks.md. */

/** A number with about three significant digits, thousands separated. */
export function num(v) {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  // Below 0.1, three significant digits (a ratio of 0.00113 must not print as 0.001).
  if (a > 0 && a < 0.1) return v.toLocaleString("en-US", { minimumSignificantDigits: 3, maximumSignificantDigits: 3 });
  const digits = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
  return v.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** "median (min–max)" of a summary, each through `f`. */
export function range(s, f = num) {
  return `${f(s.median)} (${f(s.min)}–${f(s.max)})`;
}

export const us = (v) => `${num(v)} µs`;
export const ms = (v) => `${num(v)} ms`;
export const mb = (v) => `${num(v)} MB`;
/** A size given in MB, shown in KB below 1 MB. */
export const size = (v) => (Math.abs(v) < 1 ? `${num(v * 1024)} KB` : mb(v));
export const ratio = (v) => `${num(v)}x`;
export const int = (v) => Math.round(v).toLocaleString("en-US");
