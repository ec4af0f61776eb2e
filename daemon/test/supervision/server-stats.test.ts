/** ServerStats: the counters and fixed latency buckets the relay path bumps, and `mcpd status`'s p50/p95/p99. */
import { describe, expect, it } from "vitest";
import { percentiles } from "../../src/metrics/bucket-quantile.js";
import { LATENCY_BUCKETS_MS, ServerStats } from "../../src/supervision/server-stats.js";

/** Counts a finished call that took about `ms` (its start set that far back). */
function call(stats: ServerStats, ms: number, error?: Error): void {
  stats.begin();
  stats.end(performance.now() - ms, error);
}

describe("ServerStats", () => {
  it("counts calls and errors, files each call in its latency bucket, and reports p50, p95 and p99", () => {
    const stats = new ServerStats();
    expect(stats.latency()).toEqual({ p50: null, p95: null, p99: null });
    // 100 calls: 90 of about 0.1 ms, 6 of about 3 ms, 4 of about 40 ms (4 of them failed).
    for (let i = 0; i < 90; i++) call(stats, 0.1);
    for (let i = 0; i < 6; i++) call(stats, 3);
    for (let i = 0; i < 4; i++) call(stats, 40, new Error("boom"));
    expect({ requests: stats.requests, errors: stats.errors, inFlight: stats.inFlight }).toEqual({ requests: 100, errors: 4, inFlight: 0 });
    const bucketOf = (ms: number): number => LATENCY_BUCKETS_MS.findIndex((b) => ms <= b);
    expect(stats.buckets[bucketOf(0.1)]).toBe(90);
    expect(stats.buckets[bucketOf(3)]).toBe(6);
    expect(stats.buckets[bucketOf(40)]).toBe(4);

    const sample = stats.latency();
    expect(sample.p50).toBeLessThan(1);
    expect(sample.p95).toBeGreaterThanOrEqual(3);
    expect(sample.p95).toBeLessThan(40);
    expect(sample.p99).toBeGreaterThanOrEqual(40);
    // The dashboard's percentiles, from the buckets, fall in the buckets of the sampled ones.
    const fromBuckets = percentiles(LATENCY_BUCKETS_MS, stats.buckets);
    for (const k of ["p50", "p95", "p99"] as const) {
      const i = bucketOf(sample[k] as number);
      expect(fromBuckets[k]).toBeGreaterThanOrEqual(i === 0 ? 0 : (LATENCY_BUCKETS_MS[i - 1] as number));
      expect(fromBuckets[k]).toBeLessThanOrEqual(LATENCY_BUCKETS_MS[i] as number);
    }
  });
});
