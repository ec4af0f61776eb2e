/**
 * The other side's requests to a {@link JsonRpcPeer}: each handed to the peer's request handler, its
 * result or error sent back (`-32601` when there is no handler), nothing once the peer is closed.
 */
import { toWireError } from "../errors.js";
import type { Logger } from "../logger.js";
import type { JsonObject, JsonRpcErrorObject, JsonRpcMessage, JsonRpcRequest } from "../types.js";
import { WireCode } from "../wire-codes.js";
import type { JsonRpcPeerOptions, MessageContext, PeerRequestHandler, PeerSink } from "./peer-ports.js";

/** How an error is named in the peer's log lines. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export class PeerAnswers {
  /** Set when the peer closes: answers settled after it are not sent. */
  closed = false;

  constructor(
    private readonly sink: PeerSink,
    private readonly log: Logger,
    private readonly onAnswerError: JsonRpcPeerOptions["onAnswerError"],
  ) {}

  /** A request from the other side: hand it to `handler` and send back its answer. */
  serve(request: JsonRpcRequest, context: MessageContext, handler: PeerRequestHandler | undefined): void {
    if (handler === undefined) {
      this.answer(request, undefined, { code: WireCode.MethodNotFound, message: `Method not found: ${request.method}` });
      return;
    }
    let result: Promise<JsonObject>;
    try {
      result = Promise.resolve(handler(request, context));
    } catch (err) {
      result = Promise.reject(err);
    }
    result.then(
      (value) => this.answer(request, value ?? {}),
      (err: unknown) => this.answer(request, undefined, toWireError(err)),
    );
  }

  private answer(request: JsonRpcRequest, result: JsonObject | undefined, error?: JsonRpcErrorObject): void {
    if (this.closed) {
      this.log.debug({ id: request.id, method: request.method }, "closed before a request from the other side could be answered");
      return;
    }
    const reply: JsonRpcMessage =
      error === undefined ? { jsonrpc: "2.0", id: request.id, result: result as JsonObject } : { jsonrpc: "2.0", id: request.id, error };
    const failed = (err: unknown): void => {
      if (this.onAnswerError) this.onAnswerError(err, request);
      else this.log.warn({ id: request.id, method: request.method, err: errorText(err) }, "could not answer a request");
    };
    try {
      const sent = this.sink.send(reply);
      if (sent !== undefined) sent.then(undefined, failed);
    } catch (err) {
      failed(err);
    }
  }
}
