/**
 * Percentiles from a fixed-bucket latency histogram, the way Prometheus' `histogram_quantile` reads one:
 * linear interpolation inside the bucket that holds the rank. Pure (no Node I/O): the dashboard page
 * bundles it too, to draw p50/p95/p99 from the counts the daemon sends.
 */

/** p50, p95 and p99 in ms; null when no call was counted. */
export interface Percentiles {
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

/**
 * The `q`-quantile (0 to 1) of the calls counted in `counts`, in ms, or null when none was counted.
 * `counts[i]` holds the calls of at most `bounds[i]` ms (and over `bounds[i - 1]`); one more count, past
 * the last bound, holds the slower calls. Inside a bucket the calls are taken as spread evenly from its
 * lower bound (0 for the first) to its upper one; a rank in the last, open bucket answers the last bound.
 */
export function bucketQuantile(bounds: readonly number[], counts: ArrayLike<number>, q: number): number | null {
  let total = 0;
  for (let i = 0; i < counts.length; i++) total += counts[i] as number;
  if (total === 0) return null;
  const rank = Math.min(1, Math.max(0, q)) * total;
  let below = 0;
  for (let i = 0; i < counts.length; i++) {
    const n = counts[i] as number;
    if (n > 0 && below + n >= rank) {
      if (i >= bounds.length) break;
      const lower = i === 0 ? 0 : (bounds[i - 1] as number);
      return lower + ((bounds[i] as number) - lower) * ((rank - below) / n);
    }
    below += n;
  }
  return bounds[bounds.length - 1] ?? null;
}

/** p50, p95 and p99 of `counts` ({@link bucketQuantile}). */
export function percentiles(bounds: readonly number[], counts: ArrayLike<number>): Percentiles {
  return { p50: bucketQuantile(bounds, counts, 0.5), p95: bucketQuantile(bounds, counts, 0.95), p99: bucketQuantile(bounds, counts, 0.99) };
}

/**
 * The calls counted per bucket between two readings of the same cumulative counts. When any count went
 * down, the counters were reset in between (a new daemon): the later reading is all there is.
 */
export function bucketDelta(from: ArrayLike<number>, to: ArrayLike<number>): number[] {
  const out: number[] = [];
  let reset = from.length !== to.length;
  for (let i = 0; i < to.length && !reset; i++) {
    const d = (to[i] as number) - ((from[i] as number | undefined) ?? 0);
    if (d < 0) reset = true;
    out.push(d);
  }
  return reset ? Array.from(to) : out;
}
