import { Deadline } from "../deadline.js";
import type { JsonObject } from "../types.js";
import type { CancelById, Cancellation } from "./cancellation.js";
import { SignalFanout } from "./signal-fanout.js";

export { MAX_TIMER_MS } from "../timers.js";

/** How one request treats progress notifications naming it (its id is the progress token). */
export interface ProgressWatch {
  onProgress: (params: JsonObject) => void;
  /** Restart the deadline on each progress notification. */
  reset: boolean;
  /** Ceiling of the request's life while progress keeps restarting its deadline, in ms. */
  maxTotalMs: number;
}

/**
 * Who learns how one request ended: exactly one of its methods is called, once. A promise's own
 * `{resolve, reject}` is one; so is any object with these two methods, which lets a relay take the answer
 * without a promise, closures or a microtask per request ({@link JsonRpcPeer.call}).
 */
export interface RequestReply<T = unknown> {
  resolve(result: T): void;
  reject(reason: unknown): void;
}

/** One request waiting for its response. */
export class PendingRequest {
  /** Its deadline while one counts (see {@link Deadline}). */
  deadline: Deadline<PendingRequest> | undefined = undefined;
  signal: AbortSignal | undefined = undefined;
  cancellation: Cancellation | undefined = undefined;
  progress: ProgressWatch | undefined = undefined;
  constructor(
    readonly id: number,
    readonly method: string,
    /** The deadline in ms (0, or at or past `MAX_TIMER_MS`: none). */
    readonly timeoutMs: number,
    readonly reply: RequestReply,
  ) {}
}

/**
 * The requests one peer is waiting on, by id, each with its deadline, its caller's signal (one listener
 * per distinct signal, see {@link SignalFanout}) and its {@link Cancellation}. A {@link Deadline} calls back
 * with the entry as argument, so arming one makes no closure.
 */
export class PendingRequests {
  private readonly entries = new Map<number, PendingRequest>();
  private readonly fanout: SignalFanout<PendingRequest>;

  /**
   * @param onTimeout the deadline of a still-pending entry passed.
   * @param onAbort the signal of a still-pending entry aborted.
   */
  constructor(
    private readonly onTimeout: (p: PendingRequest) => void,
    onAbort: (p: PendingRequest, signal: AbortSignal) => void,
  ) {
    this.fanout = new SignalFanout(onAbort);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Distinct caller signals listened to. */
  get signalsWatched(): number {
    return this.fanout.size;
  }

  get(id: unknown): PendingRequest | undefined {
    return typeof id === "number" ? this.entries.get(id) : undefined;
  }

  /** Registers `p`, arms its deadline and watches its signal; `cancellation` learns where to cancel it. */
  add(p: PendingRequest, signal: AbortSignal | undefined, cancellation: Cancellation | undefined, target: CancelById): void {
    this.entries.set(p.id, p);
    p.deadline = Deadline.start(p.timeoutMs, this.expire, p);
    if (signal !== undefined) {
      p.signal = signal;
      this.fanout.add(signal, p);
    }
    if (cancellation !== undefined) {
      p.cancellation = cancellation;
      cancellation.attach(target, p.id);
    }
  }

  /** Removes `p` if it is still pending, stopping its clock and its watches. False when it had settled. */
  remove(p: PendingRequest): boolean {
    if (this.entries.get(p.id) !== p) return false;
    this.entries.delete(p.id);
    this.detach(p);
    return true;
  }

  /** Removes every entry and returns them. */
  takeAll(): PendingRequest[] {
    const all = Array.from(this.entries.values());
    this.entries.clear();
    for (const p of all) this.detach(p);
    return all;
  }

  private detach(p: PendingRequest): void {
    p.deadline?.stop();
    if (p.signal !== undefined) this.fanout.remove(p.signal, p);
    p.cancellation?.detach();
  }

  private readonly expire = (p: PendingRequest): void => {
    if (this.entries.get(p.id) === p) this.onTimeout(p);
  };
}
