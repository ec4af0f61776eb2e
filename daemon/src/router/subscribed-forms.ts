import type { Subscriber, SubscriptionRegistry } from "./ports.js";
import { upstreamSerial } from "./upstream-keys.js";
import type { Upstream } from "./upstream-port.js";

/**
 * The key of one subscription: the upstream session's (a per-client server's sessions are one per
 * connection, each with its own subscriptions and updates) and the URI.
 */
export function subscriptionKey(upstream: Upstream, uri: string): string {
  return `${upstreamSerial(upstream)}\0${uri}`;
}

/**
 * The URI forms one connection subscribed to each (server, URI) with: the server's own URI, or the
 * aggregate view's namespaced `mcpd://<server>/<uri>`. Updates go out once per form: a client matches them
 * by the URI it used.
 */
export class SubscribedForms {
  /** {@link subscriptionKey} -> forms. Made by the first subscription: most connections never subscribe. */
  private forms: Map<string, Set<string>> | undefined;

  add(key: string, form: string): void {
    this.forms ??= new Map();
    const forms = this.forms.get(key) ?? new Set<string>();
    forms.add(form);
    this.forms.set(key, forms);
  }

  /** Drops one form; true when it was the last of that key (the connection's subscription then ends). */
  remove(key: string, form: string): boolean {
    const forms = this.forms?.get(key);
    forms?.delete(form);
    if (forms && forms.size > 0) return false;
    this.forms?.delete(key);
    return true;
  }

  of(key: string): ReadonlySet<string> | undefined {
    return this.forms?.get(key);
  }

  /** Whether its table exists (a subscription was ever made). */
  get allocated(): boolean {
    return this.forms !== undefined;
  }
}

/**
 * (Un)subscribes `subscriber` to (server, `uri`) as `clientUri`, the form the client wrote (the server's URI
 * or the aggregate view's namespaced one) and keeps in `forms` (which a subscribe must be given). Updates go
 * out in every form; the upstream subscription ends with the last one.
 */
export function changeSubscription(
  registry: SubscriptionRegistry,
  subscriber: Subscriber,
  forms: SubscribedForms | undefined,
  method: string,
  handle: Upstream,
  uri: string,
  clientUri: string,
): Promise<void> {
  const key = subscriptionKey(handle, uri);
  if (method === "resources/subscribe")
    return registry.subscribe(subscriber, handle, uri, handle.config.timeout).then(() => forms?.add(key, clientUri));
  return (forms?.remove(key, clientUri) ?? true) ? registry.unsubscribe(subscriber, key) : Promise.resolve();
}
