/**
 * Reloads one at a time. A reload asked for while one runs waits for it; every caller that asks meanwhile
 * shares that one next reload, which begins only when the running one has settled (so it reads the config
 * file as it is then, never as it was when it was asked for). Closing the queue (shutdown) refuses new
 * reloads, fails the waiting ones and tells the running one, through its signal, to give up.
 */
export class ReloadQueue<T> {
  private current: Promise<T> | undefined;
  private next: { promise: Promise<T>; resolve: (value: T) => void; reject: (reason: unknown) => void } | undefined;
  private waitingCallers = 0;
  private closedWith: Error | undefined;
  private readonly controller = new AbortController();

  /**
   * @param run one reload; `signal` aborts (with the queue's close reason) when the queue closes: the reload
   *   must then change nothing more and settle soon (see {@link abandonOnAbort}).
   */
  constructor(private readonly run: (signal: AbortSignal) => Promise<T>) {}

  /** Whether a reload runs now. */
  get running(): boolean {
    return this.current !== undefined;
  }

  /** Callers waiting for the next reload (they all share it). */
  get waiting(): number {
    return this.waitingCallers;
  }

  /** Whether {@link close} was called. */
  get closed(): boolean {
    return this.closedWith !== undefined;
  }

  /**
   * A reload: begun now when none runs, else the one next reload that begins once the running one settled.
   * Rejects with what the reload threw, or with the close reason once the queue is closed.
   */
  request(): Promise<T> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    if (!this.current) return this.begin();
    this.waitingCallers++;
    if (!this.next) {
      let resolve!: (value: T) => void;
      let reject!: (reason: unknown) => void;
      const promise = new Promise<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      this.next = { promise, resolve, reject };
    }
    return this.next.promise;
  }

  /**
   * Refuses every later reload and fails the waiting ones with `reason`; the running one's signal aborts
   * with it. Resolves once no reload runs any more (however the running one ended).
   */
  async close(reason: Error): Promise<void> {
    if (!this.closedWith) {
      this.closedWith = reason;
      this.controller.abort(reason);
      const next = this.next;
      this.next = undefined;
      this.waitingCallers = 0;
      next?.reject(reason);
    }
    await this.current?.then(
      () => {},
      () => {},
    );
  }

  private begin(): Promise<T> {
    // An async function: a run that throws at once rejects its promise instead of throwing here.
    const promise = (async () => this.run(this.controller.signal))();
    this.current = promise;
    const settled = (): void => {
      this.current = undefined;
      const next = this.next;
      if (!next) return;
      // The next reload begins in the same turn: no caller can slip a third one in beside it.
      this.next = undefined;
      this.waitingCallers = 0;
      this.begin().then(next.resolve, next.reject);
    };
    promise.then(settled, settled);
    return promise;
  }
}

/**
 * `work`, or a rejection with the signal's reason as soon as `signal` aborts, whichever comes first. `work`
 * goes on unobserved after an abort (its own rejection is then ignored): whatever it starts must be ended
 * by whoever aborted.
 */
export function abandonOnAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}
