/**
 * A log-bucketed latency histogram (1% relative precision), mergeable across worker processes, so the
 * percentiles of many clients are computed over all their calls rather than averaged.
 * Values are recorded in microseconds.
 */
const GROWTH = 1.01;
const LOG_GROWTH = Math.log(GROWTH);

export class Histogram {
  /** bucket index -> count. Index 0 holds values below 1 us. */
  counts = new Map();
  count = 0;
  sumUs = 0;
  minUs = Infinity;
  maxUs = 0;

  /** Records one latency, in microseconds. */
  record(us) {
    const b = us < 1 ? 0 : 1 + Math.floor(Math.log(us) / LOG_GROWTH);
    this.counts.set(b, (this.counts.get(b) ?? 0) + 1);
    this.count++;
    this.sumUs += us;
    if (us < this.minUs) this.minUs = us;
    if (us > this.maxUs) this.maxUs = us;
  }

  merge(other) {
    for (const [b, c] of other.counts) this.counts.set(b, (this.counts.get(b) ?? 0) + c);
    this.count += other.count;
    this.sumUs += other.sumUs;
    this.minUs = Math.min(this.minUs, other.minUs);
    this.maxUs = Math.max(this.maxUs, other.maxUs);
    return this;
  }

  /** The value at quantile q (0..1), in microseconds: the geometric middle of its bucket, clamped to [min, max]. */
  quantile(q) {
    if (this.count === 0) return NaN;
    const rank = Math.max(1, Math.ceil(q * this.count));
    let seen = 0;
    for (const b of [...this.counts.keys()].sort((x, y) => x - y)) {
      seen += this.counts.get(b);
      if (seen >= rank) {
        const v = b === 0 ? 0.5 : GROWTH ** (b - 0.5);
        return Math.min(this.maxUs, Math.max(this.minUs, v));
      }
    }
    return this.maxUs;
  }

  toJSON() {
    return { counts: [...this.counts], count: this.count, sumUs: this.sumUs, minUs: this.minUs, maxUs: this.maxUs };
  }

  static fromJSON(j) {
    const h = new Histogram();
    h.counts = new Map(j.counts);
    h.count = j.count;
    h.sumUs = j.sumUs;
    h.minUs = j.minUs ?? Infinity;
    h.maxUs = j.maxUs;
    return h;
  }
}
