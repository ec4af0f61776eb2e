import {
  McpRemoteError,
  META,
  ModernErrorCode,
  WireCode,
  inEra,
  isObject,
  mcpMethod,
  withEnvelope,
  type JsonObject,
  type Logger,
  type RequestCaller,
  type RequestReply,
} from "@mcpd/protocol";
import type { MCPTransport, TransportRequestOptions } from "@mcpd/transports";
import { ToolHeaders } from "./tool-headers.js";
import { UpstreamListen } from "./upstream-listen.js";

/** A request's options upstream, with whom it is sent for (a 2026 server gets that client's envelope). */
export interface UpstreamRequestOptions extends TransportRequestOptions {
  /** The client the request is relayed for; absent: mcpd's own request. */
  caller?: RequestCaller;
}

/**
 * What a session with a 2026-era server adds to the 2025 one (docs/protocol.md, "Eras upstream"): every
 * request carries the envelope in its `_meta` (the calling client's capabilities, info and log level, else
 * mcpd's own); what the 2026 era removed is answered here (`logging/setLevel` becomes the level of later
 * requests), or mapped onto what it has (`resources/subscribe` and `unsubscribe` onto the one
 * `subscriptions/listen` stream, see {@link UpstreamListen}), or refused.
 */
export class ModernUpstream {
  /** The level of `notifications/message` mcpd's own requests ask for (set by `logging/setLevel`); none: no log messages. */
  private logLevel: string | undefined;
  /** The one `subscriptions/listen` stream: list changes and the resources 2025-era clients subscribed to. */
  readonly listen: UpstreamListen;
  /** Over Streamable HTTP: the tools' `x-mcp-header` annotations (their `Mcp-Param-*` headers, the tools they invalidate). */
  readonly headers: ToolHeaders | undefined;

  constructor(
    private readonly transport: MCPTransport,
    readonly version: string,
    private readonly own: RequestCaller,
    private readonly log: Logger,
    refresh: () => void,
  ) {
    this.listen = new UpstreamListen(transport, (params) => this.params(params, undefined), log, refresh);
    if (transport.info().mode !== "streamable-http") return;
    const headers = (this.headers = new ToolHeaders(log));
    transport.paramHeaders = (method, params) => headers.headersFor(method, params);
  }

  /**
   * Sends a request with `caller`'s envelope (see {@link params}); `reply` learns the outcome. A tools/call
   * the server refuses with HeaderMismatch (-32020) over HTTP is sent once more after `relist` read the
   * tools again, as the spec advises (the tool's `inputSchema`, and so its `Mcp-Param-*` headers, may
   * have changed); a second refusal is the caller's.
   */
  send(
    method: string,
    params: JsonObject | undefined,
    options: UpstreamRequestOptions | undefined,
    reply: RequestReply,
    relist: () => Promise<void>,
  ): void {
    const sent = this.params(params, options?.caller);
    if (method !== "tools/call" || this.headers === undefined) return this.dispatch(method, sent, options, reply);
    this.dispatch(method, sent, options, {
      resolve: (result) => reply.resolve(result),
      reject: (err) => {
        if (!(err instanceof McpRemoteError) || err.rpcCode !== ModernErrorCode.HeaderMismatch) return reply.reject(err);
        this.log.info({ tool: sent.name as string, err: err.rpcMessage }, "header mismatch: listing the tools again, then retrying once");
        relist().then(
          () => this.dispatch(method, sent, options, reply),
          () => reply.reject(err),
        );
      },
    });
  }

  private dispatch(method: string, sent: JsonObject, options: UpstreamRequestOptions | undefined, reply: RequestReply): void {
    const t = this.transport;
    if (t.call) return t.call(method, sent, options, reply);
    t.request<JsonObject>(method, sent, options).then(
      (result) => reply.resolve(result),
      (err: unknown) => reply.reject(err),
    );
  }

  /** `params` with the envelope for `caller` (absent: mcpd's own). */
  params(params: JsonObject | undefined, caller: RequestCaller | undefined): JsonObject {
    return withEnvelope(params, this.version, caller, this.logLevel === undefined ? this.own : { ...this.own, logLevel: this.logLevel });
  }

  /**
   * What mcpd answers itself instead of sending `method` to a 2026 server: `logging/setLevel` (kept as the
   * level of later requests), `resources/subscribe` and `unsubscribe` (the URI added to or taken from the
   * listen stream), or an error for another method the 2026 era does not have, or for a `tools/call` of a
   * tool left out for an invalid `x-mcp-header` annotation (-32602). Undefined: send it.
   */
  answer(method: string, params: JsonObject | undefined): JsonObject | Promise<JsonObject> | McpRemoteError | undefined {
    if (method === "tools/call") return this.headers?.refusal(params?.name);
    if (method === "logging/setLevel") {
      this.logLevel = typeof params?.level === "string" ? params.level : undefined;
      return {};
    }
    if ((method === "resources/subscribe" || method === "resources/unsubscribe") && typeof params?.uri === "string")
      return method === "resources/subscribe" ? this.listen.subscribe(params.uri) : this.listen.unsubscribe(params.uri);
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

  /** The session ended: no stream is opened again. */
  end(): void {
    this.listen.end();
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
