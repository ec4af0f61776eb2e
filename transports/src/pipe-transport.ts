import {
  JsonRpcPeer,
  RequestTimeoutError,
  checkTimeoutMs,
  type JsonObject,
  type Logger,
  type RequestId,
  type RequestReply,
} from "@mcpd/protocol";
import type { MessagePipe, PipeEvents } from "./message-pipe.js";
import type { CloseInfo, MCPTransport, MessageContext, TransportRequestOptions, ServerRequestHandler, TransportInfo } from "./transport.js";

/**
 * The {@link MCPTransport} face every transport shows, composed of a {@link JsonRpcPeer} (ids, pending
 * requests, deadlines, caller signals, cancel by id, answers to server requests) over a
 * {@link MessagePipe} (the wire). Subclasses pick the pipe and may shape the peer's errors.
 */
export abstract class PipeTransport<P extends MessagePipe> implements MCPTransport {
  onClose?: (info: CloseInfo) => void;
  onError?: (error: Error) => void;

  protected readonly log: Logger;
  protected readonly pipe: P;
  protected readonly peer: JsonRpcPeer;
  private droppedCount = 0;

  /**
   * @param defaultTimeoutMs deadline of a request that names none (`0` or `Infinity`: none).
   * @param makePipe builds the pipe, given the events it reports to.
   */
  protected constructor(log: Logger, defaultTimeoutMs: number, makePipe: (events: PipeEvents) => P) {
    this.log = log;
    const events: PipeEvents = {
      deliver: (value, context) => this.peer.receive(value, context),
      dropped: (error) => {
        this.droppedCount++;
        if (error) this.report(error);
      },
      report: (error) => this.report(error),
      failRequest: (id, makeError) => {
        const method = this.peer.methodOf(id);
        if (method !== undefined) this.peer.fail(id, makeError(method));
      },
      request: (method, params) => this.peer.request(method, params),
      down: (makeError) => this.peer.close(makeError),
      closed: (info) => {
        try {
          this.onClose?.(info);
        } catch (err) {
          this.log.warn({ err: (err as Error)?.message }, "onClose threw");
        }
      },
    };
    this.pipe = makePipe(events);
    this.peer = new JsonRpcPeer({
      sink: this.pipe,
      defaultTimeoutMs,
      log,
      checkTimeout: (ms, method) => this.checkTimeout(ms, method),
      timeoutError: (ms, id) => this.timeoutError(ms, id),
      onUnknownResponse: (id) => {
        // Late answers to timed-out or cancelled requests land here.
        this.droppedCount++;
        this.log.debug({ id }, "dropped a response with an unknown id");
      },
      onAnswerError: (error, request) => {
        this.log.warn({ id: request.id, method: request.method, err: (error as Error)?.message }, "could not answer a server request");
        this.report(error instanceof Error ? error : new Error(String(error)));
      },
    });
  }

  /** Notifications the server starts; forwarded by the peer (which logs a throwing handler). */
  get onNotification(): ((method: string, params: JsonObject | undefined, context: MessageContext) => void) | undefined {
    return this.peer.onNotification;
  }
  set onNotification(handler: ((method: string, params: JsonObject | undefined, context: MessageContext) => void) | undefined) {
    this.peer.onNotification = handler;
  }

  /** Requests the server sends; without a handler they are answered -32601. */
  get onRequest(): ServerRequestHandler | undefined {
    return this.peer.onRequest;
  }
  set onRequest(handler: ServerRequestHandler | undefined) {
    this.peer.onRequest = handler;
  }

  get connected(): boolean {
    return this.pipe.open;
  }

  /** Requests waiting for an answer. */
  get pendingCount(): number {
    return this.peer.pendingCount;
  }

  connect(): Promise<void> {
    return this.pipe.connect();
  }

  request<T = JsonObject>(method: string, params?: JsonObject, options?: TransportRequestOptions): Promise<T> {
    if (!this.pipe.open) return Promise.reject(this.pipe.closedError());
    return this.peer.request<T>(method, params, options);
  }

  call(method: string, params: JsonObject | undefined, options: TransportRequestOptions | undefined, reply: RequestReply): void {
    if (!this.pipe.open) return reply.reject(this.pipe.closedError());
    this.peer.call(method, params, options, reply);
  }

  cancel(id: RequestId, reason: unknown): boolean {
    return this.peer.cancel(id, reason);
  }

  async notify(method: string, params?: JsonObject): Promise<void> {
    if (!this.pipe.open) throw this.pipe.closedError();
    await this.peer.notify(method, params);
  }

  close(): Promise<void> {
    return this.pipe.close();
  }

  info(): TransportInfo {
    return this.pipe.info(this.droppedCount);
  }

  /** Refuses a bad `timeout` (the request rejects with the throw). Default: a RangeError unless a number >= 0. */
  protected checkTimeout(ms: unknown, method: string): void {
    checkTimeoutMs(ms, `request "${method}": timeout`);
  }

  /** The error of a request whose deadline passed. */
  protected timeoutError(ms: number, _id: number): Error {
    return new RequestTimeoutError(ms);
  }

  private report(error: Error): void {
    try {
      this.onError?.(error);
    } catch (err) {
      this.log.warn({ err: (err as Error)?.message }, "onError threw");
    }
  }
}
