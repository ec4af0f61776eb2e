import PQueue from "p-queue";

/**
 * A server's concurrency limit and what waits past it. A task under the limit with nobody waiting takes a
 * slot synchronously ({@link tryAcquire}: a counter, no allocation) and never touches the queue: nearly
 * every relayed call. Only a task that must wait goes into p-queue, which keeps the waiting tasks in
 * priority order (arrival order within a priority), drops one whose signal aborts at once, and starts the
 * next as a slot frees.
 *
 * p-queue counts only the tasks it started, so its concurrency is kept at the slots the others leave
 * (`limit - direct`), and it is paused while they leave none. It is also paused while the queue is
 * {@link hold held} (the server restarts, or is being drained): then nothing starts, in the queue or past it.
 */
export class CallQueue {
  private limit: number;
  /** Tasks holding a slot taken by {@link tryAcquire}, outside p-queue. */
  private direct = 0;
  private holds = 0;
  private readonly queue: PQueue;
  /** {@link settled}'s wakers for the moment no slot is taken outside p-queue. */
  private directIdle: Array<() => void> = [];

  /** @param concurrency slots, at least 1. */
  constructor(concurrency: number) {
    this.limit = Math.max(1, concurrency);
    this.queue = new PQueue({ concurrency: this.limit });
  }

  /** Slots; raising it lets waiting tasks in at once, lowering it takes effect as slots are given back. */
  get concurrency(): number {
    return this.limit;
  }

  set concurrency(n: number) {
    this.limit = Math.max(1, n);
    this.admit();
  }

  /** Tasks holding a slot. */
  get running(): number {
    return this.direct + this.queue.pending;
  }

  /** Tasks waiting for a slot (one whose signal aborted has left). */
  get waiting(): number {
    return this.queue.size;
  }

  /** Whether the queue is held (see {@link hold}). */
  get held(): boolean {
    return this.holds > 0;
  }

  /** Takes a slot when one is free, nobody waits and the queue is not held; false otherwise. Pair it with {@link release}. */
  tryAcquire(): boolean {
    if (this.direct + this.queue.pending >= this.limit || this.queue.size > 0 || this.holds > 0) return false;
    this.direct++;
    return true;
  }

  /** Gives back a slot {@link tryAcquire} took; the first waiting task, if any, takes it. */
  release(): void {
    this.direct--;
    if (this.queue.size > 0) this.admit();
    if (this.direct === 0 && this.directIdle.length > 0) for (const wake of this.directIdle.splice(0)) wake();
  }

  /**
   * Runs `task` holding a slot: at once when one is free and nobody waits, else once one frees, after every
   * waiting task of a higher `priority` and those of its own that came first.
   * @throws the signal's reason when `signal` aborts while the task waits (or already has): it leaves the
   * queue at once and never runs.
   */
  run<T>(task: () => Promise<T>, priority = 0, signal?: AbortSignal): Promise<T> {
    if (!this.tryAcquire()) return this.enqueue(task, priority, signal);
    let running: Promise<T>;
    try {
      running = task();
    } catch (err) {
      this.release();
      return Promise.reject(err);
    }
    return running.finally(() => this.release());
  }

  /** {@link run} for a task that found no free slot: it waits in p-queue. */
  enqueue<T>(task: () => Promise<T>, priority = 0, signal?: AbortSignal): Promise<T> {
    // Before add(), which starts the task at once when p-queue may.
    this.admit();
    return this.queue.add(task, signal ? { priority, signal } : { priority });
  }

  /** Holds the queue: nothing starts until as many {@link unhold}s; what waits keeps its place. */
  hold(): void {
    this.holds++;
    this.queue.pause();
  }

  unhold(): void {
    this.holds--;
    this.admit();
  }

  /** Runs `fn` with the queue held (see {@link hold}). */
  async whileHeld<T>(fn: () => Promise<T>): Promise<T> {
    this.hold();
    try {
      return await fn();
    } finally {
      this.unhold();
    }
  }

  /**
   * Resolves true once no task holds a slot (those p-queue started and those outside it), or false after
   * `timeoutMs`. Woken by the tasks' own ends (p-queue's `onPendingZero`, {@link release}), never by polling;
   * the one timer is the bound. Meant while {@link hold held}: nothing new starts then, so the count only
   * falls; tasks still waiting in the queue are not waited for.
   */
  settled(timeoutMs: number): Promise<boolean> {
    if (this.running === 0) return Promise.resolve(true);
    const outside = this.direct === 0 ? undefined : new Promise<void>((wake) => this.directIdle.push(wake));
    const idle = Promise.all([this.queue.onPendingZero(), outside]);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      void idle.then(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  /** p-queue's share of the slots and whether it may start tasks, after the others or the holds changed. */
  private admit(): void {
    const free = this.limit - this.direct;
    if (free < 1 || this.holds > 0) {
      this.queue.pause();
      return;
    }
    if (this.queue.concurrency !== free) this.queue.concurrency = free;
    if (this.queue.isPaused) this.queue.start();
  }
}
