import {
  McpRemoteError,
  META,
  WireCode,
  inEra,
  isObject,
  mcpMethod,
  withEnvelope,
  type JsonObject,
  type Logger,
  type RequestCaller,
  type RequestId,
  type ServerCapabilities,
} from "@mcpd/protocol";
import type { MCPTransport, TransportRequestOptions } from "@mcpd/transports";
import { RUNTIME_DEFAULTS } from "../defaults.js";

/** A request's options upstream, with whom it is sent for (a 2026 server gets that client's envelope). */
export interface UpstreamRequestOptions extends TransportRequestOptions {
  /** The client the request is relayed for; absent: mcpd's own request. */
  caller?: RequestCaller;
}

/** The list_changed notifications a `subscriptions/listen` filter opts into, by the capability advertising them. */
const LISTEN_FILTERS = [
  ["tools", "toolsListChanged"],
  ["prompts", "promptsListChanged"],
  ["resources", "resourcesListChanged"],
] as const;

/**
 * What a session with a 2026-era server adds to the 2025 one (docs/protocol.md, "Eras upstream"): every
 * request carries the envelope in its `_meta` (the calling client's capabilities, info and log level, else
 * mcpd's own); what the 2026 era removed is answered here (`logging/setLevel` becomes the level of later
 * requests) or refused; list changes and the updates of the resources 2025 clients subscribed to come through
 * one `subscriptions/listen` stream, opened for the lists whose capability advertises `listChanged` and the
 * subscribed URIs, opened anew when those change, and opened again when it ends while the session lives.
 */
export class ModernUpstream {
  /** The level of `notifications/message` mcpd's own requests ask for (set by `logging/setLevel`); none: no log messages. */
  private logLevel: string | undefined;
  /** The ids of the listen streams open (one, and for a moment the one it replaces). */
  private readonly listenIds = new Set<RequestId>();
  /** Ends the open listen stream. */
  private listenAbort: AbortController | undefined;
  /** The resource URIs 2025 clients subscribed to through mcpd (`resources/subscribe`), on the stream. */
  private readonly uris = new Set<string>();
  private capabilities: ServerCapabilities = {};
  private refresh: () => void = () => {};
  private reopens = 0;
  private ended = false;

  constructor(
    private readonly transport: MCPTransport,
    readonly version: string,
    private readonly own: RequestCaller,
    private readonly log: Logger,
  ) {}

  /** `params` with the envelope for `caller` (absent: mcpd's own). */
  params(params: JsonObject | undefined, caller: RequestCaller | undefined): JsonObject {
    return withEnvelope(params, this.version, caller, this.logLevel === undefined ? this.own : { ...this.own, logLevel: this.logLevel });
  }

  /**
   * What mcpd answers itself instead of sending `method` to a 2026 server: `logging/setLevel` (kept as the
   * level of later requests), or an error for another method the 2026 era does not have. Undefined: send it.
   */
  answer(method: string, params: JsonObject | undefined): JsonObject | McpRemoteError | undefined {
    if (method === "logging/setLevel") {
      this.logLevel = typeof params?.level === "string" ? params.level : undefined;
      return {};
    }
    if (method === "resources/subscribe" || method === "resources/unsubscribe") return this.subscription(method, params);
    if (mcpMethod(method) === undefined || inEra(method, "2026")) return undefined;
    return new McpRemoteError({
      code: WireCode.MethodNotFound,
      message: `${method} does not exist in MCP ${this.version}, which the server speaks`,
    });
  }

  /** A liveness check in place of `ping` (which the 2026 era removed): `server/discover`. */
  async ping(options?: TransportRequestOptions): Promise<JsonObject> {
    await this.transport.request("server/discover", this.params({}, undefined), options);
    return {};
  }

  /**
   * Opens the `subscriptions/listen` stream for the lists `capabilities` say may change and the resources
   * subscribed to (none of either: no stream). It has no deadline; its notifications reach the session like
   * any other. `refresh` re-reads every list after a stream was opened again (changes may have been missed
   * meanwhile).
   */
  listen(capabilities: ServerCapabilities, refresh: () => void): void {
    this.capabilities = capabilities;
    this.refresh = refresh;
    this.openListen();
  }

  /** The filter of the stream: the lists that may change, and the resource URIs subscribed to. */
  private filter(): JsonObject {
    const filter: JsonObject = {};
    for (const [cap, field] of LISTEN_FILTERS)
      if (isObject(this.capabilities[cap]) && this.capabilities[cap].listChanged === true) filter[field] = true;
    if (this.uris.size > 0) filter.resourceSubscriptions = [...this.uris];
    return filter;
  }

  /** Opens the stream with today's filter, then ends the one it replaces (so no change falls in between). */
  private openListen(): void {
    const replaced = this.listenAbort;
    this.listenAbort = undefined;
    const filter = this.filter();
    if (Object.keys(filter).length > 0 && !this.ended) {
      const abort = new AbortController();
      this.listenAbort = abort;
      let id: RequestId | undefined;
      const options: TransportRequestOptions = { timeout: 0, signal: abort.signal, onRequestId: (i) => this.listenIds.add((id = i)) };
      this.transport
        .request("subscriptions/listen", this.params({ notifications: filter }, undefined), options)
        .then(
          () => this.log.debug({}, "subscriptions/listen ended by the server"),
          (err: Error) => this.listenEnded(abort, err),
        )
        .finally(() => id !== undefined && this.listenIds.delete(id));
    }
    replaced?.abort(new Error("subscriptions/listen replaced"));
  }

  private listenEnded(abort: AbortController, err: Error): void {
    // Replaced by a stream with another filter, refused by the server, or the session is over: not opened again.
    if (abort.signal.aborted || this.listenAbort !== abort) return;
    this.listenAbort = undefined;
    if (err instanceof McpRemoteError || this.ended || !this.transport.connected) return;
    if (this.reopens >= RUNTIME_DEFAULTS.listenReopenMax)
      return this.log.warn({ err: err.message }, "subscriptions/listen ended; not opened again");
    this.reopens++;
    this.log.debug({ err: err.message }, "subscriptions/listen ended; opening it again");
    setTimeout(() => {
      if (this.ended || !this.transport.connected || this.listenAbort !== undefined) return;
      this.openListen();
      this.refresh();
    }, RUNTIME_DEFAULTS.listenReopenDelayMs).unref();
  }

  /**
   * `resources/subscribe` and `resources/unsubscribe` (which the 2026 era removed) from 2025 clients: the
   * URI joins or leaves the stream's `resourceSubscriptions`, and the stream is opened again with them.
   */
  private subscription(method: string, params: JsonObject | undefined): JsonObject | McpRemoteError {
    const uri = params?.uri;
    if (typeof uri !== "string") return new McpRemoteError({ code: WireCode.InvalidParams, message: `${method} needs a string uri` });
    const had = this.uris.has(uri);
    if (method === "resources/subscribe") this.uris.add(uri);
    else this.uris.delete(uri);
    if (had !== this.uris.has(uri) && !this.ended) this.openListen();
    return {};
  }

  /**
   * Whether a notification is the listen stream's own business (its acknowledgement, the server ending it),
   * consumed here. A list change on the stream is not: see {@link unstamped}.
   */
  consumes(method: string, params: JsonObject | undefined): boolean {
    if (method === "notifications/subscriptions/acknowledged") {
      this.log.debug({ notifications: params?.notifications as JsonObject }, "subscriptions/listen acknowledged");
      return true;
    }
    if (method === "notifications/cancelled" && params?.requestId !== undefined && this.listenIds.has(params.requestId as RequestId)) {
      this.log.debug({}, "subscriptions/listen ended by the server");
      return true;
    }
    return false;
  }

  /** The session ended: no stream is opened again. */
  end(): void {
    this.ended = true;
    this.listenAbort?.abort(new Error("session ended"));
    this.listenAbort = undefined;
  }
}

/** A listen stream's notification without its `subscriptionId` (the stream is mcpd's, not a client's). */
export function unstamped(params: JsonObject | undefined): JsonObject | undefined {
  const meta = params?._meta;
  if (!isObject(meta) || !(META.subscriptionId in meta)) return params;
  const { [META.subscriptionId]: _id, ...rest } = meta;
  const { _meta: _m, ...others } = params as JsonObject;
  return Object.keys(rest).length > 0 ? { ...others, _meta: rest } : others;
}
