import { RequestTimeoutError, type JsonRpcResponse, type RequestId, type TimeoutKind, hasDeadline } from "@mcpd/protocol";

/**
 * One HTTP exchange of an {@link HttpPipe}: a request's POST and its reply, a one-way POST (notification,
 * answer to a server request) or the legacy connect. It owns a private AbortController (never shared, so
 * nothing accumulates on it) that undici's calls use, aborted when the peer gives the request up, by
 * close(), by the drain grace or by its own clock.
 *
 * A request's deadline is the peer's (one for the whole exchange, 404 healing and SSE resumptions
 * included); the exchange only says which wording its timeout takes ({@link phase}): `Request timeout`
 * while waiting for headers, `SSE response timeout` once an SSE reply (or the legacy stream) is being
 * read. One-way exchanges and the legacy connect have their own clock: `Notify timeout` / `Request timeout`.
 */
export class HttpExchange {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  /** Which timeout wording applies now. Set to "sse" once streaming starts. */
  phase: TimeoutKind;
  /** The POST started: the server may be working on it, so giving it up is worth a `notifications/cancelled`. */
  sent = false;
  /** The response, once it arrived on any stream (requests only). */
  response: JsonRpcResponse | undefined;
  /** Resolves with the response (requests only); never rejects. */
  readonly responded: Promise<JsonRpcResponse> | undefined;
  private resolveResponse: ((response: JsonRpcResponse) => void) | undefined;

  /**
   * @param id the request's id, for a request exchange (one that waits for a response).
   * @param kind "request" (phase may switch to "sse") or "notify".
   * @param timeoutMs the exchange's own clock, for exchanges that are not peer requests; undefined: none.
   */
  constructor(
    readonly id: RequestId | undefined,
    readonly method: string | undefined,
    kind: "request" | "notify",
    timeoutMs?: number,
  ) {
    this.phase = kind;
    if (id !== undefined) this.responded = new Promise<JsonRpcResponse>((resolve) => (this.resolveResponse = resolve));
    if (timeoutMs !== undefined && hasDeadline(timeoutMs)) {
      this.timer = setTimeout(() => this.controller.abort(new RequestTimeoutError(timeoutMs, this.phase)), timeoutMs);
    }
  }

  /** Aborts when the exchange is given up, closed or its own clock runs out. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.controller.signal.aborted;
  }

  /** Why it was aborted: the give-up reason, the close error or its own timeout error. */
  get reason(): unknown {
    return this.controller.signal.reason;
  }

  /** Records the response to this exchange's request. False when one already arrived. */
  settle(response: JsonRpcResponse): boolean {
    if (this.response !== undefined || this.resolveResponse === undefined) return false;
    this.response = response;
    this.resolveResponse(response);
    return true;
  }

  /** Aborts the exchange. Does nothing once aborted. */
  abort(reason: unknown): void {
    this.controller.abort(reason);
  }

  /** Stops the own clock. Idempotent. */
  dispose(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
