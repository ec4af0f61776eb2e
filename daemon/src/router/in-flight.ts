import {
  Cancellation,
  McpdError,
  RequestTimeoutError,
  WireCode,
  isObject,
  toWireError,
  type JsonObject,
  type JsonRpcErrorObject,
  type RequestId,
} from "@mcpd/protocol";
import type { ServerHandle } from "../supervision/server-handle.js";
import type { Downstream, ProgressRegistry } from "./ports.js";

/**
 * One downstream request being served upstream: its cancellation, the daemon's timeout for it (restarted
 * by progress, never past the maximum total), its rewritten progress token and the id the upstream gave it.
 */
export class InFlight {
  readonly cancellation = new Cancellation();
  timer: NodeJS.Timeout | undefined;
  progressToken: string | undefined;
  /** The id the upstream transport gave this request. */
  upstreamId: RequestId | undefined;
  cancelled = false;
  private readonly startedAt = Date.now();

  /**
   * @param timeoutMs the server's `timeout`: the request is cancelled with RequestTimeoutError after this
   *   long without progress (0 or not finite: never)
   * @param maxTotalMs the server's `maxTotalTimeout`: progress never extends the request past this
   */
  constructor(
    readonly id: RequestId,
    readonly handle: ServerHandle,
    private readonly timeoutMs: number,
    private readonly maxTotalMs: number,
  ) {
    this.arm(timeoutMs);
  }

  private arm(ms: number): void {
    if (!(ms > 0) || !Number.isFinite(ms)) return;
    this.timer = setTimeout(() => this.cancellation.cancel(new RequestTimeoutError(this.timeoutMs)), ms);
  }

  /** Progress arrived: restart the timeout, never past the maximum total. */
  touch(): void {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    const left = this.startedAt + this.maxTotalMs - Date.now();
    this.arm(Math.max(1, Math.min(this.timeoutMs, left)));
  }

  clear(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/**
 * The requests one connection has in flight to servers (downstream id -> {@link InFlight}): each sent
 * upstream with its progress token rewritten, the daemon's timeout and cancellation, and its answer sent
 * back unless it was cancelled.
 */
export class InFlightRequests {
  private readonly entries = new Map<RequestId, InFlight>();

  /**
   * @param owner the connection the answers go to
   * @param progress where a request's own progress token is swapped for a daemon-unique one
   */
  constructor(
    private readonly owner: Downstream,
    private readonly progress: ProgressRegistry,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  has(id: RequestId): boolean {
    return this.entries.has(id);
  }

  /** Why a new request `id` is refused: its id is already in flight, or `max` requests are. Undefined: accepted. */
  refusal(id: RequestId, max: number): JsonRpcErrorObject | undefined {
    if (this.entries.has(id)) {
      return { code: WireCode.InvalidRequest, message: `Request id ${JSON.stringify(id)} is already in flight on this connection` };
    }
    if (this.entries.size < max) return undefined;
    return {
      code: WireCode.TooManyRequests,
      message: `Too many requests in flight (${max} per connection)`,
      data: { mcpdCode: "MCPD_TOO_MANY_REQUESTS" },
    };
  }

  /**
   * Sends one request upstream and its answer back, with progress, cancellation and the daemon's timeout.
   * `adapt` rewrites a successful answer for this client (it must not throw).
   */
  forward(
    id: RequestId,
    handle: ServerHandle,
    method: string,
    params: JsonObject | undefined,
    adapt?: (result: JsonObject) => JsonObject,
  ): void {
    const entry = new InFlight(id, handle, handle.config.timeout, handle.config.maxTotalTimeout);
    this.entries.set(id, entry);
    let upstreamParams = params;
    const meta = params?._meta;
    if (isObject(meta) && (typeof meta.progressToken === "string" || typeof meta.progressToken === "number")) {
      const token = this.progress.register(this.owner, meta.progressToken, entry);
      entry.progressToken = token;
      upstreamParams = { ...params, _meta: { ...meta, progressToken: token } };
    }
    handle
      .request(method, upstreamParams, {
        cancellation: entry.cancellation,
        timeout: 0,
        waitMs: handle.config.timeout,
        onRequestId: (uid) => (entry.upstreamId = uid),
      })
      .then(
        (result) => {
          if (!entry.cancelled) this.owner.send({ jsonrpc: "2.0", id, result: adapt ? adapt(result) : result });
        },
        (err: unknown) => {
          if (!entry.cancelled) this.owner.replyError(id, toWireError(err));
        },
      )
      .finally(() => {
        entry.clear();
        if (entry.progressToken !== undefined) this.progress.release(entry.progressToken);
        this.entries.delete(id);
      });
  }

  /** Cancels one request: the upstream gets notifications/cancelled, the client no answer. */
  cancel(id: RequestId, reason: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    entry.cancelled = true;
    entry.cancellation.cancel(new McpdError("MCPD_ABORTED", reason, { wireCode: WireCode.Cancelled }));
  }

  /** Cancels every request (the client went away). */
  cancelAll(reason: string): void {
    for (const id of [...this.entries.keys()]) this.cancel(id, reason);
  }

  /** Answers every request with `error` and cancels it upstream (shutdown). */
  failAll(error: McpdError): void {
    for (const [id, entry] of this.entries) {
      entry.cancelled = true;
      entry.cancellation.cancel(error);
      this.owner.replyError(id, toWireError(error));
    }
  }

  /** Whether the request with that upstream id is one of these, in flight to that server. */
  hasUpstreamRequest(handle: ServerHandle, upstreamId: RequestId): boolean {
    for (const e of this.entries.values()) if (e.handle === handle && e.upstreamId === upstreamId) return true;
    return false;
  }

  /** Whether any of these requests is in flight to that server. */
  hasInFlightTo(handle: ServerHandle): boolean {
    for (const e of this.entries.values()) if (e.handle === handle) return true;
    return false;
  }
}
