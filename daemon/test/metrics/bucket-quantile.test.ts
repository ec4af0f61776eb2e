/** Percentiles from fixed latency buckets (what the dashboard's charts draw), against known sets of calls. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bucketDelta, bucketQuantile, percentiles } from "../../src/metrics/bucket-quantile.js";
import { LATENCY_BUCKETS_MS } from "../../src/supervision/server-stats.js";

const BOUNDS = [1, 2, 5, 10];

/** Counts per bucket of `bounds` (then one past the last) of calls taking `ms`, as ServerStats counts them. */
function bucketize(bounds: readonly number[], ms: readonly number[]): number[] {
  const counts = new Array<number>(bounds.length + 1).fill(0);
  for (const v of ms) {
    let b = 0;
    while (b < bounds.length && v > (bounds[b] as number)) b++;
    counts[b] = (counts[b] as number) + 1;
  }
  return counts;
}

describe("bucketQuantile", () => {
  it("is null without calls", () => {
    expect(bucketQuantile(BOUNDS, [0, 0, 0, 0, 0], 0.5)).toBeNull();
    expect(percentiles(BOUNDS, [])).toEqual({ p50: null, p95: null, p99: null });
  });

  it("interpolates inside the bucket that holds the rank, as Prometheus' histogram_quantile does", () => {
    // 100 calls: 50 of at most 1 ms, 40 in (1, 2], 10 in (2, 5].
    const counts = [50, 40, 10, 0, 0];
    expect(bucketQuantile(BOUNDS, counts, 0.5)).toBe(1);
    expect(bucketQuantile(BOUNDS, counts, 0.25)).toBe(0.5);
    expect(bucketQuantile(BOUNDS, counts, 0.7)).toBeCloseTo(1.5, 10);
    expect(bucketQuantile(BOUNDS, counts, 0.95)).toBeCloseTo(3.5, 10);
    expect(bucketQuantile(BOUNDS, counts, 0.99)).toBeCloseTo(4.7, 10);
    expect(percentiles(BOUNDS, counts)).toEqual({
      p50: 1,
      p95: bucketQuantile(BOUNDS, counts, 0.95),
      p99: bucketQuantile(BOUNDS, counts, 0.99),
    });
  });

  it("answers the last bound for a rank among the calls slower than every bucket", () => {
    expect(bucketQuantile(BOUNDS, [1, 0, 0, 0, 99], 0.5)).toBe(10);
    expect(bucketQuantile(BOUNDS, [1, 0, 0, 0, 99], 0.01)).toBe(1);
  });

  it("for any set of calls, lies in the bucket that holds the exact percentile", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0.01, max: 90_000, noNaN: true }), { minLength: 1, maxLength: 400 }),
        fc.constantFrom(0.5, 0.95, 0.99),
        (ms, q) => {
          const sorted = [...ms].sort((a, b) => a - b);
          const exact = sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] as number;
          const got = bucketQuantile(LATENCY_BUCKETS_MS, bucketize(LATENCY_BUCKETS_MS, ms), q) as number;
          const i = LATENCY_BUCKETS_MS.findIndex((b) => exact <= b);
          if (i === -1) expect(got).toBe(LATENCY_BUCKETS_MS[LATENCY_BUCKETS_MS.length - 1]);
          else {
            expect(got).toBeGreaterThanOrEqual(i === 0 ? 0 : (LATENCY_BUCKETS_MS[i - 1] as number));
            expect(got).toBeLessThanOrEqual(LATENCY_BUCKETS_MS[i] as number);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("bucketDelta", () => {
  it("counts the calls between two readings, and all of the later one after a reset", () => {
    expect(bucketDelta([1, 2, 3], [4, 2, 5])).toEqual([3, 0, 2]);
    expect(bucketDelta([5, 2, 3], [1, 2, 3])).toEqual([1, 2, 3]);
    expect(bucketDelta([], [1, 2])).toEqual([1, 2]);
  });
});
