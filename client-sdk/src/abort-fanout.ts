/**
 * One `abort` listener per AbortSignal, however many requests share it. Attaching a listener per request
 * to one long-lived signal (an agent's "stop" signal, say) grows the signal's listener list without bound
 * and trips Node's MaxListenersExceededWarning after a few thousand calls; the official SDK's HTTP client
 * does exactly that. Members are removed as their requests settle, and the listener with the last one.
 */
export class AbortFanout<T> {
  private readonly groups = new Map<AbortSignal, { listener: () => void; members: Set<T> }>();

  /** @param onAbort called for each member still registered when its signal aborts. */
  constructor(private readonly onAbort: (member: T, signal: AbortSignal) => void) {}

  /** Number of signals currently listened to. */
  get size(): number {
    return this.groups.size;
  }

  add(signal: AbortSignal, member: T): void {
    let group = this.groups.get(signal);
    if (!group) {
      const members = new Set<T>();
      const listener = (): void => {
        this.groups.delete(signal);
        for (const m of members) this.onAbort(m, signal);
      };
      signal.addEventListener("abort", listener, { once: true });
      group = { listener, members };
      this.groups.set(signal, group);
    }
    group.members.add(member);
  }

  remove(signal: AbortSignal, member: T): void {
    const group = this.groups.get(signal);
    if (!group?.members.delete(member) || group.members.size > 0) return;
    signal.removeEventListener("abort", group.listener);
    this.groups.delete(signal);
  }
}
