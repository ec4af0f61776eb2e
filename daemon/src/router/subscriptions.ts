import type { Subscriber, SubscriptionRegistry } from "./ports.js";
import type { Upstream } from "./upstream-port.js";
import { subscriptionKey } from "./subscribed-forms.js";

/** One URI subscribed upstream: the session it is subscribed on, and the connections that asked. */
interface Subscribed {
  readonly handle: Upstream;
  readonly uri: string;
  readonly subscribers: Set<Subscriber>;
}

/**
 * Resource subscriptions, reference-counted per upstream session and URI: the session is subscribed once,
 * with the first connection, and unsubscribed with the last; a restarted one is subscribed again. Each
 * session of a per-client server (one per connection) has subscriptions and updates of its own.
 */
export class Subscriptions implements SubscriptionRegistry {
  /** {@link subscriptionKey} -> what is subscribed there. */
  private readonly byKey = new Map<string, Subscribed>();

  /** Session and URI pairs subscribed upstream. */
  get size(): number {
    return this.byKey.size;
  }

  /** The connections subscribed to `uri` of that upstream session. */
  subscribers(handle: Upstream, uri: string): ReadonlySet<Subscriber> | undefined {
    return this.byKey.get(subscriptionKey(handle, uri))?.subscribers;
  }

  async subscribe(subscriber: Subscriber, handle: Upstream, uri: string, waitMs: number): Promise<void> {
    const key = subscriptionKey(handle, uri);
    const subscribed = this.byKey.get(key);
    if (subscribed) {
      subscribed.subscribers.add(subscriber);
      subscriber.subscriptions.add(key);
      return;
    }
    this.byKey.set(key, { handle, uri, subscribers: new Set([subscriber]) });
    subscriber.subscriptions.add(key);
    try {
      await handle.request("resources/subscribe", { uri }, { waitMs, timeout: waitMs });
    } catch (err) {
      this.byKey.delete(key);
      subscriber.subscriptions.delete(key);
      throw err;
    }
  }

  async unsubscribe(subscriber: Subscriber, key: string): Promise<void> {
    subscriber.subscriptions.delete(key);
    const subscribed = this.byKey.get(key);
    if (!subscribed?.subscribers.delete(subscriber) || subscribed.subscribers.size > 0) return;
    this.byKey.delete(key);
    const { handle, uri } = subscribed;
    if (handle.state === "ready") await handle.request("resources/unsubscribe", { uri }, { waitMs: 0, timeout: 10_000 });
  }

  /** A restarted session lost its subscriptions: subscribe it again to every URI a connection holds there. */
  restore(handle: Upstream): void {
    for (const { handle: h, uri } of this.byKey.values()) {
      if (h === handle) handle.request("resources/subscribe", { uri }, { waitMs: 0, timeout: 10_000 }).catch(() => {});
    }
  }
}
