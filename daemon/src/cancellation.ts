/**
 * The cancellation of one relayed request, without an AbortSignal per request.
 *
 * An AbortSignal with a listener costs ~6-9 us to create and tear down on Node 20 and keeps the GC busy:
 * at tens of thousands of calls per second that was most of the daemon's CPU per call
 * (docs/benchmarks.md). Most requests are never cancelled, so the signal is made only when a phase that
 * needs one asks for it (waiting for a server to start, waiting in a full queue, a transport without
 * cancel-by-id); on the hot path a cancel goes straight to the transport by request id through `hook`.
 */
export class Cancellation {
  cancelled = false;
  reason: unknown;
  /** Set while the request is with a transport that can cancel by id; cleared when it settles. */
  hook: ((reason: unknown) => void) | undefined;
  private controller: AbortController | undefined;

  /** An AbortSignal for this request, made on first use (already aborted if cancelled). */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.cancelled) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /** Cancels once; later calls are ignored. */
  cancel(reason: unknown): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.reason = reason;
    this.controller?.abort(reason);
    this.hook?.(reason);
  }
}
