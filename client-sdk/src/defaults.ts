import { PROTOCOL_DEFAULTS } from "@mcpd/protocol/core";

/**
 * Defaults of the client SDK, in one place. Units are in the names. Every option that takes one of these
 * values documents which key it defaults to.
 */
export const CLIENT_DEFAULTS = {
  /** Sent in `initialize` when the caller gives no `clientInfo`. */
  clientInfo: { name: "@mcpd/client", version: "0.1.0" },
  /**
   * Deadline of one request, in ms, counted from the call (time spent waiting for a reconnection included).
   * Longer than the daemon's own per-server default (30000) so that the daemon's timeout, which cancels
   * upstream and names the server, normally fires first.
   */
  requestTimeoutMs: 60_000,
  /**
   * Ceiling of a request's life when progress notifications keep restarting its deadline, in ms.
   * Above the daemon's `maxTotalTimeout` default (300000) for the same reason as above.
   */
  maxTotalTimeoutMs: 600_000,
  /** Deadline of connecting the socket plus `mcpd/select`, `initialize` and re-subscribing, in ms. */
  connectTimeoutMs: 10_000,
  /** How long `autostart` waits for the start command to exit and the socket to answer, in ms. */
  autostartTimeoutMs: 20_000,
  /** First delay before reconnecting after the connection to the daemon dropped, in ms. Doubles each attempt. */
  reconnectInitialDelayMs: 100,
  /** Largest delay between reconnection attempts, in ms. */
  reconnectMaxDelayMs: 5_000,
  /** Reconnection attempts before the client gives up and closes. `Infinity`: until `close()`. */
  reconnectMaxAttempts: Number.POSITIVE_INFINITY,
  /** Largest JSON line accepted from the daemon, in bytes (the daemon's own `maxMessageBytes`, 4 MiB). */
  maxLineBytes: PROTOCOL_DEFAULTS.maxLineBytes,
  /**
   * Bytes the socket may hold unsent before new requests are refused with `MCPD_QUEUE_FULL`, in bytes
   * (16 MiB). Only a daemon that stopped reading lets it grow that far.
   */
  maxWriteBufferBytes: 16 * 1024 * 1024,
  /** Requests of one connection waiting for their response before new ones are refused (`MCPD_QUEUE_FULL`). */
  maxPendingRequests: 10_000,
  /** Calls that may wait for a reconnection at a time before new ones are refused (`MCPD_QUEUE_FULL`). */
  maxWaitingCalls: 10_000,
  /** Server-to-client requests handled at a time; more are answered with -32063 at once. */
  maxIncomingRequests: 64,
  /**
   * How long ending a connection waits for what was written to leave before dropping it, in ms. A daemon
   * that stopped reading (stopped, stuck) never takes the rest, and a socket waiting to end keeps the
   * process alive.
   */
  closeGraceMs: 1_000,
  /** Bytes of the autostart command's stderr kept for the error message, in bytes. */
  autostartStderrBytes: 4_096,
} as const;
