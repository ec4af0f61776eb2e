import {
  Cancellation,
  RequestTimeoutError,
  hasDeadline,
  toWireError,
  type JsonObject,
  type JsonRpcErrorObject,
  type RequestCaller,
  type RequestId,
  type RequestReply,
} from "@mcpd/protocol";
import { answersInput, askForInput, retryParams, type RoundCall } from "./input-rounds.js";
import type { Upstream } from "./upstream-port.js";
import type { Downstream, InputAsker, TracedCall } from "./ports.js";

/** What a call needs of the table it is in (in-flight.ts `InFlightRequests`): its connection, its bounds, its end. */
export interface CallList {
  readonly owner: Downstream | InputAsker;
  /** How many `input_required` answers one call may get. */
  readonly maxInputRounds: number;
  /** `entry` settled: it leaves the table. */
  ended(entry: InFlight): void;
}

/** The daemon's deadline of one request passed: it is given up upstream (the client gets the timeout error). */
function expire(entry: InFlight): void {
  entry.timer = undefined;
  entry.cancellation.cancel(new RequestTimeoutError(entry.timeoutMs));
}

/**
 * One downstream request being served upstream: its cancellation, the daemon's timeout for it (restarted
 * by progress, never past the maximum total), its rewritten progress token and the id the upstream gave it.
 *
 * It is also the request's options upstream (`timeout`, `cancellation`, `onRequestId`) and the reply its
 * answer comes back to ({@link RequestReply}): a relayed call makes this one object and its timer, and no
 * promise, closure or microtask between the server's answer and the client's.
 */
export class InFlight implements RequestReply<JsonObject>, RoundCall {
  readonly cancellation = new Cancellation();
  timer: NodeJS.Timeout | undefined;
  progressToken: string | undefined;
  /** The id the upstream transport gave this request. */
  upstreamId: RequestId | undefined;
  /** Its params upstream (what a retry after `input_required` sends again). */
  params: JsonObject | undefined;
  /** `input_required` answers so far (see input-rounds.ts). */
  rounds = 0;
  /** Held for a 2026-era client's retry (held-calls.ts): an answer now waits for the retry ({@link parked}). */
  held = false;
  /** Its span, when spans are exported (`mcpd.telemetry.otlp`); ended when it settles. */
  span: TracedCall | undefined;
  /** The answer that came while it was held: the retry that takes it over gets it. */
  private parked: { result: JsonObject } | { error: JsonRpcErrorObject } | undefined;
  cancelled = false;
  /** It settled (answered or failed upstream): nothing more is sent for it but a parked answer. */
  settled = false;
  /** The transport's own deadline: none, the daemon's {@link timer} is the request's deadline. */
  readonly timeout = 0;
  /** The server's `timeout`: the request is cancelled with RequestTimeoutError after this long without progress (0 or not finite: never). */
  readonly timeoutMs: number;
  private readonly startedAt = Date.now();
  /** The server's `maxTotalTimeout`: progress never extends the request past this. */
  private readonly maxTotalMs: number;

  /** @param adapt rewrites a successful answer for this client (it must not throw) */
  constructor(
    public id: RequestId,
    readonly handle: Upstream,
    readonly method: string,
    private list: CallList,
    private readonly adapt: ((result: JsonObject) => JsonObject) | undefined,
  ) {
    this.timeoutMs = handle.config.timeout;
    this.maxTotalMs = handle.config.maxTotalTimeout;
    this.arm(this.timeoutMs);
  }

  /** The client the request is relayed for: its connection (a 2026 server is sent its capabilities and info). */
  get caller(): RequestCaller {
    const owner = this.list.owner;
    // A 2026-era call goes with its own envelope's capabilities (a 2026 server may ask it for input).
    return ("modern" in owner ? owner.modern?.callerOf(this.id) : undefined) ?? owner;
  }

  /** How long the request may wait for its server to become ready: the server's timeout. */
  get waitMs(): number {
    return this.timeoutMs;
  }

  private arm(ms: number): void {
    if (!hasDeadline(ms)) return;
    // A shared callback with the entry as argument: arming makes no closure.
    this.timer = setTimeout(expire, ms, this);
  }

  /** Progress arrived: restart the timeout, never past the maximum total. */
  touch(): void {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    const left = this.startedAt + this.maxTotalMs - Date.now();
    this.arm(Math.max(1, Math.min(this.timeoutMs, left)));
  }

  /** Called with the id the upstream gave the request, before it is sent. */
  onRequestId(id: RequestId): void {
    this.upstreamId = id;
    this.span?.sent(id, this.handle);
  }

  /**
   * The server answered: the client gets the answer, as its view shows it, unless it was cancelled. A 2026
   * server's `input_required` for a 2025-era client is answered by asking that client (input-rounds.ts).
   */
  resolve(result: JsonObject): void {
    const owner = this.list.owner;
    if (result.resultType === "input_required" && !this.cancelled && answersInput(owner, this.id))
      return askForInput(this, owner, result, this.list.maxInputRounds);
    this.end(undefined, result);
    const out = this.adapt ? this.adapt(result) : result;
    if (this.held) this.parked = { result: out };
    else if (!this.cancelled) this.list.owner.send({ jsonrpc: "2.0", id: this.id, result: out });
  }

  /** The request failed upstream (or was given up): the client gets the error, unless it was cancelled. */
  reject(reason: unknown): void {
    this.end(reason);
    if (this.held) this.parked = { error: toWireError(reason) };
    else if (!this.cancelled) this.list.owner.replyError(this.id, toWireError(reason));
  }

  /** Sends it upstream again after a round of input (a new upstream id; the same progress token, timer and cancellation). */
  retry(inputResponses: JsonObject, requestState: string | undefined): void {
    this.params = retryParams(this.params, inputResponses, requestState);
    this.handle.relay(this.method, this.params, this, this);
  }

  /** Taken over by another connection's list (held-calls.ts), under the id of that connection's retry; true: it had settled, and the retry got its answer. */
  moveTo(list: CallList, id: RequestId): boolean {
    this.list = list;
    this.id = id;
    this.held = false;
    const parked = this.parked;
    if (parked === undefined) return false;
    // The server answered the call before the retry came: the retry gets that answer.
    if ("result" in parked) list.owner.send({ jsonrpc: "2.0", id, result: parked.result });
    else list.owner.replyError(id, parked.error);
    return true;
  }

  /** Settled (failed with `error`, or answered `result`): its timer, progress token and entry go, its span ends. */
  private end(error?: unknown, result?: JsonObject): void {
    this.settled = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.list.ended(this);
    const span = this.span;
    if (span === undefined) return;
    this.span = undefined;
    span.end(error, result);
  }
}
