import { silentLogger } from "@mcpd/protocol";
import { TRANSPORT_DEFAULTS } from "../defaults.js";
import { PipeTransport } from "../pipe-transport.js";
import type { TransportOptions, WsServerConfig } from "../transport.js";
import { checkWsTimeoutMs, resolveWsConfig } from "./ws-config.js";
import { WsPipe } from "./ws-pipe.js";

export { MCP_WS_SUBPROTOCOL } from "./ws-pipe.js";

/** Options of {@link WebSocketTransport} besides its config. */
export interface WsTransportOptions extends TransportOptions {
  /**
   * Largest frame accepted from the server, in bytes (ws `maxPayload`). Default
   * `TRANSPORT_DEFAULTS.maxMessageBytes` (4 MiB). A bigger frame is fatal: ws closes the connection with
   * code 1009, every pending request rejects with `TransportClosedError` naming the limit, and `onClose`
   * fires with `expected: false`. (WebSocket has no way to skip one frame and keep the stream.)
   */
  maxPayloadBytes?: number;
}

/**
 * MCP over one WebSocket (package `ws`): subprotocol `mcp`, one JSON-RPC message per text frame
 * (binary frames holding UTF-8 JSON are accepted too, and JSON-RPC batches are unpacked), integer
 * request ids local to this transport.
 *
 * - `connect()` opens the socket, sending `config.headers` on the upgrade request. It rejects with
 *   `HttpError` (`MCPD_HTTP_ERROR`, `.status`, `.wwwAuthenticate`) when the server answers the upgrade
 *   with an HTTP status (401, 404, ...), and with `TransportClosedError` (`MCPD_TRANSPORT_CLOSED`) when
 *   the connection is refused, the handshake times out (the request deadline below) or the server does
 *   not select subprotocol `mcp`; both messages name the URL (userinfo and query redacted). A transport
 *   whose connect failed is closed for good (`onClose` does not fire): create a new one.
 * - `request()` deadline: `options.timeout`, else `config.timeout`, else
 *   `TRANSPORT_DEFAULTS.requestTimeoutMs`; `0` or `Infinity` means none. Expiry rejects with
 *   `RequestTimeoutError` (`Request timeout after <ms>ms`); a caller abort rejects with `signal.reason`
 *   unchanged. Both, and `cancel(id)`, send `notifications/cancelled {requestId, reason}` upstream, never
 *   for `initialize`.
 *   A JSON-RPC error answer rejects with `McpRemoteError`. More than
 *   `TRANSPORT_DEFAULTS.maxPendingWriteBytes` waiting in the socket rejects with `QueueFullError`.
 * - Frames that are not JSON or not JSON-RPC, and responses with unknown ids, are skipped, counted in
 *   `info().droppedMessages`; malformed frames are also reported to `onError` (unknown ids, e.g. late
 *   answers to timed-out requests, only logged at debug). None of them ends the connection.
 * - Server notifications go to `onNotification(method, params, {})`; server requests to
 *   `onRequest(request, {})`, whose result or error is sent back (`-32601` when no handler is set).
 * - `close()` is idempotent: it rejects pending requests with `TransportClosedError("closed by
 *   client")`, closes the socket (code 1000; terminated after `TRANSPORT_DEFAULTS.closeGraceMs`) and
 *   then fires `onClose({expected: true})`. A socket closed or broken by the other side rejects pending
 *   requests at once with `TransportClosedError` whose reason holds the close code and reason (or the
 *   socket error), and fires `onClose({expected: false})`. `onClose` fires exactly once, and only after a
 *   successful `connect()`. The transport never reconnects.
 *
 * The requests' bookkeeping is the {@link JsonRpcPeer}'s; the socket is {@link WsPipe}'s.
 */
export class WebSocketTransport extends PipeTransport<WsPipe> {
  /** @throws ConfigError (`MCPD_CONFIG_INVALID`) naming the bad field. */
  constructor(config: WsServerConfig, options: WsTransportOptions = {}) {
    const resolved = resolveWsConfig(config, options.maxPayloadBytes);
    const log = options.logger ?? silentLogger;
    super(log, resolved.timeoutMs ?? TRANSPORT_DEFAULTS.requestTimeoutMs, (events) => new WsPipe(resolved, events, log));
  }

  protected override checkTimeout(ms: unknown): void {
    checkWsTimeoutMs(ms, "request timeout");
  }
}
