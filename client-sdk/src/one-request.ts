import {
  LATEST_PROTOCOL_VERSION,
  McpdSelect,
  checkTimeoutMs,
  encodeLine,
  isControlMethod,
  type ControlMethod,
  type Implementation,
  type JsonObject,
} from "@mcpd/protocol/core";
import { NO_AUTOSTART_HINT, openDaemonSocket } from "./daemon-socket.js";
import { CLIENT_DEFAULTS } from "./defaults.js";
import { type ExchangeSpec, runExchange } from "./one-request-exchange.js";
import { resolvePaths } from "./paths.js";
import { abortedError, type ProgressInfo } from "./request-helpers.js";
import { routeToServer } from "./server-routing.js";

/** Options of {@link requestControl}. Durations in ms. */
export interface ControlRequestOptions {
  /** The daemon's socket. Default: found from `env` as `connect()` finds it (see `resolvePaths`). */
  socketPath?: string;
  /** Environment the socket path is resolved from. Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  /**
   * A control connection (`mcpd/select {"control": true}`), needed for the privileged methods (`mcpd/reload`,
   * `mcpd/restart`, the full `mcpd/status`, ...). Default `false`, as `McpdClientOptions.control`: give it
   * to operator tools only.
   */
  control?: boolean;
  /**
   * Deadline of connecting and of the daemon's first answer (to `mcpd/select`), in ms, as `connect()`'s
   * handshake. Default {@link CLIENT_DEFAULTS.connectTimeoutMs}; `Infinity`: none.
   */
  connectTimeout?: number;
  /**
   * Deadline of the request, in ms, counted from when it is sent. Default {@link CLIENT_DEFAULTS.requestTimeoutMs};
   * `Infinity`: none. Past it the call rejects with `MCPD_REQUEST_TIMEOUT`.
   */
  timeout?: number;
  /** Aborting it rejects the call with `MCPD_ABORTED` (the reason as `cause`). */
  signal?: AbortSignal;
  /** Largest line accepted from the daemon, in bytes. Default {@link CLIENT_DEFAULTS.maxLineBytes}. */
  maxLineBytes?: number;
}

/** Options of {@link requestOnce}: those of {@link requestControl}, and the request's own. Durations in ms. */
export interface RequestOnceOptions extends ControlRequestOptions {
  /** The server the request is routed to (`_meta["mcpd/server"]`); default: the aggregate view routes it by name. */
  server?: string;
  /** Sent in `initialize`. Default {@link CLIENT_DEFAULTS.clientInfo}. */
  clientInfo?: Implementation;
  /** Called for each progress notification of the request. Giving it sends a `progressToken`. */
  onProgress?: (progress: ProgressInfo) => void;
  /** Restart the deadline (`timeout`) on each progress notification (default true), up to `maxTotalTimeout`. */
  resetTimeoutOnProgress?: boolean;
  /** Ceiling of the call's life when progress keeps restarting the deadline, in ms (default {@link CLIENT_DEFAULTS.maxTotalTimeoutMs}). */
  maxTotalTimeout?: number;
}

/** Ids of the exchange's requests. */
const SELECT_ID = 1;
const INITIALIZE_ID = 2;
const REQUEST_ID = 3;

/**
 * One control request (`mcpd/...`) on a connection of its own, for a caller that asks the daemon one thing
 * (a command, a status bar polling `mcpd/status`): it connects, sends `mcpd/select` (with `control` when
 * asked for) and the request in one write, and resolves with the answer, closing the connection. One
 * round trip, and none of a session's machinery: no `initialize` (control methods need none), no events,
 * no reconnection, no daemon started. For several requests or server notifications, use `connect()`.
 *
 * The socket is checked as `connect()` checks it (`MCPD_UNTRUSTED_SOCKET` before anything is sent).
 * @throws (rejects) `TypeError` for a method that is not `mcpd/...` or a bad option; what `connect()` throws
 * for a daemon that is not there or hangs up during the handshake (`MCPD_DAEMON_UNAVAILABLE`, with the
 * `mcpd start` hint; its reason for closing, such as `MCPD_TOO_MANY_CONNECTIONS`), `MCPD_DAEMON_UNAVAILABLE`
 * too when it does not answer the select within `connectTimeout`, `MCPD_UNTRUSTED_SOCKET`; then `MCPD_REQUEST_TIMEOUT`
 * past `timeout`, `MCPD_ABORTED`, `MCPD_CONNECTION_LOST` when the daemon closed before answering (its reason,
 * if it gave one, as the `cause`), or the daemon's answer as an error (`fromWireError`).
 */
export function requestControl<P, R>(method: ControlMethod<string, P, R>, params?: P, options?: ControlRequestOptions): Promise<R>;
export function requestControl<T extends object = JsonObject>(
  method: string,
  params?: JsonObject,
  options?: ControlRequestOptions,
): Promise<T>;
export async function requestControl(
  method: ControlMethod | string,
  params?: unknown,
  options: ControlRequestOptions = {},
): Promise<unknown> {
  const name = typeof method === "object" && method !== null ? method.method : method;
  if (typeof name !== "string" || !isControlMethod(name)) {
    throw new TypeError(`requestControl(): "${String(name)}" is not an mcpd/* method; use requestOnce() for MCP methods`);
  }
  // Nothing but the answer can come on this connection (it is not initialized and asked for no events):
  // a line that cannot be read is the answer's, and fails the call at once.
  return exchange(options, [request(REQUEST_ID, name, params as JsonObject | undefined)], { skipUnreadable: false });
}

/**
 * One MCP request on a connection of its own: it connects, sends the handshake (`mcpd/select`,
 * `initialize`, `notifications/initialized`) and the request together, in one write (the daemon handles
 * a connection's messages in order), and resolves with the result, closing the connection. One round trip
 * instead of a session's two, and none of a session's code; `timeout`, `signal` (both send
 * `notifications/cancelled`) and `onProgress` work as for a session's request. No capabilities are
 * declared, so the daemon relays it none of the server-to-client requests that need one (sampling,
 * elicitation); any other it relays is answered -32601. For a command that makes one call (`mcpd call`);
 * for several, use `connect()`.
 * @throws (rejects) what {@link requestControl} does (but for the method check), and `TypeError` when
 * `server` is not a non-empty string.
 */
export async function requestOnce(method: string, params?: JsonObject, options: RequestOnceOptions = {}): Promise<JsonObject> {
  if (typeof method !== "string" || method === "") throw new TypeError("requestOnce(): method must be a non-empty string");
  let routed = routeToServer(options.server, undefined, params);
  const onProgress = options.onProgress;
  if (onProgress !== undefined) routed = { ...routed, _meta: { ...(routed?._meta as JsonObject | undefined), progressToken: REQUEST_ID } };
  const clientInfo = options.clientInfo ?? CLIENT_DEFAULTS.clientInfo;
  const lines = [
    request(INITIALIZE_ID, "initialize", { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { ...clientInfo } }),
    encodeLine({ jsonrpc: "2.0", method: "notifications/initialized" }),
    request(REQUEST_ID, method, routed),
  ];
  return exchange(options, lines, {
    initializeId: INITIALIZE_ID,
    // Initialized, so servers' notifications come too: one that cannot be read is skipped, as a session skips it.
    skipUnreadable: true,
    cancelOnGiveUp: true,
    progress:
      onProgress === undefined
        ? undefined
        : {
            onProgress,
            reset: options.resetTimeoutOnProgress ?? true,
            maxTotalMs: options.maxTotalTimeout ?? CLIENT_DEFAULTS.maxTotalTimeoutMs,
          },
  });
}

/** Checks the options, connects, then runs the exchange: the select, `lines`, and the answer to {@link REQUEST_ID}. */
async function exchange(
  options: ControlRequestOptions,
  lines: string[],
  how: Pick<Partial<ExchangeSpec>, "initializeId" | "cancelOnGiveUp" | "progress"> & { skipUnreadable: boolean },
): Promise<JsonObject> {
  const timeoutMs = checkTimeoutMs(options.timeout ?? CLIENT_DEFAULTS.requestTimeoutMs, "timeout", "positive", TypeError);
  const connectTimeoutMs = checkTimeoutMs(
    options.connectTimeout ?? CLIENT_DEFAULTS.connectTimeoutMs,
    "connectTimeout",
    "positive",
    TypeError,
  );
  const maxLineBytes = options.maxLineBytes ?? CLIENT_DEFAULTS.maxLineBytes;
  if (!Number.isSafeInteger(maxLineBytes) || maxLineBytes <= 0) {
    throw new TypeError(`maxLineBytes must be a positive integer, got ${String(maxLineBytes)}`);
  }
  if (options.control !== undefined && typeof options.control !== "boolean") {
    throw new TypeError(`control must be a boolean, got ${JSON.stringify(options.control)}`);
  }
  const signal = options.signal;
  if (signal?.aborted) throw abortedError(signal);
  const socketPath = options.socketPath ?? resolvePaths(options.env ?? process.env).socketPath;
  const started = Date.now();
  const socket = await openDaemonSocket(socketPath, connectTimeoutMs, NO_AUTOSTART_HINT);
  const select = request(SELECT_ID, McpdSelect.method, options.control === true ? { control: true } : {});
  return runExchange(socket, {
    socketPath,
    lines: select + lines.join(""),
    selectId: SELECT_ID,
    initializeId: how.initializeId,
    requestId: REQUEST_ID,
    connectTimeoutMs,
    handshakeLeftMs: Math.max(1, connectTimeoutMs - (Date.now() - started)),
    timeoutMs,
    maxLineBytes,
    skipUnreadable: how.skipUnreadable,
    signal,
    progress: how.progress,
    cancelOnGiveUp: how.cancelOnGiveUp === true,
  });
}

/** A request as one line. */
function request(id: number, method: string, params: JsonObject | undefined): string {
  return encodeLine(params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params });
}
