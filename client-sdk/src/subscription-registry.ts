import type { JsonObject } from "@mcpd/protocol/core";

/** Payload given to a {@link subscribe} callback for each `notifications/resources/updated`. */
export interface ResourceUpdate {
  uri: string;
  /** The server that sent it, when known. */
  server: string | undefined;
  /** The notification's params, as sent (`_meta` included). */
  params: JsonObject;
}

interface Entry {
  uri: string;
  server: string | undefined;
  /** One token per subscribe() call, so the same function subscribed twice needs two unsubscribes. */
  callbacks: Map<object, (update: ResourceUpdate) => void>;
  ready: Promise<void>;
  /** True once the daemon confirmed: only confirmed entries are restored after a reconnection. */
  active: boolean;
  /** True when restoring it on a new connection failed; retried when its server becomes ready. */
  stale: boolean;
}

/** How the registry reaches the daemon. */
export interface SubscriptionTransport {
  /** Sends `resources/subscribe` or `resources/unsubscribe` for (server, uri) and waits for the answer. */
  send(method: "resources/subscribe" | "resources/unsubscribe", server: string | undefined, uri: string): Promise<void>;
  /** False while disconnected: an unsubscribe is then not sent (the daemon dropped it with the connection). */
  connected(): boolean;
}

/**
 * The client's resource subscriptions, one upstream subscription per (server, URI) however many callbacks
 * share it. They outlive connections: {@link restore} re-sends them after a reconnection.
 */
export class SubscriptionRegistry {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly transport: SubscriptionTransport) {}

  /** Number of distinct (server, URI) subscriptions. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * Adds a callback for `uri` (of `server`, or routed by URI when undefined); subscribes upstream when it
   * is the first. Resolves with an idempotent async unsubscribe.
   * @throws (rejects) the daemon's error when the first subscribe fails.
   */
  async add(uri: string, server: string | undefined, callback: (update: ResourceUpdate) => void): Promise<() => Promise<void>> {
    const key = keyOf(server, uri);
    let entry = this.entries.get(key);
    if (!entry) {
      const e: Entry = { uri, server, callbacks: new Map(), ready: Promise.resolve(), active: false, stale: false };
      e.ready = this.transport.send("resources/subscribe", server, uri).then(
        () => {
          e.active = true;
        },
        (err: unknown) => {
          if (this.entries.get(key) === e) this.entries.delete(key);
          throw err;
        },
      );
      this.entries.set(key, e);
      entry = e;
    }
    const token = {};
    const e = entry;
    e.callbacks.set(token, callback);
    try {
      await e.ready;
    } catch (err) {
      e.callbacks.delete(token);
      throw err;
    }
    return async () => {
      if (!e.callbacks.delete(token) || e.callbacks.size > 0 || this.entries.get(key) !== e) return;
      this.entries.delete(key);
      if (this.transport.connected()) await this.transport.send("resources/unsubscribe", server, uri);
    };
  }

  /** Calls the callbacks subscribed to `uri` (of `server`, and those routed by URI alone). */
  deliver(params: JsonObject, server: string | undefined): void {
    const uri = params.uri;
    if (typeof uri !== "string") return;
    const update: ResourceUpdate = { uri, server, params };
    const routed = this.entries.get(keyOf(undefined, uri));
    if (routed) for (const cb of routed.callbacks.values()) cb(update);
    if (server !== undefined) {
      const own = this.entries.get(keyOf(server, uri));
      if (own) for (const cb of own.callbacks.values()) cb(update);
    }
  }

  /**
   * Re-sends every confirmed subscription on a new connection. Failures are returned, not thrown: one
   * resource that went away must not stop the others (or the reconnection).
   */
  async restore(
    send: (server: string | undefined, uri: string) => Promise<void>,
  ): Promise<Array<{ uri: string; server: string | undefined; error: Error }>> {
    const failures: Array<{ uri: string; server: string | undefined; error: Error }> = [];
    const active = [...this.entries.values()].filter((e) => e.active);
    await Promise.all(
      active.map((e) =>
        send(e.server, e.uri).then(
          () => {
            e.stale = false;
          },
          (error: Error) => {
            e.stale = true;
            failures.push({ uri: e.uri, server: e.server, error });
          },
        ),
      ),
    );
    return failures;
  }

  /**
   * Re-sends the subscriptions whose restore failed (typically: the daemon had just started and did not
   * know the server yet) once `server` is ready. Those routed by URI alone are retried for any server.
   */
  async retryStale(server: string): Promise<Array<{ uri: string; server: string | undefined; error: Error }>> {
    const failures: Array<{ uri: string; server: string | undefined; error: Error }> = [];
    const stale = [...this.entries.values()].filter((e) => e.stale && (e.server === undefined || e.server === server));
    await Promise.all(
      stale.map((e) =>
        this.transport.send("resources/subscribe", e.server, e.uri).then(
          () => {
            e.stale = false;
          },
          (error: Error) => {
            failures.push({ uri: e.uri, server: e.server, error });
          },
        ),
      ),
    );
    return failures;
  }
}

function keyOf(server: string | undefined, uri: string): string {
  return `${server ?? ""}\n${uri}`;
}
