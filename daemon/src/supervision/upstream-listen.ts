import {
  McpRemoteError,
  META,
  ProtocolError,
  TransportClosedError,
  WireCode,
  isObject,
  type JsonObject,
  type Logger,
  type RequestId,
  type ServerCapabilities,
} from "@mcpd/protocol";
import type { MCPTransport, MessageContext, TransportRequestOptions } from "@mcpd/transports";
import { RUNTIME_DEFAULTS } from "../defaults.js";

/** The list_changed notifications a `subscriptions/listen` filter opts into, by the capability advertising them. */
const LISTEN_FILTERS = [
  ["tools", "toolsListChanged"],
  ["prompts", "promptsListChanged"],
  ["resources", "resourcesListChanged"],
] as const;

/** How many retired streams are remembered (a replaced stream's late notifications are dropped). */
const RETIRED_KEPT = 8;

/** A change of the resource set waiting for the listen that covers it to be acknowledged. */
interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

/** A listen request sent and not yet acknowledged. */
interface Opening {
  id: RequestId | undefined;
  uris: readonly string[];
  settle(err?: unknown): void;
}

/**
 * The one `subscriptions/listen` stream mcpd keeps open to a 2026 server (docs/protocol.md, "A 2026
 * session"): it opts in to the list changes the server's capabilities advertise, and to
 * `notifications/resources/updated` for every URI a 2025-era client subscribed to with
 * `resources/subscribe` (reference-counted per URI by the router: this set holds each URI once). A listen's
 * filter is fixed when it opens, so a change of the URIs opens a new listen, and once the server
 * acknowledged it (a subscribe is answered then), cancels the old one: notifications are taken from the
 * newest acknowledged stream only, never twice. Changes made while a listen opens wait for the next one.
 * A stream that ends while the session lives is opened again (bounded), and `refresh` re-reads the lists.
 */
export class UpstreamListen {
  private readonly uris = new Set<string>();
  private lists: JsonObject = {};
  /** The stream whose notifications are relayed. */
  private active: RequestId | undefined;
  /** The last streams mcpd ended itself: their end is no reason to open again, and what they still carry is dropped. */
  private readonly retired: RequestId[] = [];
  private opening: Opening | undefined;
  private waiting: Waiter[] = [];
  private reopens = 0;
  private ended = false;

  constructor(
    private readonly transport: MCPTransport,
    private readonly params: (params: JsonObject) => JsonObject,
    private readonly log: Logger,
    private readonly refresh: () => void,
  ) {}

  /** Opens the first stream, for the lists `capabilities` say may change (none and no URIs: no stream). */
  start(capabilities: ServerCapabilities): void {
    for (const [cap, field] of LISTEN_FILTERS)
      if (isObject(capabilities[cap]) && capabilities[cap].listChanged === true) this.lists[field] = true;
    this.change().catch(() => {});
  }

  /** Adds `uri` to the stream's resources; resolves once a listen naming it is acknowledged. @throws McpRemoteError when the server does not honour it. */
  async subscribe(uri: string): Promise<JsonObject> {
    if (this.uris.has(uri)) return {};
    this.uris.add(uri);
    try {
      await this.change();
    } catch (err) {
      this.uris.delete(uri);
      throw err;
    }
    if (!this.uris.has(uri))
      throw new McpRemoteError({ code: WireCode.InvalidParams, message: `The server does not honour a subscription to ${uri}` });
    return {};
  }

  /** Takes `uri` out of the stream's resources (a new listen without it replaces the old one). */
  async unsubscribe(uri: string): Promise<JsonObject> {
    if (this.uris.delete(uri)) await this.change();
    return {};
  }

  private change(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    if (this.opening !== undefined || this.waiting.length === 0) return;
    const batch = this.waiting.splice(0);
    if (this.ended) {
      for (const w of batch) w.reject(this.transportGone());
      return;
    }
    const filter: JsonObject = { ...this.lists };
    if (this.uris.size > 0) filter.resourceSubscriptions = [...this.uris];
    if (Object.keys(filter).length === 0) {
      this.retire(this.active);
      this.active = undefined;
      for (const w of batch) w.resolve();
      return;
    }
    const opening: Opening = {
      id: undefined,
      uris: [...this.uris],
      settle: (err) => {
        if (this.opening !== opening) return;
        this.opening = undefined;
        for (const w of batch) {
          if (err === undefined) w.resolve();
          else w.reject(err);
        }
        this.pump();
      },
    };
    this.opening = opening;
    this.open(filter, opening);
  }

  private open(filter: JsonObject, opening: Opening): void {
    const options: TransportRequestOptions = { timeout: 0, onRequestId: (id) => (opening.id = id) };
    this.transport.request("subscriptions/listen", this.params({ notifications: filter }), options).then(
      () => this.closed(opening, undefined),
      (err: unknown) => this.closed(opening, err),
    );
  }

  /** A listen's request ended: by the server (no error), by mcpd (retired), or failed. */
  private closed(opening: Opening, err: unknown): void {
    const id = opening.id;
    if (id !== undefined && this.retired.includes(id)) return;
    opening.settle(err ?? new ProtocolError("subscriptions/listen ended before the server acknowledged it"));
    if (id !== this.active) return;
    this.active = undefined;
    if (err === undefined) return this.log.debug({}, "subscriptions/listen ended by the server");
    // The server refused it, or the session is over: nothing to open again.
    if (err instanceof McpRemoteError || this.ended || !this.transport.connected) return;
    if (this.reopens >= RUNTIME_DEFAULTS.listenReopenMax)
      return this.log.warn({ err: (err as Error).message }, "subscriptions/listen ended; not opened again");
    this.reopens++;
    this.log.debug({ err: (err as Error).message }, "subscriptions/listen ended; opening it again");
    setTimeout(() => {
      if (this.ended || !this.transport.connected) return;
      this.change().catch(() => {});
      this.refresh();
    }, RUNTIME_DEFAULTS.listenReopenDelayMs).unref();
  }

  private retire(id: RequestId | undefined): void {
    if (id === undefined) return;
    this.retired.push(id);
    if (this.retired.length > RETIRED_KEPT) this.retired.shift();
    this.transport.cancel(id, new Error("subscriptions/listen replaced"));
  }

  /** The listen stream a notification came on: its `subscriptionId`, else (HTTP) the request whose stream carried it. */
  private streamOf(params: JsonObject | undefined, context: MessageContext): RequestId | undefined {
    const meta = params?._meta;
    const id = isObject(meta) ? meta[META.subscriptionId] : undefined;
    return typeof id === "string" || typeof id === "number" ? id : context.relatedRequestId;
  }

  /**
   * Whether a notification is the streams' own business, consumed here: an acknowledgement (which makes
   * its stream the active one, retires the one before and settles the changes waiting), the server ending
   * a stream, and anything from a stream that is not the active one (replaced, or not acknowledged yet).
   */
  consumes(method: string, params: JsonObject | undefined, context: MessageContext): boolean {
    if (method === "notifications/cancelled") {
      const id = params?.requestId;
      return id !== undefined && (id === this.active || id === this.opening?.id);
    }
    const stream = this.streamOf(params, context);
    const opening = this.opening;
    if (method === "notifications/subscriptions/acknowledged") {
      if (opening === undefined || stream !== opening.id) return true;
      this.log.debug({ notifications: params?.notifications as JsonObject }, "subscriptions/listen acknowledged");
      this.retire(this.active);
      this.active = stream;
      const honoured = isObject(params?.notifications) ? params.notifications.resourceSubscriptions : undefined;
      const kept = new Set(Array.isArray(honoured) ? honoured : []);
      for (const uri of opening.uris) if (!kept.has(uri)) this.uris.delete(uri);
      opening.settle();
      return true;
    }
    return stream !== undefined && stream !== this.active && (stream === opening?.id || this.retired.includes(stream));
  }

  /** The session ended: no stream is opened again, and changes waiting fail. */
  end(): void {
    this.ended = true;
    this.opening?.settle(this.transportGone());
    for (const w of this.waiting.splice(0)) w.reject(this.transportGone());
  }

  private transportGone(): TransportClosedError {
    return new TransportClosedError("the server's session ended");
  }
}
