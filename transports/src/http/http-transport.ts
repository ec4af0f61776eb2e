import { RequestTimeoutError, silentLogger } from "@mcpd/protocol";
import { TRANSPORT_DEFAULTS } from "../defaults.js";
import { PipeTransport } from "../pipe-transport.js";
import type { HttpServerConfig } from "../transport.js";
import { checkHttpTimeoutMs, resolveHttpConfig, type HttpTransportOptions } from "./http-config.js";
import type { HttpTransportMode } from "./http-outbox.js";
import { HttpPipe } from "./http-pipe.js";
import type { ParamHeaders } from "./modern-headers.js";

export type { HttpTransportOptions } from "./http-config.js";
export type { HttpTransportMode } from "./http-outbox.js";

/**
 * MCP over HTTP with undici (one keep-alive Agent per transport) and the protocol's SSE reader.
 *
 * **Streamable HTTP** (`type: "http"`, MCP 2025-03-26 .. 2025-11-25): every message is a POST with
 * `Accept: application/json, text/event-stream`, the configured headers, `Mcp-Session-Id` once assigned
 * and `MCP-Protocol-Version` after `initialize`. A JSON reply holds the response; an SSE reply is read
 * until the response with the request's id, delivering the notifications and server requests on it with
 * `context.relatedRequestId`. A stream that ends without the response fails with `NoResponseError`
 * (`MCPD_NO_RESPONSE`) unless it carried event ids: then it is resumed with `GET` + `Last-Event-ID`
 * (after `retry:`, at most `listenerMaxDelayMs`), up to `sseResumeAttempts` times in a row without
 * progress (a new last event id; an event replayed with an id already delivered is skipped). A 404 to a request that
 * carried a session id re-runs `initialize` (same params, then `notifications/initialized`) once, shared
 * by concurrent requests, and retries the request once. {@link startSSEListener} opens the background GET
 * (a 404 to it runs the same shared re-initialization, then listens on the new session).
 *
 * **Legacy HTTP+SSE** (`type: "sse"`, MCP 2024-11-05; and `type: "http"` when a POST of `initialize`
 * answers 400/404/405 and a GET of the URL yields an `endpoint` event): `connect()` opens the GET stream
 * and waits for the endpoint (same origin only); messages are POSTed there and everything comes back on
 * the stream. The stream ending closes the transport (`onClose({expected: false})`).
 *
 * Errors: non-2xx -> `HttpError` (`MCPD_HTTP_ERROR`, `HTTP <status>: <body>` plus auth headers); a
 * JSON-RPC error -> `McpRemoteError` (`MCP error <code>: <message>`); a body that is not JSON ->
 * `ParseError` (`MCPD_PARSE_ERROR`); a body or event over `maxBodyBytes` -> `MessageTooLargeError`
 * (`MCPD_MESSAGE_TOO_LARGE`); network failures propagate as undici's error (`.code` such as
 * `UND_ERR_SOCKET`, `ECONNREFUSED`). One deadline per request covers the POST and the whole reply:
 * `RequestTimeoutError` (`MCPD_REQUEST_TIMEOUT`) of kind `request` while waiting for headers, `sse`
 * while reading an SSE reply (or waiting on the legacy stream), `notify` for notifications. A caller
 * abort rejects with `signal.reason` unchanged. Both, and `cancel(id)`, abort the request's POST and send
 * `notifications/cancelled` once the POST had started (never for `initialize`). After close(),
 * everything rejects with `TransportClosedError` (`MCPD_TRANSPORT_CLOSED`).
 *
 * **OAuth** (`options.auth`, an `OAuthProvider`): every request carries the provider's access token
 * (refreshed first when close to expiry); a 401 is answered once by a refresh or a new authorization and
 * the request sent again, a 403 `insufficient_scope` by a step-up (bounded); see `OAuthClient` and
 * docs/auth.md. What the OAuth client throws (`OAuthError`, the provider's refusal) rejects the request.
 *
 * The requests' bookkeeping is the {@link JsonRpcPeer}'s; the exchanges are {@link HttpPipe}'s.
 */
export class HttpTransport extends PipeTransport<HttpPipe> {
  /** @throws ConfigError (`MCPD_CONFIG_INVALID`) naming the bad field. */
  constructor(config: HttpServerConfig, options: HttpTransportOptions = {}) {
    const cfg = resolveHttpConfig(config, options);
    const log = options.logger ?? silentLogger;
    super(log, cfg.timeoutMs ?? TRANSPORT_DEFAULTS.requestTimeoutMs, (events) => new HttpPipe(cfg, events, log));
  }

  /** The wire mode: `legacy-sse` for `type: "sse"` or after a fallback, else `streamable-http`. */
  get mode(): HttpTransportMode {
    return this.pipe.mode;
  }

  /** The `Mcp-Param-*` headers of 2026-era requests (see MCPTransport.paramHeaders); unset: none. */
  get paramHeaders(): ParamHeaders | undefined {
    return this.pipe.paramHeaders;
  }
  set paramHeaders(headers: ParamHeaders | undefined) {
    this.pipe.paramHeaders = headers;
  }

  /**
   * Streamable HTTP: marks the transport usable (the session starts with `initialize`). Legacy: opens the
   * GET stream and waits for the `endpoint` event (deadline: the config's timeout, else 30 s).
   * @throws TransportClosedError after close(); for legacy also HttpError, ProtocolError (no endpoint,
   *   cross-origin endpoint), RequestTimeoutError. A failed legacy connect may be retried.
   */
  override connect(): Promise<void> {
    return this.pipe.connect();
  }

  /**
   * Starts the background SSE listener (Streamable HTTP only; legacy mode already listens). Idempotent;
   * does nothing before `connect()` or after `close()`.
   * A 405 disables it quietly; drops reconnect with backoff until close().
   */
  startSSEListener(): void {
    this.pipe.startListener();
  }

  /** The listener's state (`idle` when never started), for status and tests. */
  get listenerState(): "idle" | "running" | "disabled" | "stopped" {
    return this.pipe.listenerState;
  }

  /**
   * Idempotent. Aborts every exchange and the listener (TransportClosedError), sends `DELETE` with the
   * session id (bounded by `deleteTimeoutMs`; 405 and failures ignored), closes the Agent and fires
   * `onClose({expected: true})` once, if the transport was connected.
   */
  override close(): Promise<void> {
    return this.pipe.close();
  }

  protected override checkTimeout(ms: unknown): void {
    checkHttpTimeoutMs(ms, "request timeout");
  }

  protected override timeoutError(ms: number, id: number): Error {
    return new RequestTimeoutError(ms, this.pipe.phaseOf(id));
  }
}
