import { type MAX_TIMER_MS, hasDeadline } from "./timers.js";

type Timer = ReturnType<typeof setTimeout>;

/**
 * The deadline of one request: `onExpire(arg)` runs `timeoutMs` after it was made, unless it was stopped
 * first. Progress restarts it for its full length ({@link restart}), but once `maxTotalMs` have passed
 * since it was made, progress gives the request up instead (the caller rejects it with
 * `RequestTimeoutError(maxTotalMs)`), so a server that reports progress forever cannot hold it forever.
 * A deadline that is not a number > 0, or at or past {@link MAX_TIMER_MS} (`Infinity`), is none: {@link start}
 * makes no `Deadline` for it.
 *
 * The JSON-RPC peer makes one per request, so it makes no closure: its one timer calls a shared function
 * with the deadline, which calls `onExpire` with `arg` (the request).
 */
export class Deadline<A> {
  private timer: Timer | undefined;
  private readonly startedAt = Date.now();

  /**
   * Starts a deadline: `onExpire(arg)` runs `timeoutMs` from now unless it is stopped first. Undefined
   * when `timeoutMs` is none (see the class comment).
   */
  static start<A>(timeoutMs: number, onExpire: (arg: A) => void, arg: A): Deadline<A> | undefined {
    return hasDeadline(timeoutMs) ? new Deadline(timeoutMs, onExpire, arg) : undefined;
  }

  private constructor(
    /** The deadline, in ms: each start and restart counts it from then. */
    readonly timeoutMs: number,
    private readonly onExpire: (arg: A) => void,
    private readonly arg: A,
  ) {
    this.timer = setTimeout(Deadline.fire, timeoutMs, this);
  }

  /** True while the deadline is counting: it neither passed nor was stopped. */
  get running(): boolean {
    return this.timer !== undefined;
  }

  /** Stops the clock: `onExpire` will not be called. */
  stop(): void {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * Progress arrived: starts the deadline again from now, for its full length. Returns false, stopping it,
   * when `maxTotalMs` have passed since it was made: the caller gives the request up. True, doing nothing,
   * once it has passed or was stopped.
   */
  restart(maxTotalMs: number): boolean {
    if (this.timer === undefined) return true;
    clearTimeout(this.timer);
    if (Date.now() - this.startedAt >= maxTotalMs) {
      this.timer = undefined;
      return false;
    }
    this.timer = setTimeout(Deadline.fire, this.timeoutMs, this);
    return true;
  }

  /** The timer's callback, one function for every deadline. */
  private static fire<A>(this: void, deadline: Deadline<A>): void {
    deadline.timer = undefined;
    deadline.onExpire(deadline.arg);
  }
}
