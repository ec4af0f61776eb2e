/**
 * The shutdown's drain: waiters for the moment no connection has a request in flight to a server, woken
 * by the in-flight tables as their last request settles (no polling).
 */
export class InFlightDrain {
  private waiters: Array<() => void> = [];

  /** @param count the requests in flight now, over every connection */
  constructor(private readonly count: () => number) {}

  /** Resolves true once nothing is in flight (at once when nothing is), or false after `timeoutMs`. */
  wait(timeoutMs: number): Promise<boolean> {
    if (this.count() === 0) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const woken = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== woken);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(woken);
    });
  }

  /** A table emptied or a connection left: wakes the waiters when nothing is in flight any more. */
  check(): void {
    if (this.waiters.length === 0 || this.count() > 0) return;
    for (const w of this.waiters.splice(0)) w();
  }
}
