import type net from "node:net";
import {
  ConnectionLostError,
  JsonLineDecoder,
  MAX_TIMER_MS,
  RequestTimeoutError,
  encodeLine,
  fromWireError,
  isObject,
  type JsonObject,
  type JsonRpcErrorObject,
} from "@mcpd/protocol/core";
import { abortedError, type ProgressInfo, progressInfo } from "./request-helpers.js";

/** Progress of the exchange's request: reported, and restarting its deadline as a session's request does. */
export interface ExchangeProgress {
  onProgress: (progress: ProgressInfo) => void;
  /** Restart the deadline on each progress notification. */
  reset: boolean;
  /** Ceiling of the request's life when progress keeps restarting its deadline, in ms. */
  maxTotalMs: number;
}

/** One exchange on a fresh connection: what to send, which answer settles it, and its bounds. */
export interface ExchangeSpec {
  /** Every line to send, written at once: the handshake messages, then the request. */
  lines: string;
  /** Ids of the handshake's requests: an error answering one of them is the exchange's error. */
  handshakeIds: readonly number[];
  /** Id of the request whose answer settles the exchange (also its progress token). */
  requestId: number;
  /** The request's deadline, in ms: named in the timeout error, and the length progress restarts it with. */
  timeoutMs: number;
  /** What is left of it once connected, in ms: the first deadline of the answer. */
  leftMs: number;
  maxLineBytes: number;
  signal?: AbortSignal | undefined;
  progress?: ExchangeProgress | undefined;
  /** Send `notifications/cancelled` for the request when the deadline passes or `signal` aborts. */
  cancelOnGiveUp: boolean;
}

/**
 * Runs one exchange on `socket` (connected, trusted, nothing sent yet): writes `spec.lines` in one write
 * and settles with the request's result, then ends the connection (what was written is flushed first; the
 * caller does not wait for the close). The request's own deadline, progress and abort work as a session's
 * (`SocketConnection`) do, without its peer: one request needs no table of them, and a process that asks
 * once starts without that code.
 * @throws (rejects) a handshake request's error, the request's error (`fromWireError`),
 * `MCPD_REQUEST_TIMEOUT`, `MCPD_ABORTED`, or `MCPD_CONNECTION_LOST` (the daemon closed first: with its
 * reason, such as `MCPD_TOO_MANY_CONNECTIONS`, as the `cause`; or an unreadable line).
 */
export function runExchange(socket: net.Socket, spec: ExchangeSpec): Promise<JsonObject> {
  return new Promise((resolve, reject) => {
    if (spec.signal?.aborted) {
      // Aborted while connecting: nothing was sent, so there is nothing to cancel.
      socket.destroy();
      return reject(abortedError(spec.signal));
    }
    /** The daemon's reason for closing the connection, sent as an error line with a null id. */
    let closeReason: JsonRpcErrorObject | undefined;
    let socketError: Error | undefined;
    let settled = false;
    const startedAt = Date.now();
    const signal = spec.signal;
    const progress = spec.progress;

    const finish = (error: Error | undefined, result?: JsonObject): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      if (!socket.destroyed) socket.end(() => socket.destroy());
      if (error) reject(error);
      else resolve(result as JsonObject);
    };
    /** Gives the request up: the daemon is told (it cancels the call upstream), then the caller. */
    const giveUp = (error: Error): void => {
      if (settled) return;
      if (spec.cancelOnGiveUp && !socket.destroyed) {
        const params = { requestId: spec.requestId, reason: error.message };
        socket.write(encodeLine({ jsonrpc: "2.0", method: "notifications/cancelled", params }));
      }
      finish(error);
    };
    const expire = (): void => giveUp(new RequestTimeoutError(spec.timeoutMs));
    // A deadline past what a timer keeps is none (a timer would fire it at once).
    const deadline = (ms: number): ReturnType<typeof setTimeout> | undefined =>
      spec.timeoutMs < MAX_TIMER_MS ? setTimeout(expire, ms) : undefined;
    let timer = deadline(spec.leftMs);
    const onAbort = (): void => giveUp(abortedError(signal as AbortSignal));
    signal?.addEventListener("abort", onAbort, { once: true });

    const onProgress = (params: JsonObject): void => {
      if (!progress || settled) return;
      if (progress.reset) {
        if (Date.now() - startedAt >= progress.maxTotalMs) return giveUp(new RequestTimeoutError(progress.maxTotalMs));
        clearTimeout(timer);
        timer = deadline(spec.timeoutMs);
      }
      progress.onProgress(progressInfo(params));
    };
    const onMessage = (value: unknown): void => {
      if (!isObject(value)) return;
      const { id, method } = value;
      if (typeof method === "string") {
        const params = isObject(value.params) ? value.params : undefined;
        if (id !== undefined) {
          // A request from the daemon: nothing was declared that would bring one; say so rather than hang it.
          socket.write(encodeLine({ jsonrpc: "2.0", id, error: { code: -32601, message: `Method not found: ${method.slice(0, 100)}` } }));
        } else if (method === "notifications/progress" && params?.progressToken === spec.requestId) onProgress(params);
        return;
      }
      const error = wireError(value.error);
      if (id === spec.requestId) finish(error ? fromWireError(error) : undefined, isObject(value.result) ? value.result : {});
      else if (id === null && error) closeReason = error;
      else if (error && spec.handshakeIds.includes(id as number)) finish(fromWireError(error));
    };

    const decoder = new JsonLineDecoder({
      maxLineBytes: spec.maxLineBytes,
      onValue: onMessage,
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
    socket.write(spec.lines);
  });
}

/** A response's `error` member when it is a JSON-RPC error object, else a stand-in naming what came. */
function wireError(error: unknown): JsonRpcErrorObject | undefined {
  if (error === undefined) return undefined;
  if (isObject(error) && typeof error.code === "number" && typeof error.message === "string") return error as unknown as JsonRpcErrorObject;
  return { code: -32603, message: `Malformed error from mcpd: ${String(JSON.stringify(error)).slice(0, 200)}` };
}
