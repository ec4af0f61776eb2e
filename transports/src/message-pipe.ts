import type { JsonObject, MessageContext, PeerSink } from "@mcpd/protocol";
import type { CloseInfo, TransportInfo } from "./transport.js";

/**
 * What a {@link MessagePipe} tells the transport above it. The pipe moves messages; every decision about
 * requests (ids, deadlines, cancellation, answers) is the {@link JsonRpcPeer}'s, behind these calls.
 */
export interface PipeEvents {
  /**
   * One parsed message (batches already unpacked) and where it came from. Returns false when the value
   * is not a JSON-RPC 2.0 message: the pipe then reports it in its own words ({@link dropped}).
   */
  deliver(value: unknown, context: MessageContext): boolean;
  /** One message that could not be used (counted in `info().droppedMessages`); with an error, also `onError`. */
  dropped(error?: Error): void;
  /** A non-fatal problem for `onError`, not counted. */
  report(error: Error): void;
  /** Rejects pending request `id` with `makeError(its method)`, if it is pending (an oversized response). */
  failRequest(id: number, makeError: (method: string) => Error): void;
  /** Sends a request of the pipe's own through the peer (HTTP's re-initialization) and resolves with its result. */
  request(method: string, params: JsonObject): Promise<unknown>;
  /** No more messages will flow: every pending request rejects with a fresh `makeError()`. */
  down(makeError: () => Error): void;
  /** The pipe is closed and every resource released. Called once, and only if it was connected. */
  closed(info: CloseInfo): void;
}

/**
 * A transport's wire, below the JSON-RPC peer: it opens (`connect`), sends one message at a time
 * ({@link PeerSink.send}), delivers what arrives ({@link PipeEvents.deliver}) and closes. stdio, HTTP and
 * WebSocket each implement one.
 */
export interface MessagePipe extends PeerSink {
  /** True while messages can be sent. */
  readonly open: boolean;
  connect(): Promise<void>;
  /** Idempotent; resolves once everything is released. */
  close(): Promise<void>;
  /** The error for a request made while not open. */
  closedError(): Error;
  info(droppedMessages: number): TransportInfo;
}
