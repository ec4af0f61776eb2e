import { getHeapStatistics, setFlagsFromString } from "node:v8";
import { RUNTIME_DEFAULTS } from "../defaults.js";

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
  /**
   * After a collection, the room in V8's heap (pages it keeps beyond what is in use) from which a
   * compacting collection follows, when what is in use is also under half the heap, in bytes.
   */
  minRoomBytes?: number;
  /** ...checked once nothing was let go for this many ms (the load is over), in ms. */
  quietMs?: number;
  /**
   * The compacting collection. Default: `collect` with V8's `--compact-on-every-full-gc` set for it (only
   * when `collect` is node's `global.gc`).
   */
  compact?: (() => void) | undefined;
  /** V8's heap: bytes in use and its size. Default: `v8.getHeapStatistics()`. */
  heap?: () => { used: number; total: number };
}

/** A full collection that evacuates every page it can, so that V8 gives the emptied ones back. */
function compactingGc(gc: () => void): () => void {
  return () => {
    setFlagsFromString("--compact-on-every-full-gc");
    try {
      gc();
    } finally {
      setFlagsFromString("--no-compact-on-every-full-gc");
    }
  };
}

function v8Heap(): { used: number; total: number } {
  const h = getHeapStatistics();
  return { used: h.used_heap_size, total: h.total_heap_size };
}

/**
 * Forces a full garbage collection, at most once per `minIntervalMs`, once `minReleasedBytes` of
 * buffers were let go: client lines that ended or were dropped, queued output that was written, the
 * connections closed over a budget. V8 frees such garbage only when its own heuristics next collect:
 * after a load it stays for seconds (the heap does not grow, so nothing triggers a collection), and during
 * one it piles up to several times the bytes actually held (measured: RSS 300 MiB over the baseline while
 * the daemon held its 128 MiB budget, and still there 5 s after the load ended).
 *
 * Once nothing was let go for `quietMs` after a collection, a heap left mostly room (the pages a load grew
 * it to, now sparsely used: 20 MiB in use in 150 MiB after a flood to never-read GET streams) gets a
 * compacting collection, which evacuates those pages so that V8 gives them back; an ordinary one keeps
 * them until V8's memory reducer runs, many seconds later.
 *
 * The collection runs from a timer, never inside the caller: a connection closed now still holds its
 * buffers until its close completes, and a burst of releases is collected once. Only paths that let go of
 * held bytes report to it; the relay of whole lines never does, so its cost there is nil.
 */
export class GarbagePacer {
  /** Collections run so far. */
  collections = 0;
  /** Compacting collections run so far (after a collection that left V8's heap mostly empty). */
  compactions = 0;
  private readonly opts: GarbagePacerOptions;
  private readonly collect: (() => void) | undefined;
  private readonly compact: (() => void) | undefined;
  private readonly heap: () => { used: number; total: number };
  private released = 0;
  private lastAt = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;
  /** Releases reported so far, and as many as when the quiet timer was armed. */
  private releases = 0;
  private releasesArmed = 0;
  private quietTimer: NodeJS.Timeout | undefined;

  constructor(options: GarbagePacerOptions) {
    this.opts = { ...options };
    const gc = (globalThis as { gc?: () => void }).gc;
    this.collect = "collect" in options ? options.collect : gc;
    this.compact = "compact" in options ? options.compact : gc && this.collect === gc ? compactingGc(gc) : undefined;
    this.heap = options.heap ?? v8Heap;
  }

  /** The daemon's pacer, with RUNTIME_DEFAULTS' `gcPace*` settings. */
  static withDaemonDefaults(): GarbagePacer {
    const d = RUNTIME_DEFAULTS;
    return new GarbagePacer({
      minIntervalMs: d.gcPaceIntervalMs,
      minReleasedBytes: d.gcPaceReleasedBytes,
      minRoomBytes: d.gcPaceCompactRoomBytes,
      quietMs: d.gcPaceCompactQuietMs,
    });
  }

  /** Whether it can collect at all (node runs with `--expose-gc`, or a collector was given). */
  get enabled(): boolean {
    return this.collect !== undefined;
  }

  /** `bytes` of buffers were let go: a collection is due once enough were, no sooner than the interval allows. */
  release(bytes: number): void {
    if (this.collect === undefined || bytes <= 0) return;
    this.releases++;
    this.released += bytes;
    if (this.timer !== undefined || this.released < this.opts.minReleasedBytes) return;
    const wait = Math.max(0, this.lastAt + this.opts.minIntervalMs - Date.now());
    this.timer = setTimeout(() => this.run(), wait);
    this.timer.unref();
  }

  /** Cancels a collection not yet run. */
  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.quietTimer !== undefined) clearTimeout(this.quietTimer);
    this.timer = this.quietTimer = undefined;
  }

  private run(): void {
    this.timer = undefined;
    this.released = 0;
    this.lastAt = Date.now();
    this.collections++;
    this.collect?.();
    if (this.compact !== undefined && this.opts.minRoomBytes !== undefined && this.quietTimer === undefined) this.armQuiet();
  }

  private armQuiet(): void {
    this.releasesArmed = this.releases;
    this.quietTimer = setTimeout(() => this.quiet(), this.opts.quietMs ?? 0);
    this.quietTimer.unref();
  }

  /**
   * V8 keeps the pages a load grew its old generation to, sparsely used, after an ordinary collection:
   * only one that evacuates them gives them back. It moves what is in use and the heap grows again under a
   * load that goes on (measured: a higher peak, a flood slowed), so only once the load is over and what is
   * in use is little.
   */
  private quiet(): void {
    this.quietTimer = undefined;
    if (this.releases !== this.releasesArmed) return this.armQuiet();
    const { used, total } = this.heap();
    if (total - used < (this.opts.minRoomBytes as number) || used * 2 > total) return;
    this.compactions++;
    this.compact?.();
  }
}
