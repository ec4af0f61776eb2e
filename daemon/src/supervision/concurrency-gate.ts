/** One request waiting for a slot. */
interface Waiter {
  resolve(): void;
  reject(reason: unknown): void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  /** Left the line (aborted) before a slot came: skipped when its turn comes. */
  gone: boolean;
}

/**
 * A server's concurrency gate: at most `concurrency` requests are with its transport at once, the rest
 * wait in arrival order. Every relayed call passes through it, and almost always finds a free slot and
 * nobody waiting: {@link tryAcquire} then takes the slot synchronously and allocates nothing. Only a
 * request that must wait pays for a promise (and, given a signal, an abort listener). It replaced
 * p-queue's `add()`, which made a promise and closures for every call even on an idle server: the daemon's
 * CPU per relayed call went from ~11.4 to ~9.2 µs (docs/benchmarks.md, analysis).
 *
 * Callers bound the line themselves (`maxQueue`, with {@link waiting}) and pair every slot taken, by
 * either acquire, with one {@link release}.
 */
export class ConcurrencyGate {
  private limit: number;
  private active = 0;
  private count = 0;
  /** The line, oldest first from `head`; aborted waiters stay in it, marked `gone`, until their turn. */
  private line: Waiter[] = [];
  private head = 0;

  /** @param concurrency slots, at least 1. */
  constructor(concurrency: number) {
    this.limit = Math.max(1, concurrency);
  }

  /** Slots; raising it lets waiters in at once. */
  get concurrency(): number {
    return this.limit;
  }

  set concurrency(n: number) {
    this.limit = Math.max(1, n);
    this.drain();
  }

  /** Requests holding a slot. */
  get running(): number {
    return this.active;
  }

  /** Requests waiting for a slot (aborted ones not counted). */
  get waiting(): number {
    return this.count;
  }

  /** Takes a slot when one is free and nobody waits (arrival order is kept); false otherwise. */
  tryAcquire(): boolean {
    if (this.active >= this.limit || this.count > 0) return false;
    this.active++;
    return true;
  }

  /**
   * Waits for a slot, in arrival order. Resolves holding it.
   * @throws the signal's reason when `signal` aborts first (or has already): the request leaves the line
   * and holds no slot.
   */
  acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.tryAcquire()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const w: Waiter = { resolve, reject, signal, onAbort: undefined, gone: false };
      if (signal) {
        w.onAbort = () => {
          w.gone = true;
          this.count--;
          // A server whose slots stay taken while waiters keep giving up would otherwise keep every one.
          if (this.line.length - this.head > 2 * this.count + 64) this.compact();
          reject(signal.reason);
        };
        signal.addEventListener("abort", w.onAbort, { once: true });
      }
      this.line.push(w);
      this.count++;
    });
  }

  /** Gives a slot back; the oldest waiter, if any, takes it. */
  release(): void {
    this.active--;
    this.drain();
  }

  private compact(): void {
    this.line = this.line.slice(this.head).filter((w) => !w.gone);
    this.head = 0;
  }

  private drain(): void {
    while (this.active < this.limit && this.head < this.line.length) {
      const w = this.line[this.head] as Waiter;
      this.line[this.head++] = undefined as unknown as Waiter;
      if (w.gone) continue;
      this.count--;
      if (w.signal && w.onAbort) w.signal.removeEventListener("abort", w.onAbort);
      this.active++;
      w.resolve();
    }
    // The line's array is reused from its start once it empties, and trimmed when half of it is behind `head`.
    if (this.head === this.line.length) {
      this.line.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.line.length) {
      this.line = this.line.slice(this.head);
      this.head = 0;
    }
  }
}
