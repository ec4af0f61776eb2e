/** Request counters and a bounded latency sample for one server, for `mcpd status`. */
export class ServerStats {
  requests = 0;
  errors = 0;
  inFlight = 0;
  lastError: string | undefined;
  lastUsedAt = Date.now();
  private readonly samples: Float64Array;
  private next = 0;
  private filled = 0;

  constructor(sampleSize = 1024) {
    this.samples = new Float64Array(sampleSize);
  }

  begin(): number {
    this.requests++;
    this.inFlight++;
    this.lastUsedAt = Date.now();
    return performance.now();
  }

  end(startedAt: number, error?: unknown): void {
    this.inFlight--;
    this.lastUsedAt = Date.now();
    this.samples[this.next] = performance.now() - startedAt;
    this.next = (this.next + 1) % this.samples.length;
    if (this.filled < this.samples.length) this.filled++;
    if (error !== undefined) {
      this.errors++;
      this.lastError = error instanceof Error ? error.message : String(error);
    }
  }

  /** p50 and p99 of the most recent requests, in ms (rounded to 0.01), or null when none. */
  latency(): { p50: number | null; p99: number | null } {
    if (this.filled === 0) return { p50: null, p99: null };
    const sorted = Array.from(this.samples.subarray(0, this.filled)).sort((a, b) => a - b);
    const at = (q: number): number => Math.round((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0) * 100) / 100;
    return { p50: at(0.5), p99: at(0.99) };
  }
}
