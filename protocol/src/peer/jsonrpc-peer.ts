import { McpRemoteError, RequestTimeoutError } from "../errors.js";
import { classify } from "../guards.js";
import { silentLogger, type Logger } from "../logger.js";
import type { JsonObject, JsonRpcErrorResponse, JsonRpcMessage, JsonRpcRequest, JsonRpcSuccess, RequestId } from "../types.js";
import type { Cancellation } from "./cancellation.js";
import { checkTimeoutMs } from "../timers.js";
import { PeerAnswers, errorText } from "./peer-answers.js";
import type {
  JsonRpcPeerOptions,
  MessageContext,
  PeerNotificationHandler,
  PeerRequestHandler,
  PeerRequestOptions,
  PeerSink,
} from "./peer-ports.js";
import { PendingRequest, PendingRequests, type RequestReply } from "./pending-requests.js";

const NO_CONTEXT: MessageContext = Object.freeze({});

/**
 * One end of a JSON-RPC 2.0 connection, over any message pipe: the request bookkeeping every mcpd
 * connection shares (stdio, HTTP and WebSocket upstreams, the client SDK's socket).
 *
 * - Requests get integer ids from 1, a pending entry, a deadline (one shared timer callback, no closure
 *   per request), the caller's signal watched with one listener per distinct signal, and optional
 *   progress routing that restarts the deadline. A request is given up by its deadline, its signal, its
 *   {@link Cancellation} or {@link cancel} by id: it rejects, the pipe is told ({@link PeerSink.abandon})
 *   and the other side gets `notifications/cancelled {requestId, reason}` (never for `initialize`).
 * - {@link receive} routes what arrives: responses to their requests (a JSON-RPC error rejects with
 *   `McpRemoteError`), progress to its request, other notifications to {@link onNotification}, requests
 *   to {@link onRequest}, whose result or error is sent back (`-32601` when no handler is set).
 * - {@link close} rejects every pending request; the peer sends no cancellations or answers after it.
 *
 * Its ports and options are declared in `peer-ports.ts`; the other side's requests are answered by
 * {@link PeerAnswers}.
 */
export class JsonRpcPeer {
  /** Notifications from the other side (progress of our own requests excepted). */
  onNotification: PeerNotificationHandler | undefined;
  /** Requests from the other side. Without one they are answered `-32601`. */
  onRequest: PeerRequestHandler | undefined;

  private readonly sink: PeerSink;
  private readonly log: Logger;
  private readonly opts: JsonRpcPeerOptions;
  private readonly pending: PendingRequests;
  private readonly answers: PeerAnswers;
  private nextId = 1;
  private closedValue = false;

  constructor(options: JsonRpcPeerOptions) {
    this.opts = options;
    this.sink = options.sink;
    this.log = options.log ?? silentLogger;
    this.pending = new PendingRequests(
      (p) => this.giveUp(p, this.opts.timeoutError ? this.opts.timeoutError(p.timeoutMs, p.id) : new RequestTimeoutError(p.timeoutMs)),
      (p, signal) => this.giveUp(p, this.opts.abortError ? this.opts.abortError(signal) : signal.reason),
    );
    this.answers = new PeerAnswers(this.sink, this.log, options.onAnswerError);
  }

  /** Requests waiting for their response. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Distinct caller signals currently listened to (one listener each). */
  get signalsWatched(): number {
    return this.pending.signalsWatched;
  }

  /** True after {@link close}. */
  get closed(): boolean {
    return this.closedValue;
  }

  /**
   * Sends a request and resolves with its result (as received).
   * Rejects with: the abort error (signal already aborted or aborting later; nothing is sent when it is
   * aborted first), the cancellation's reason, the `checkTimeout` error, whatever the sink threw, the
   * timeout error, `McpRemoteError` for an error answer, or the error given to {@link close}.
   */
  request<T = JsonObject>(method: string, params?: JsonObject, options?: PeerRequestOptions): Promise<T> {
    return new Promise<T>((resolve, reject) => this.call(method, params, options, { resolve, reject } as RequestReply));
  }

  /**
   * {@link request} without a promise: `reply` learns the outcome once, as the promise would; a refusal
   * before `call` returns. The relay's path: no promise, closure or microtask per call in this layer.
   */
  call(method: string, params: JsonObject | undefined, options: PeerRequestOptions | undefined, reply: RequestReply): void {
    const signal = options?.signal;
    if (signal?.aborted) return reply.reject(this.opts.abortError ? this.opts.abortError(signal) : signal.reason);
    const cancellation = options?.cancellation;
    if (cancellation?.cancelled) return reply.reject(cancellation.reason);
    const timeoutMs = options?.timeout ?? this.opts.defaultTimeoutMs;
    try {
      if (this.opts.checkTimeout) this.opts.checkTimeout(timeoutMs, method);
      else checkTimeout(timeoutMs, method);
    } catch (err) {
      return reply.reject(err);
    }
    const id = this.nextId++;
    options?.onRequestId?.(id);
    const onProgress = options?.onProgress;
    // With progress, a copy: the caller's params must not learn our token (they may be reused for another call).
    const wireParams =
      onProgress === undefined ? params : { ...params, _meta: { ...(params?._meta as JsonObject | undefined), progressToken: id } };
    const message: JsonRpcRequest =
      wireParams === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params: wireParams };
    const p = new PendingRequest(id, method, timeoutMs, reply);
    if (onProgress !== undefined) {
      p.progress = {
        onProgress,
        reset: options?.resetTimeoutOnProgress ?? true,
        maxTotalMs: options?.maxTotalTimeout ?? Number.POSITIVE_INFINITY,
      };
    }
    // Pending before it is sent: a pipe may deliver the answer before send() returns.
    this.pending.add(p, signal, cancellation, this);
    let sent: void | Promise<void>;
    try {
      sent = this.sink.send(message);
    } catch (err) {
      this.failPending(p, err);
      return;
    }
    if (sent !== undefined) sent.then(undefined, (err: unknown) => this.failPending(p, err));
  }

  /** Sends a notification; returns what the sink returned. @throws whatever the sink throws. */
  notify(method: string, params?: JsonObject): void | Promise<void> {
    return this.sink.send(params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params });
  }

  /**
   * Gives up pending request `id` as an abort would: it rejects with `reason`, the sink is told, and the
   * other side gets `notifications/cancelled`. False when no such request is pending.
   */
  cancel(id: RequestId, reason: unknown): boolean {
    const p = this.pending.get(id);
    if (p === undefined) return false;
    this.giveUp(p, reason);
    return true;
  }

  /**
   * Routes one message from the other side (see the class comment). Returns false, doing nothing, when
   * the value is not a JSON-RPC 2.0 message: the pipe reports that in its own words.
   */
  receive(value: unknown, context: MessageContext = NO_CONTEXT): boolean {
    switch (classify(value)) {
      case "success": {
        const msg = value as JsonRpcSuccess;
        if (!this.resolve(msg.id, msg.result)) this.unknownResponse(msg.id);
        return true;
      }
      case "error": {
        const msg = value as JsonRpcErrorResponse;
        const p = this.pending.get(msg.id);
        if (p === undefined || !this.pending.remove(p)) this.unknownResponse(msg.id);
        else this.settle(p, false, new McpRemoteError(msg.error));
        return true;
      }
      case "notification": {
        const msg = value as { method: string; params?: JsonObject };
        if (msg.method === "notifications/progress" && this.progress(msg.params)) return true;
        const handler = this.onNotification;
        if (handler === undefined) return true;
        try {
          handler(msg.method, msg.params, context);
        } catch (err) {
          this.log.warn({ err: errorText(err), method: msg.method }, "onNotification threw");
        }
        return true;
      }
      case "request":
        this.answers.serve(value as JsonRpcRequest, context, this.onRequest);
        return true;
      default:
        return false;
    }
  }

  /** Settles pending request `id` with `result`. False when it is not pending. */
  resolve(id: unknown, result: unknown): boolean {
    const p = this.pending.get(id);
    if (p === undefined || !this.pending.remove(p)) return false;
    this.settle(p, true, result);
    return true;
  }

  /** Rejects pending request `id` with `error`, sending nothing to the other side. False when it is not pending. */
  fail(id: unknown, error: unknown): boolean {
    const p = this.pending.get(id);
    if (p === undefined) return false;
    return this.failPending(p, error);
  }

  /** The method of pending request `id`, or undefined when it is not pending. */
  methodOf(id: unknown): string | undefined {
    return this.pending.get(id)?.method;
  }

  /**
   * Routes the params of a `notifications/progress` to the request whose id is its token, when that
   * request asked for progress: restarts its deadline (or gives it up with `RequestTimeoutError` of the
   * maximum total once that has passed) and calls its `onProgress`. False when the token is not ours.
   */
  progress(params: JsonObject | undefined): boolean {
    const p = this.pending.get(params?.progressToken);
    const watch = p?.progress;
    if (p === undefined || watch === undefined) return false;
    if (watch.reset && p.deadline !== undefined && !p.deadline.restart(watch.maxTotalMs)) {
      this.giveUp(p, new RequestTimeoutError(watch.maxTotalMs));
      return true;
    }
    watch.onProgress(params as JsonObject);
    return true;
  }

  /** Rejects every pending request with a fresh `makeError()` each; from now on nothing more is sent. */
  close(makeError: () => unknown): void {
    this.closedValue = true;
    this.answers.closed = true;
    for (const p of this.pending.takeAll()) this.settle(p, false, makeError());
  }

  // ---- internals -------------------------------------------------------------------------------

  private failPending(p: PendingRequest, error: unknown): boolean {
    if (!this.pending.remove(p)) return false;
    this.settle(p, false, error);
    return true;
  }

  private giveUp(p: PendingRequest, reason: unknown): void {
    if (!this.pending.remove(p)) return;
    this.settle(p, false, reason);
    const seen = this.sink.abandon ? this.sink.abandon(p.id, reason) : true;
    // MCP: the receiver should stop the work and not answer; `initialize` is never cancelled.
    if (!seen || p.method === "initialize" || this.closedValue) return;
    this.sendQuietly(
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: p.id, reason: reasonText(reason) } },
      "notifications/cancelled",
    );
  }

  /** Tells a removed request's reply how it ended; a reply that throws costs a log line, nothing more. */
  private settle(p: PendingRequest, ok: boolean, value: unknown): void {
    try {
      if (ok) p.reply.resolve(value);
      else p.reply.reject(value);
    } catch (err) {
      this.log.warn({ err: errorText(err), id: p.id, method: p.method }, "a request's reply threw");
    }
  }

  private unknownResponse(id: RequestId | null): void {
    if (this.opts.onUnknownResponse) this.opts.onUnknownResponse(id);
    else this.log.debug({ id }, "dropped a response with an unknown id");
  }

  private sendQuietly(message: JsonRpcMessage, what: string): void {
    const failed = (err: unknown): void => this.log.debug({ err: errorText(err) }, `could not send ${what}`);
    try {
      const sent = this.sink.send(message);
      if (sent !== undefined) sent.then(undefined, failed);
    } catch (err) {
      failed(err);
    }
  }
}

/** The default `checkTimeout`: a number of ms >= 0 (a RangeError otherwise). */
function checkTimeout(timeoutMs: unknown, method: string): void {
  checkTimeoutMs(timeoutMs, `request "${method}": timeout`);
}

/** The `reason` text of `notifications/cancelled` for a give-up reason. */
function reasonText(reason: unknown): string {
  if (reason instanceof Error && reason.message) return reason.message;
  if (typeof reason === "string" && reason) return reason;
  return "Request cancelled";
}
