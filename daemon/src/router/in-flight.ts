import { McpdError, WireCode, isObject, toWireError, type JsonObject, type JsonRpcErrorObject, type RequestId } from "@mcpd/protocol";
import { CONFIG_DEFAULTS } from "../defaults.js";
import { InFlight } from "./in-flight-call.js";
import type { Upstream } from "./upstream-port.js";
import type { Downstream, InFlightWatcher, InputAsker, ProgressRegistry } from "./ports.js";

export { InFlight };

/**
 * The requests one connection has in flight to servers (downstream id -> {@link InFlight}): each sent
 * upstream with its progress token rewritten, the daemon's timeout and cancellation, and its answer sent
 * back unless it was cancelled.
 */
export class InFlightRequests {
  private readonly entries = new Map<RequestId, InFlight>();
  /** Requests accepted and not sent upstream yet (see {@link wait}), and whether each was cancelled meanwhile. */
  private readonly waiting = new Map<RequestId, { cancelled: boolean }>();

  /**
   * @param owner the connection the answers go to
   * @param progress where a request's own progress token is swapped for a daemon-unique one
   * @param watcher told when the last request in flight here settled
   */
  constructor(
    readonly owner: Downstream | InputAsker,
    private readonly progress: ProgressRegistry,
    private readonly watcher?: InFlightWatcher,
  ) {}

  /** How many `input_required` answers one call may get (`mcpd.maxInputRounds`). */
  get maxInputRounds(): number {
    return this.watcher?.input?.maxRounds ?? CONFIG_DEFAULTS.maxInputRounds;
  }

  get size(): number {
    return this.entries.size;
  }

  has(id: RequestId): boolean {
    return this.entries.has(id);
  }

  /** Why a new request `id` is refused: its id is already in flight (or waiting), or `max` requests are. Undefined: accepted. */
  refusal(id: RequestId, max: number): JsonRpcErrorObject | undefined {
    if (this.entries.has(id) || this.waiting.has(id)) {
      return { code: WireCode.InvalidRequest, message: `Request id ${JSON.stringify(id)} is already in flight on this connection` };
    }
    if (this.entries.size + this.waiting.size < max) return undefined;
    return {
      code: WireCode.TooManyRequests,
      message: `Too many requests in flight (${max} per connection)`,
      data: { mcpdCode: "MCPD_TOO_MANY_REQUESTS" },
    };
  }

  /**
   * Request `id` waits for `promise` before it can be sent (servers still coming up, a session of its own):
   * its id counts as in flight meanwhile, and a cancellation or the connection's end drops it. Then `next`
   * (or `failed`) runs, unless it was cancelled meanwhile: it then gets no answer, and nothing is started for it.
   */
  after<T>(id: RequestId, promise: Promise<T>, next: (value: T) => void, failed: (err: unknown) => void): void {
    const mark = { cancelled: false };
    this.waiting.set(id, mark);
    const goOn = (): boolean => {
      if (this.waiting.get(id) === mark) this.waiting.delete(id);
      return !mark.cancelled;
    };
    promise.then(
      (value) => goOn() && next(value),
      (err: unknown) => goOn() && failed(err),
    );
  }

  /**
   * Sends one request upstream and its answer back, with progress, cancellation and the daemon's timeout.
   * `adapt` rewrites a successful answer for this client (it must not throw).
   */
  forward(
    id: RequestId,
    handle: Upstream,
    method: string,
    params: JsonObject | undefined,
    adapt?: (result: JsonObject) => JsonObject,
  ): void {
    const entry = new InFlight(id, handle, method, this, adapt);
    this.entries.set(id, entry);
    let upstreamParams = params;
    const meta = params?._meta;
    if (isObject(meta) && (typeof meta.progressToken === "string" || typeof meta.progressToken === "number")) {
      const token = this.progress.register(this.owner, meta.progressToken, entry);
      entry.progressToken = token;
      upstreamParams = { ...params, _meta: { ...meta, progressToken: token } };
    }
    const tracer = this.watcher?.spans?.tracer;
    if (tracer !== undefined) {
      entry.span = tracer.start(handle.name, method, upstreamParams);
      upstreamParams = entry.span.params;
    }
    entry.params = upstreamParams;
    // The entry is the call's options and its reply; it may settle before relay() returns (a refusal).
    handle.relay(method, upstreamParams, entry, entry);
  }

  /** `entry` settled: it is forgotten, with its progress token. */
  ended(entry: InFlight): void {
    if (entry.progressToken !== undefined) this.progress.release(entry.progressToken);
    if (this.entries.get(entry.id) !== entry) return;
    this.entries.delete(entry.id);
    if (this.entries.size === 0) this.watcher?.inFlightEmptied();
  }

  /** Gives `entry` up without settling it (held for a retry, see held-calls.ts): its connection's end no longer cancels it. */
  release(entry: InFlight): void {
    entry.held = true;
    if (this.entries.get(entry.id) !== entry) return;
    this.entries.delete(entry.id);
    if (this.entries.size === 0) this.watcher?.inFlightEmptied();
  }

  /**
   * Takes over `entry` (a held call) as this connection's request `id`: its answer comes here, and its
   * progress (the upstream token stays) as `progressToken`, that request's own (none: no progress).
   */
  adopt(entry: InFlight, id: RequestId, progressToken?: string | number): void {
    if (entry.progressToken !== undefined) this.progress.move(entry.progressToken, this.owner, progressToken);
    if (!entry.moveTo(this, id)) this.entries.set(id, entry);
  }

  /** Its requests in flight to `handle`: the one with that upstream id when given, else all. */
  callsTo(handle: Upstream, upstreamId: RequestId | undefined): InFlight[] {
    const out: InFlight[] = [];
    for (const e of this.entries.values())
      if (e.handle === handle && (upstreamId === undefined || e.upstreamId === upstreamId)) out.push(e);
    return out;
  }

  /** Cancels one request: the upstream gets notifications/cancelled, the client no answer. */
  cancel(id: RequestId, reason: string): void {
    const waiting = this.waiting.get(id);
    if (waiting !== undefined) {
      waiting.cancelled = true;
      this.waiting.delete(id);
      return;
    }
    const entry = this.entries.get(id);
    if (!entry) return;
    entry.cancelled = true;
    entry.cancellation.cancel(new McpdError("MCPD_ABORTED", reason, { wireCode: WireCode.Cancelled }));
  }

  /** Cancels every request (the client went away). */
  cancelAll(reason: string): void {
    for (const id of [...this.waiting.keys(), ...this.entries.keys()]) this.cancel(id, reason);
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
  hasUpstreamRequest(handle: Upstream, upstreamId: RequestId): boolean {
    for (const e of this.entries.values()) if (e.handle === handle && e.upstreamId === upstreamId) return true;
    return false;
  }

  /** Whether any of these requests is in flight to that server. */
  hasInFlightTo(handle: Upstream): boolean {
    for (const e of this.entries.values()) if (e.handle === handle) return true;
    return false;
  }
}
