import {
  META,
  isObject,
  mcpMethod,
  toModernError,
  toWireError,
  type JsonObject,
  type JsonRpcErrorObject,
  type RequestId,
} from "@mcpd/protocol";
import { RUNTIME_DEFAULTS } from "../defaults.js";

/** What a connection's `subscriptions/listen` streams need from it (its Session). */
export interface ListenHost {
  /** Sends one message to the client. */
  send(message: object): void;
  replyError(id: RequestId | null, error: JsonRpcErrorObject): void;
  /** Serves a request of mcpd's own as the connection's view would (resource subscriptions); its answer comes back to {@link ListenStreams.swallows}. */
  route(id: RequestId, method: string, params: JsonObject | undefined): void;
  /** The view's initialize-shaped description (its `capabilities` say what can be honoured). */
  viewInit(): Promise<JsonObject>;
}

/** One open `subscriptions/listen`: its id (the subscription id) and what it was granted. */
interface Listen {
  readonly id: RequestId;
  /** The filter honoured, as acknowledged. */
  readonly honoured: JsonObject;
  /** The resource URIs subscribed for it, in the form the client wrote. */
  readonly uris: Set<string>;
  acked: boolean;
}

/** Prefix of the ids of mcpd's own resource (un)subscriptions made for a listen (no client id starts with a NUL). */
const OWN_ID = "\u0000listen:";
const LIST_KINDS = ["tools", "prompts", "resources"] as const;

/**
 * A connection's `subscriptions/listen` streams (2026 era): each is acknowledged with what mcpd will send
 * on it (`notifications/subscriptions/acknowledged`, the listen's id as `_meta.subscriptionId`), then gets
 * only the list changes it opted in to and the updates of the resources it named, each tagged with its id.
 * Resource subscriptions are made through the connection's own view (namespaced URIs and filters as for
 * `resources/subscribe`), and ended with the stream.
 */
export class ListenStreams {
  private readonly streams = new Map<RequestId, Listen>();
  /** mcpd's own subscribe/unsubscribe requests for listens, waiting for their answers. */
  private readonly own = new Map<string, (ok: boolean) => void>();
  private seq = 0;

  constructor(private readonly host: ListenHost) {}

  has(id: RequestId): boolean {
    return this.streams.has(id);
  }

  get size(): number {
    return this.streams.size;
  }

  /** Opens a listen: the acknowledgement goes once its resource subscriptions are made. */
  open(id: RequestId, params: JsonObject | undefined): void {
    const filter = isObject(params?.notifications) ? params.notifications : {};
    const listen: Listen = { id, honoured: {}, uris: new Set(), acked: false };
    this.streams.set(id, listen);
    this.host.viewInit().then(
      (init) => {
        if (this.streams.get(id) !== listen) return;
        const caps = isObject(init.capabilities) ? init.capabilities : {};
        for (const kind of LIST_KINDS) {
          const cap = caps[kind];
          if (filter[`${kind}ListChanged`] === true && isObject(cap) && cap.listChanged === true)
            listen.honoured[`${kind}ListChanged`] = true;
        }
        const asked = Array.isArray(filter.resourceSubscriptions) ? filter.resourceSubscriptions : [];
        const uris = [...new Set(asked.filter((u): u is string => typeof u === "string"))].slice(0, RUNTIME_DEFAULTS.maxListenUris);
        if (uris.length === 0 || !isObject(caps.resources) || caps.resources.subscribe !== true) return this.ack(listen, asked.length > 0);
        let left = uris.length;
        for (const uri of uris) {
          this.ownRequest("resources/subscribe", uri, (ok) => {
            if (ok && this.streams.get(id) === listen) listen.uris.add(uri);
            if (--left === 0) this.ack(listen, true);
          });
        }
      },
      (err: unknown) => {
        if (this.streams.get(id) !== listen) return;
        this.streams.delete(id);
        this.host.replyError(id, toModernError(toWireError(err)));
      },
    );
  }

  private ack(listen: Listen, resources: boolean): void {
    if (this.streams.get(listen.id) !== listen) return;
    listen.acked = true;
    if (resources) listen.honoured.resourceSubscriptions = [...listen.uris];
    this.host.send({
      jsonrpc: "2.0",
      method: "notifications/subscriptions/acknowledged",
      params: { notifications: listen.honoured, _meta: { [META.subscriptionId]: listen.id } },
    });
  }

  private ownRequest(method: string, uri: string, done: (ok: boolean) => void): void {
    const id = `${OWN_ID}${++this.seq}`;
    this.own.set(id, done);
    this.host.route(id, method, { uri });
  }

  /** True (and handled) when `id` is the answer to one of mcpd's own requests for a listen: not the client's to see. */
  swallows(id: RequestId, failed: boolean): boolean {
    if (typeof id !== "string" || !id.startsWith(OWN_ID)) return false;
    const done = this.own.get(id);
    this.own.delete(id);
    done?.(!failed);
    return true;
  }

  /** Ends a listen (the client cancelled it, or left); its resources are unsubscribed unless another listen holds them. False when no such listen. */
  end(id: RequestId): boolean {
    const listen = this.streams.get(id);
    if (!listen) return false;
    this.streams.delete(id);
    for (const uri of listen.uris) {
      let held = false;
      for (const other of this.streams.values()) held ||= other.uris.has(uri);
      if (!held) this.ownRequest("resources/unsubscribe", uri, () => {});
    }
    return true;
  }

  /** Delivers a server's notification (as the view shows it) to every listen that opted in to it, tagged with the listen's id. */
  deliver(method: string, params: JsonObject | undefined): void {
    const field = mcpMethod(method)?.listenFilter;
    if (field === undefined) return;
    for (const l of this.streams.values()) {
      if (!l.acked) continue;
      if (field === "resourceSubscriptions" ? !(typeof params?.uri === "string" && l.uris.has(params.uri)) : l.honoured[field] !== true)
        continue;
      const meta = isObject(params?._meta) ? params._meta : {};
      this.host.send({ jsonrpc: "2.0", method, params: { ...params, _meta: { ...meta, [META.subscriptionId]: l.id } } });
    }
  }
}
