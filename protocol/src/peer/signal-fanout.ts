/**
 * One 'abort' listener per AbortSignal, however many members (pending requests, waiters) share it.
 *
 * Callers often pass one long-lived signal (an agent's "stop" signal) to many requests. A listener per
 * request would grow that signal's listener list without bound and trip Node's
 * MaxListenersExceededWarning after a few thousand calls, which the official SDK's clients do. Members
 * are removed as they settle, and the listener with the last of them. No closure is made per member.
 */
export class SignalFanout<T> {
  private readonly groups = new Map<AbortSignal, FanoutGroup<T>>();

  /** @param onAbort called once for each member still registered when its signal aborts. */
  constructor(private readonly onAbort: (member: T, signal: AbortSignal) => void) {}

  /** Signals currently listened to. */
  get size(): number {
    return this.groups.size;
  }

  /** Calls `onAbort(member, signal)` when `signal` aborts, unless {@link remove} ran first. The caller checks `signal.aborted` before. */
  add(signal: AbortSignal, member: T): void {
    let group = this.groups.get(signal);
    if (group === undefined) {
      group = new FanoutGroup(signal, this);
      this.groups.set(signal, group);
      signal.addEventListener("abort", group, { once: true });
    }
    group.members.add(member);
  }

  /** Stops watching `signal` for `member`; the listener goes with the signal's last member. */
  remove(signal: AbortSignal, member: T): void {
    const group = this.groups.get(signal);
    if (group === undefined || !group.members.delete(member) || group.members.size > 0) return;
    signal.removeEventListener("abort", group);
    this.groups.delete(signal);
  }

  /** @internal The signal aborted: forget the group first, so members settling meanwhile find nothing to remove. */
  fire(group: FanoutGroup<T>): void {
    if (this.groups.get(group.signal) === group) this.groups.delete(group.signal);
    for (const member of Array.from(group.members)) this.onAbort(member, group.signal);
    group.members.clear();
  }
}

/** The members of one signal; it is itself the 'abort' listener (an EventListener object, no closure). */
class FanoutGroup<T> {
  readonly members = new Set<T>();
  constructor(
    readonly signal: AbortSignal,
    private readonly owner: SignalFanout<T>,
  ) {}
  handleEvent(): void {
    this.owner.fire(this);
  }
}
