import { RequestTimeoutError } from "@mcpd/protocol";

/** Called when a request is given up locally (deadline or caller abort), to tell the server. */
export type GiveUpHandler = (id: number, method: string, reason: string) => void;

interface Entry {
  method: string;
  resolve: (result: unknown) => void;
  reject: (error: unknown) => void;
  timer?: NodeJS.Timeout;
  signal?: AbortSignal;
}

/** One abort listener per distinct caller signal, however many requests share it. */
interface SignalGroup {
  ids: Set<number>;
  onAbort: () => void;
}

/**
 * The outstanding requests of one {@link WebSocketTransport}: id -> promise, per-request deadline and
 * caller cancellation.
 *
 * - A deadline rejects with `RequestTimeoutError` (`Request timeout after <ms>ms`).
 * - An abort rejects with `signal.reason` unchanged.
 * - Both call `onGiveUp(id, method, reason)` after rejecting, so the transport can send
 *   `notifications/cancelled`.
 * - Requests that share one AbortSignal share one listener on it (the official SDK's listener per
 *   request on a shared signal leaks warnings past ~1,500 requests); it is removed with the last of them.
 */
export class WsPendingRequests {
  private readonly entries = new Map<number, Entry>();
  private readonly signalGroups = new Map<AbortSignal, SignalGroup>();

  constructor(private readonly onGiveUp: GiveUpHandler) {}

  /** Requests still waiting. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * Registers request `id` and returns the promise of its result. `timeoutMs` undefined: no deadline.
   * The caller checks `signal.aborted` first (an already-aborted request should not be sent at all).
   */
  track<T>(id: number, method: string, timeoutMs: number | undefined, signal: AbortSignal | undefined): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const entry: Entry = { method, resolve: resolve as (result: unknown) => void, reject };
      this.entries.set(id, entry);
      if (timeoutMs !== undefined) entry.timer = setTimeout(() => this.expire(id, timeoutMs), timeoutMs);
      if (signal) {
        entry.signal = signal;
        this.watch(signal, id);
      }
    });
  }

  /** Settles request `id` with a result. false when no such request is waiting (late or unknown id). */
  resolve(id: number, result: unknown): boolean {
    const entry = this.take(id);
    entry?.resolve(result);
    return entry !== undefined;
  }

  /** Settles request `id` with an error. false when no such request is waiting. */
  reject(id: number, error: unknown): boolean {
    const entry = this.take(id);
    entry?.reject(error);
    return entry !== undefined;
  }

  /** Rejects every waiting request with a fresh error each. */
  rejectAll(makeError: () => Error): void {
    for (const id of [...this.entries.keys()]) this.reject(id, makeError());
  }

  private take(id: number): Entry | undefined {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    this.entries.delete(id);
    if (entry.timer) clearTimeout(entry.timer);
    if (entry.signal) this.unwatch(entry.signal, id);
    return entry;
  }

  private expire(id: number, ms: number): void {
    const entry = this.take(id);
    if (!entry) return;
    const error = new RequestTimeoutError(ms, "request");
    entry.reject(error);
    this.onGiveUp(id, entry.method, error.message);
  }

  private watch(signal: AbortSignal, id: number): void {
    let group = this.signalGroups.get(signal);
    if (!group) {
      const ids = new Set<number>();
      const onAbort = (): void => {
        this.signalGroups.delete(signal);
        for (const abortedId of [...ids]) {
          const entry = this.take(abortedId);
          if (!entry) continue;
          entry.reject(signal.reason);
          this.onGiveUp(abortedId, entry.method, reasonText(signal.reason));
        }
      };
      group = { ids, onAbort };
      this.signalGroups.set(signal, group);
      signal.addEventListener("abort", onAbort, { once: true });
    }
    group.ids.add(id);
  }

  private unwatch(signal: AbortSignal, id: number): void {
    const group = this.signalGroups.get(signal);
    if (!group) return;
    group.ids.delete(id);
    if (group.ids.size === 0) {
      signal.removeEventListener("abort", group.onAbort);
      this.signalGroups.delete(signal);
    }
  }
}

function reasonText(reason: unknown): string {
  if (reason instanceof Error && reason.message) return reason.message;
  if (typeof reason === "string" && reason) return reason;
  return "Request aborted";
}
