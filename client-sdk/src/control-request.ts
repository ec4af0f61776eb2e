import type net from "node:net";
import {
  ConnectionLostError,
  JsonLineDecoder,
  McpdSelect,
  RequestTimeoutError,
  encodeLine,
  fromWireError,
  isControlMethod,
  isObject,
  type ControlMethod,
  type JsonObject,
  type JsonRpcErrorObject,
} from "@mcpd/protocol/core";
import { openDaemonSocket } from "./daemon-socket.js";
import { CLIENT_DEFAULTS } from "./defaults.js";
import { resolvePaths } from "./paths.js";

/** Options of {@link requestControl}. */
export interface ControlRequestOptions {
  /** The daemon's socket. Default: `resolvePaths(env).socketPath`. */
  socketPath?: string;
  /** Environment the socket path is resolved from. Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  /**
   * Deadline of the whole exchange (connecting, the answer), in ms. Default
   * {@link CLIENT_DEFAULTS.requestTimeoutMs}. Past it the call rejects with `MCPD_REQUEST_TIMEOUT`.
   */
  timeout?: number;
  /** Largest line accepted from the daemon, in bytes. Default {@link CLIENT_DEFAULTS.maxLineBytes}. */
  maxLineBytes?: number;
  /**
   * A control connection (`mcpd/select {"control": true}`), needed for the privileged methods (`mcpd/reload`,
   * `mcpd/restart`, the full `mcpd/status`, ...). Default `false`, as `McpdClientOptions.control`: give it
   * to operator tools only.
   */
  control?: boolean;
}

/** Ids of the two requests of the exchange. */
const SELECT_ID = 1;
const REQUEST_ID = 2;

/**
 * One control request (`mcpd/...`) on a connection of its own, for a caller that asks the daemon one thing
 * (a CLI command, a status bar polling `mcpd/status`): it connects, sends `mcpd/select` (with `control`
 * when asked for) and the request in one write, and resolves with the answer, closing the connection. One
 * round trip, and none of a session's machinery: no `initialize` (control methods need none), no events,
 * no reconnection. For several requests, an MCP request or server notifications, use `connect()`.
 *
 * The socket is checked as `connect()` checks it (`MCPD_UNTRUSTED_SOCKET` before anything is sent).
 * @throws (rejects) `TypeError` when `method` is not `mcpd/...`; `MCPD_DAEMON_UNAVAILABLE` (no daemon: the
 * message says to run `mcpd start`); `MCPD_UNTRUSTED_SOCKET`; `MCPD_REQUEST_TIMEOUT` past `timeout`;
 * `MCPD_CONNECTION_LOST` when the daemon closed the connection before answering (with its reason, such
 * as `MCPD_TOO_MANY_CONNECTIONS`, as the `cause`); or the daemon's answer as an error (`fromWireError`).
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
    throw new TypeError(`requestControl(): "${String(name)}" is not an mcpd/* method`);
  }
  const timeoutMs = options.timeout ?? CLIENT_DEFAULTS.requestTimeoutMs;
  if (!(timeoutMs > 0)) throw new TypeError(`timeout must be a positive number of ms, got ${String(timeoutMs)}`);
  const socketPath = options.socketPath ?? resolvePaths(options.env ?? process.env).socketPath;
  const deadline = Date.now() + timeoutMs;
  const socket = await openDaemonSocket(socketPath, timeoutMs);
  const request: JsonObject = { jsonrpc: "2.0", id: REQUEST_ID, method: name };
  if (params !== undefined) request.params = params as JsonObject;
  const select = encodeLine({
    jsonrpc: "2.0",
    id: SELECT_ID,
    method: McpdSelect.method,
    params: options.control === true ? { control: true } : {},
  });
  return exchange(socket, select + encodeLine(request), Math.max(1, deadline - Date.now()), timeoutMs, options);
}

/** Sends `lines` (the select and the request) on `socket`, and settles with the request's answer. */
function exchange(socket: net.Socket, lines: string, leftMs: number, timeoutMs: number, options: ControlRequestOptions): Promise<unknown> {
  return new Promise((resolve, reject) => {
    /** The daemon's reason for closing the connection, sent as an error line with a null id. */
    let closeReason: JsonRpcErrorObject | undefined;
    let socketError: Error | undefined;
    let settled = false;
    const finish = (error: Error | undefined, result?: unknown): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // What was written is flushed first; the caller does not wait for the close.
      if (!socket.destroyed) socket.end(() => socket.destroy());
      if (error) reject(error);
      else resolve(result);
    };
    const timer = setTimeout(() => {
      finish(new RequestTimeoutError(timeoutMs));
      socket.destroy();
    }, leftMs);
    const decoder = new JsonLineDecoder({
      maxLineBytes: options.maxLineBytes ?? CLIENT_DEFAULTS.maxLineBytes,
      onValue: (value) => {
        if (typeof value !== "object" || value === null) return;
        const msg = value as { id?: unknown; method?: unknown; result?: unknown; error?: unknown };
        if (msg.method !== undefined) return; // no events were asked for; nothing else is expected
        const error = wireError(msg.error);
        if (msg.id === null && error) closeReason = error;
        // A failed select leaves the connection with no view, so its error says more than the request's.
        else if (msg.id === SELECT_ID && error) finish(fromWireError(error));
        else if (msg.id === REQUEST_ID) finish(error ? fromWireError(error) : undefined, isObject(msg.result) ? msg.result : {});
      },
      onError: (err) => finish(new ConnectionLostError(`mcpd sent a line that cannot be read: ${err.message}`, { cause: err })),
    });
    socket.on("data", (chunk: Buffer) => decoder.push(chunk));
    socket.on("end", () => decoder.end());
    socket.on("error", (err) => {
      socketError = err;
    });
    socket.once("close", () => {
      if (closeReason) {
        finish(new ConnectionLostError(`Connection to mcpd lost: ${closeReason.message}`, { cause: fromWireError(closeReason) }));
      } else {
        const why = socketError ? `: ${socketError.message}` : "";
        finish(new ConnectionLostError(`Connection to mcpd lost before it answered${why}`, socketError ? { cause: socketError } : {}));
      }
    });
    socket.write(lines);
  });
}

/** A response's `error` member when it is a JSON-RPC error object, else a stand-in naming what came. */
function wireError(error: unknown): JsonRpcErrorObject | undefined {
  if (error === undefined) return undefined;
  const e = error as JsonRpcErrorObject;
  if (isObject(error) && typeof e.code === "number" && typeof e.message === "string") return e;
  return { code: -32603, message: `Malformed error from mcpd: ${JSON.stringify(error)?.slice(0, 200)}` };
}
