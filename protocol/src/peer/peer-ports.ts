/**
 * What a {@link JsonRpcPeer} is handed and hands on: the pipe below it ({@link PeerSink}), its options and
 * each request's, the handlers of what the other side starts, and where such a message came from.
 */
import type { Logger } from "../logger.js";
import type { JsonObject, JsonRpcMessage, JsonRpcRequest, RequestId } from "../types.js";
import type { Cancellation } from "./cancellation.js";

/** Where a notification or a request from the other side came from. */
export interface MessageContext {
  /**
   * The id of our request whose reply stream carried this message (Streamable HTTP SSE replies), when
   * known. Lets the layer above send it to the caller of that request.
   */
  relatedRequestId?: RequestId;
  /**
   * The message came on a Streamable HTTP server's standalone stream (the GET stream): no reply stream
   * says which request caused it (by the spec none did; servers send a call's sampling there all the same).
   */
  standalone?: true;
}

/**
 * The wire below a {@link JsonRpcPeer}: a message pipe. It sends messages; the owner hands what arrives
 * to {@link JsonRpcPeer.receive}.
 */
export interface PeerSink {
  /**
   * Sends one message. Throws when it cannot be sent now (closed, over a buffer bound, not encodable):
   * a request then rejects with that error and stays unsent. May return a promise of the send's outcome:
   * when it rejects, a request still pending rejects with its error.
   */
  send(message: JsonRpcMessage): void | Promise<void>;
  /**
   * A request was given up locally (deadline, caller abort, cancel by id): stop whatever still works on
   * it. Returns false when the other side can never have seen it, so no `notifications/cancelled` is sent.
   */
  abandon?(id: number, reason: unknown): boolean;
}

/** Options of one {@link JsonRpcPeer.request}. Every duration is in ms. */
export interface PeerRequestOptions {
  /** Caller cancellation: an abort rejects with `abortError(signal)` and sends `notifications/cancelled`. */
  signal?: AbortSignal;
  /** Deadline; `0` or at or above 2^31-1 (`Infinity`) means none. Default: the peer's `defaultTimeoutMs`. */
  timeout?: number;
  /** Called synchronously with the request's id before it is sent. */
  onRequestId?: (id: RequestId) => void;
  /** Cancellation by id without an AbortSignal (see {@link Cancellation}). */
  cancellation?: Cancellation;
  /** Progress notifications for this request. Giving it sends `_meta.progressToken` = the request's id. */
  onProgress?: (params: JsonObject) => void;
  /** With `onProgress`: restart the deadline on each progress notification (default true), up to `maxTotalTimeout`. */
  resetTimeoutOnProgress?: boolean;
  /** With `onProgress`: ceiling of the request's life, in ms (default none). */
  maxTotalTimeout?: number;
}

/** Handles a notification from the other side. It must not throw (a throw is logged and dropped). */
export type PeerNotificationHandler = (method: string, params: JsonObject | undefined, context: MessageContext) => void;
/** Answers a request from the other side: resolve with the result, throw for an error answer. */
export type PeerRequestHandler = (request: JsonRpcRequest, context: MessageContext) => Promise<JsonObject>;

/** Options of a {@link JsonRpcPeer}. */
export interface JsonRpcPeerOptions {
  sink: PeerSink;
  /** Deadline of a request that names none, in ms (`0` or `Infinity`: none). */
  defaultTimeoutMs: number;
  /** Refuses a bad `timeout` by throwing. Default: a RangeError unless a number >= 0. */
  checkTimeout?: (timeoutMs: unknown, method: string) => void;
  /** The error a request rejects with at its deadline. Default: `RequestTimeoutError` (`Request timeout after <ms>ms`). */
  timeoutError?: (timeoutMs: number, id: number) => unknown;
  /** The error a request rejects with when its signal aborts. Default: `signal.reason`, unchanged. */
  abortError?: (signal: AbortSignal) => unknown;
  /** A response whose id is not pending (late answers to requests given up). Default: logged at debug. */
  onUnknownResponse?: (id: RequestId | null) => void;
  /** An answer to a request from the other side could not be sent. Default: logged at warn. */
  onAnswerError?: (error: unknown, request: JsonRpcRequest) => void;
  log?: Logger;
}
