/** How a {@link GarbagePacer} is paced; the daemon's are in RUNTIME_DEFAULTS (`gcPace*`). */
export interface GarbagePacerOptions {
  /** Least time between two collections, in ms. */
  minIntervalMs: number;
  /** Bytes of buffers let go since the last collection before the next one is due. */
  minReleasedBytes: number;
  /**
   * The full collection to run. Default: node's `global.gc`, which exists when node runs with
   * `--expose-gc` (one of the daemon's node flags); without it the pacer does nothing.
   */
  collect?: (() => void) | undefined;
}

/**
 * Forces a full garbage collection, at most once per `minIntervalMs`, once `minReleasedBytes` of
 * buffers were let go: client lines that ended or were dropped, queued output that was written, the
 * connections closed over a budget. V8 frees such garbage only when its own heuristics next collect:
 * after a load it stays for seconds (the heap does not grow, so nothing triggers a collection), and during
 * one it piles up to several times the bytes actually held (measured: RSS 300 MiB over the baseline while
 * the daemon held its 128 MiB budget, and still there 5 s after the load ended).
 *
 * The collection runs from a timer, never inside the caller: a connection closed now still holds its
 * buffers until its close completes, and a burst of releases is collected once. Only paths that let go of
 * held bytes report to it; the relay of whole lines never does, so its cost there is nil.
 */
export class GarbagePacer {
  /** Collections run so far. */
  collections = 0;
  private readonly opts: GarbagePacerOptions;
  private readonly collect: (() => void) | undefined;
  private released = 0;
  private lastAt = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: GarbagePacerOptions) {
    this.opts = { ...options };
    this.collect = "collect" in options ? options.collect : (globalThis as { gc?: () => void }).gc;
  }

  /** Whether it can collect at all (node runs with `--expose-gc`, or a collector was given). */
  get enabled(): boolean {
    return this.collect !== undefined;
  }

  /** `bytes` of buffers were let go: a collection is due once enough were, no sooner than the interval allows. */
  release(bytes: number): void {
    if (this.collect === undefined || bytes <= 0) return;
    this.released += bytes;
    if (this.timer !== undefined || this.released < this.opts.minReleasedBytes) return;
    const wait = Math.max(0, this.lastAt + this.opts.minIntervalMs - Date.now());
    this.timer = setTimeout(() => this.run(), wait);
    this.timer.unref();
  }

  /** Cancels a collection not yet run. */
  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private run(): void {
    this.timer = undefined;
    this.released = 0;
    this.lastAt = Date.now();
    this.collections++;
    this.collect?.();
  }
}
