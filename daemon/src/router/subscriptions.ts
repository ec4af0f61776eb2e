import type { Subscriber, SubscriptionRegistry } from "./ports.js";
import type { ServerDirectory, Upstream } from "./upstream-port.js";
import { subscriptionKey } from "./subscribed-forms.js";

/**
 * Resource subscriptions, reference-counted per server and URI: the server is subscribed once, with the
 * first connection, and unsubscribed with the last. A restarted server is subscribed again.
 */
export class Subscriptions implements SubscriptionRegistry {
  /** `<server>\0<uri>` -> subscribed connections. */
  private readonly byKey = new Map<string, Set<Subscriber>>();

  constructor(private readonly servers: Pick<ServerDirectory, "get">) {}

  /** Server and URI pairs subscribed upstream. */
  get size(): number {
    return this.byKey.size;
  }

  /** The connections subscribed to `uri` of that server. */
  subscribers(server: string, uri: string): ReadonlySet<Subscriber> | undefined {
    return this.byKey.get(subscriptionKey(server, uri));
  }

  async subscribe(subscriber: Subscriber, handle: Upstream, uri: string, waitMs: number): Promise<void> {
    const key = subscriptionKey(handle.name, uri);
    let set = this.byKey.get(key);
    if (set) {
      set.add(subscriber);
      subscriber.subscriptions.add(key);
      return;
    }
    set = new Set([subscriber]);
    this.byKey.set(key, set);
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
    const set = this.byKey.get(key);
    if (!set?.delete(subscriber) || set.size > 0) return;
    this.byKey.delete(key);
    const sep = key.indexOf("\0");
    const handle = this.servers.get(key.slice(0, sep));
    if (handle && handle.state === "ready") {
      await handle.request("resources/unsubscribe", { uri: key.slice(sep + 1) }, { waitMs: 0, timeout: 10_000 });
    }
  }

  /** A restarted server lost its subscriptions: subscribe it again to every URI a connection holds. */
  restore(handle: Upstream): void {
    for (const key of this.byKey.keys()) {
      if (key.startsWith(`${handle.name}\0`)) {
        handle.request("resources/subscribe", { uri: key.slice(handle.name.length + 1) }, { waitMs: 0, timeout: 10_000 }).catch(() => {});
      }
    }
  }
}
