/**
 * The calls made while a session has no connection, waiting for the next one: bounded in number, each
 * with its own deadline and its caller's abort (one listener per distinct signal).
 */
import { AbortedError, DaemonUnavailableError, QueueFullError } from "@mcpd/protocol/core";
import { MAX_TIMER_MS, SignalFanout } from "@mcpd/protocol/peer";

interface Waiter {
  signal: AbortSignal | undefined;
  timer: NodeJS.Timeout | undefined;
  resolve: () => void;
  reject: (error: Error) => void;
}

export class ReadyWaiters {
  private readonly waiters = new Set<Waiter>();
  private readonly aborts = new SignalFanout<Waiter>((w, signal) =>
    w.reject(new AbortedError("Request aborted while waiting for mcpd", { cause: signal.reason })),
  );

  /**
   * @param maxWaiting calls allowed to wait at once.
   * @param lastError why the session has no connection, named when a call's deadline passes.
   */
  constructor(
    private readonly maxWaiting: number,
    private readonly lastError: () => Error | undefined,
  ) {}

  /**
   * Resolves with the time left of the call's deadline (`timeoutMs` from now), in ms, once {@link readyAll}
   * runs. Rejects with `MCPD_QUEUE_FULL` when too many wait, `MCPD_ABORTED` when `signal` aborts, and
   * `MCPD_DAEMON_UNAVAILABLE` at the deadline.
   */
  wait(timeoutMs: number, signal: AbortSignal | undefined): Promise<number> {
    if (this.waiters.size >= this.maxWaiting) {
      return Promise.reject(new QueueFullError("Too many calls waiting for mcpd to come back"));
    }
    const started = Date.now();
    if (signal?.aborted) return Promise.reject(new AbortedError("Request aborted while waiting for mcpd", { cause: signal.reason }));
    return new Promise<number>((resolve, reject) => {
      const waiter: Waiter = {
        signal,
        timer: undefined,
        resolve: () => {
          this.drop(waiter);
          resolve(Math.max(1, timeoutMs - (Date.now() - started)));
        },
        reject: (error) => {
          this.drop(waiter);
          reject(error);
        },
      };
      this.waiters.add(waiter);
      if (signal) this.aborts.add(signal, waiter);
      if (timeoutMs < MAX_TIMER_MS) {
        waiter.timer = setTimeout(() => {
          const lastError = this.lastError();
          const why = lastError ? ` Last error: ${lastError.message}` : "";
          waiter.reject(new DaemonUnavailableError(`mcpd did not come back within ${timeoutMs}ms.${why}`, { cause: lastError }));
        }, timeoutMs);
      }
    });
  }

  /** A connection is ready: every waiting call goes on. */
  readyAll(): void {
    for (const w of [...this.waiters]) w.resolve();
  }

  /** No connection will come: every waiting call fails with `reason`. */
  failAll(reason: Error): void {
    for (const w of [...this.waiters]) w.reject(reason);
  }

  private drop(waiter: Waiter): void {
    this.waiters.delete(waiter);
    if (waiter.timer) clearTimeout(waiter.timer);
    if (waiter.signal) this.aborts.remove(waiter.signal, waiter);
  }
}
