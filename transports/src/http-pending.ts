import type { JsonRpcResponse, RequestId } from "@mcpd/protocol";

/** The wait for one request's response, wherever it arrives (its own SSE reply, a resumed stream, the listener, the legacy stream). */
export interface ResponseWaiter {
  readonly id: RequestId;
  /** Resolves with the response; never rejects (deadlines and closes are the exchange's business). */
  readonly promise: Promise<JsonRpcResponse>;
  /** The response once it arrived, readable synchronously. */
  response: JsonRpcResponse | undefined;
}

/**
 * Responses awaited by one {@link HttpTransport}, by request id. A response settles the waiter with its id
 * and is otherwise reported as unknown (late answers to timed-out requests land there).
 */
export class PendingResponses {
  private readonly waiters = new Map<RequestId, { waiter: ResponseWaiter; resolve: (r: JsonRpcResponse) => void }>();

  /** Starts waiting for the response to `id`. Call {@link remove} when the exchange is over. */
  add(id: RequestId): ResponseWaiter {
    let resolve!: (r: JsonRpcResponse) => void;
    const promise = new Promise<JsonRpcResponse>((r) => (resolve = r));
    const waiter: ResponseWaiter = { id, promise, response: undefined };
    this.waiters.set(id, {
      waiter,
      resolve: (r) => {
        waiter.response = r;
        resolve(r);
      },
    });
    return waiter;
  }

  /** Delivers a response. false when nobody waits for its id. */
  settle(response: JsonRpcResponse): boolean {
    if (response.id === null) return false;
    const entry = this.waiters.get(response.id);
    if (!entry || entry.waiter.response) return false;
    entry.resolve(response);
    return true;
  }

  remove(waiter: ResponseWaiter): void {
    if (this.waiters.get(waiter.id)?.waiter === waiter) this.waiters.delete(waiter.id);
  }

  get size(): number {
    return this.waiters.size;
  }
}
