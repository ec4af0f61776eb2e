import type { RequestId } from "../types.js";

/** What a {@link Cancellation} cancels once its request was sent: a peer that gives up requests by id. */
export interface CancelById {
  /** Gives up the pending request `id` with `reason`; false when it is no longer pending. */
  cancel(id: RequestId, reason: unknown): boolean;
}

/**
 * The cancellation of one request, without an AbortSignal per request.
 *
 * An AbortSignal with a listener costs several microseconds to create and tear down and keeps the GC busy:
 * at tens of thousands of relayed calls per second that was most of the daemon's CPU per call
 * (docs/benchmarks.md). Most requests are never cancelled, so the signal is made only when a phase that
 * needs one asks for it (waiting for a server to start, waiting in a full queue). Once the request is
 * with a {@link JsonRpcPeer} (passed as `cancellation` in its request options), the peer attaches itself
 * and a cancel goes straight to it by request id: the request rejects with the reason and the other side
 * gets `notifications/cancelled`. A cancel before the request was sent makes the peer refuse to send it.
 */
export class Cancellation {
  cancelled = false;
  reason: unknown;
  private controller: AbortController | undefined;
  private target: CancelById | undefined;
  private id: RequestId = 0;

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
    const target = this.target;
    this.target = undefined;
    target?.cancel(this.id, reason);
  }

  /** Called by the peer when it sent the request under `id`; a later {@link cancel} reaches it there. */
  attach(target: CancelById, id: RequestId): void {
    this.target = target;
    this.id = id;
  }

  /** Called by the peer when the request settled. */
  detach(): void {
    this.target = undefined;
  }
}
