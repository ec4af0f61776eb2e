/**
 * Upper bounds of the latency histogram's buckets, in ms (Prometheus' `le`, in seconds there); a last
 * bucket takes the rest. Fixed, so a call costs one bucket's increment. They start under a millisecond:
 * a local server answers in a fraction of one, and its p50 must not read as "somewhere under 5 ms".
 */
export const LATENCY_BUCKETS_MS: readonly number[] = [
  0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000,
];

/**
 * Request counters, a bounded latency sample (for `mcpd status`'s p50, p95 and p99) and a fixed-bucket
 * latency histogram (for `/metrics` and the dashboard's charts) of one server. Plain numbers on the relay path: nothing is computed per call
 * for anyone who reads them.
 */
export class ServerStats {
  requests = 0;
  errors = 0;
  inFlight = 0;
  lastError: string | undefined;
  lastUsedAt = Date.now();
  /**
   * When the server last answered a call, with a result or an error of its own (Date.now() ms). A call that
   * timed out, was cancelled or lost its session is no answer: a hung server keeps looking used, not heard.
   */
  lastAnsweredAt = Date.now();
  private readonly samples: Float64Array;
  private next = 0;
  private filled = 0;
  /** Calls finished per latency bucket ({@link LATENCY_BUCKETS_MS}, then one past the last), not cumulative. */
  readonly buckets = new Float64Array(LATENCY_BUCKETS_MS.length + 1);
  /** The sum of every finished call's latency, in ms. */
  latencySumMs = 0;

  constructor(sampleSize = 1024) {
    this.samples = new Float64Array(sampleSize);
  }

  begin(): number {
    this.requests++;
    this.inFlight++;
    this.lastUsedAt = Date.now();
    return performance.now();
  }

  /** A call ended; `answered`: the server answered it (a result, or an error it sent). */
  end(startedAt: number, error?: unknown, answered = error === undefined): void {
    this.inFlight--;
    this.lastUsedAt = Date.now();
    if (answered) this.lastAnsweredAt = this.lastUsedAt;
    const ms = performance.now() - startedAt;
    this.samples[this.next] = ms;
    this.latencySumMs += ms;
    let b = 0;
    while (b < LATENCY_BUCKETS_MS.length && ms > (LATENCY_BUCKETS_MS[b] as number)) b++;
    this.buckets[b] = (this.buckets[b] ?? 0) + 1;
    this.next = (this.next + 1) % this.samples.length;
    if (this.filled < this.samples.length) this.filled++;
    if (error !== undefined) {
      this.errors++;
      this.lastError = error instanceof Error ? error.message : String(error);
    }
  }

  /** p50, p95 and p99 of the most recent requests, in ms (rounded to 0.01), or null when none. */
  latency(): { p50: number | null; p95: number | null; p99: number | null } {
    if (this.filled === 0) return { p50: null, p95: null, p99: null };
    const sorted = Array.from(this.samples.subarray(0, this.filled)).sort((a, b) => a - b);
    const at = (q: number): number => Math.round((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0) * 100) / 100;
    return { p50: at(0.5), p95: at(0.95), p99: at(0.99) };
  }
}
