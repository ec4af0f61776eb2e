/**
 * Bookkeeping of in-flight requests for {@link StdioTransport}: the pending entry (timer, signal) and the
 * shared abort listener per caller signal. Internal to the transport.
 */

/** One in-flight request. */
export class PendingRequest {
  timer: NodeJS.Timeout | undefined = undefined;
  watch: SignalWatch | undefined = undefined;
  constructor(
    readonly id: number,
    readonly method: string,
    readonly timeoutMs: number,
    readonly resolve: (value: unknown) => void,
    readonly reject: (reason: unknown) => void,
  ) {}
  /** Stops the clock and stops watching the caller's signal. */
  detach(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.watch?.remove(this);
  }
}

/**
 * One 'abort' listener per caller signal, shared by every request using it. Callers often pass one
 * long-lived signal to many concurrent requests; a listener per request would pile up on it
 * (MaxListenersExceededWarning in the official SDK). Removed once its last request settles.
 */
export class SignalWatch {
  private readonly members = new Set<PendingRequest>();
  constructor(
    readonly signal: AbortSignal,
    private readonly registry: Map<AbortSignal, SignalWatch>,
    private readonly onAbort: (pending: PendingRequest) => void,
  ) {
    registry.set(signal, this);
    signal.addEventListener("abort", this);
  }
  add(p: PendingRequest): void {
    this.members.add(p);
    p.watch = this;
  }
  remove(p: PendingRequest): void {
    p.watch = undefined;
    this.members.delete(p);
    if (this.members.size === 0) {
      this.signal.removeEventListener("abort", this);
      this.registry.delete(this.signal);
    }
  }
  handleEvent(): void {
    for (const p of Array.from(this.members)) this.onAbort(p);
  }
}
