import { RequestTimeoutError, type TimeoutKind } from "@mcpd/protocol";

/** setTimeout overflows above this and fires at once; longer deadlines are treated as none. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * One 'abort' listener per caller signal, however many requests share it. A caller that passes one
 * long-lived signal to thousands of requests must not collect a listener per request on it (the
 * official SDK's MaxListenersExceededWarning); each listener is removed with the last request using it.
 */
export class SignalFanout {
  private readonly groups = new Map<AbortSignal, { callbacks: Set<() => void>; onAbort: () => void }>();

  /** Calls `callback` once when `signal` aborts. Returns the function that stops watching. */
  watch(signal: AbortSignal, callback: () => void): () => void {
    let group = this.groups.get(signal);
    if (!group) {
      const callbacks = new Set<() => void>();
      const onAbort = (): void => {
        this.groups.delete(signal);
        for (const cb of [...callbacks]) cb();
      };
      group = { callbacks, onAbort };
      this.groups.set(signal, group);
      signal.addEventListener("abort", onAbort, { once: true });
    }
    group.callbacks.add(callback);
    const current = group;
    return () => {
      current.callbacks.delete(callback);
      if (current.callbacks.size === 0 && this.groups.get(signal) === current) {
        signal.removeEventListener("abort", current.onAbort);
        this.groups.delete(signal);
      }
    };
  }

  /** Signals currently watched (for tests and status). */
  get size(): number {
    return this.groups.size;
  }
}

/**
 * The clock and cancellation of one HTTP exchange: a private AbortController (never shared, so nothing
 * accumulates on it) aborted by the deadline, by the caller's signal or by the transport's close().
 *
 * One deadline covers the whole exchange: the POST, the headers and the entire SSE body, resumptions
 * included. Its error depends on the phase: `Request timeout after <ms>ms` while waiting for headers,
 * `SSE response timeout after <ms>ms` once an SSE stream is being read, `Notify timeout after <ms>ms` for
 * notifications. A caller abort aborts with the caller's reason, unchanged.
 */
export class RequestDeadline {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private unwatch: (() => void) | undefined;
  /** Which timeout error the deadline raises if it passes now. Set to "sse" once streaming starts. */
  phase: TimeoutKind;
  /** Why the exchange was given up: the deadline passed, or the caller aborted. */
  gaveUp: "timeout" | "caller" | undefined;

  /**
   * @param timeoutMs the deadline, or undefined/0/Infinity for none.
   * @param kind "request" (phase switches to "sse" while streaming) or "notify".
   */
  constructor(timeoutMs: number | undefined, kind: "request" | "notify", callerSignal?: AbortSignal, fanout?: SignalFanout) {
    this.phase = kind;
    if (timeoutMs !== undefined && timeoutMs > 0 && timeoutMs <= MAX_TIMER_MS) {
      this.timer = setTimeout(() => {
        this.gaveUp ??= "timeout";
        this.controller.abort(new RequestTimeoutError(timeoutMs, this.phase));
      }, timeoutMs);
    }
    if (callerSignal) {
      const onAbort = (): void => {
        this.gaveUp ??= "caller";
        this.controller.abort(callerSignal.reason);
      };
      if (callerSignal.aborted) onAbort();
      else if (fanout) this.unwatch = fanout.watch(callerSignal, onAbort);
      else {
        callerSignal.addEventListener("abort", onAbort, { once: true });
        this.unwatch = () => callerSignal.removeEventListener("abort", onAbort);
      }
    }
  }

  /** Aborts when the deadline passes, the caller aborts or {@link abort} is called. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.controller.signal.aborted;
  }

  /** The error to surface when aborted: the timeout error, the caller's reason or the close reason. */
  get reason(): unknown {
    return this.controller.signal.reason;
  }

  /** Aborts the exchange (close(), drain grace). Does nothing once aborted. */
  abort(reason: unknown): void {
    this.controller.abort(reason);
  }

  /** Stops the clock and stops watching the caller's signal. Idempotent. */
  dispose(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.unwatch?.();
    this.unwatch = undefined;
  }
}
