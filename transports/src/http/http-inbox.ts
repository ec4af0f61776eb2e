import { ProtocolError, classify, type JsonRpcResponse, type Logger, type MessageContext, type RequestId } from "@mcpd/protocol";
import type { PipeEvents } from "../message-pipe.js";
import type { HttpExchange } from "./http-exchange.js";
import type { HttpSession } from "./http-session.js";
import { preview } from "./http-wire.js";

/** The context of every message from the standalone GET stream: unrelated to any request of ours. */
export const STANDALONE: MessageContext = Object.freeze({ standalone: true });

/**
 * Every message an HTTP server sends, whichever stream carried it (a POST's reply, the GET listener, the
 * legacy SSE stream), on its way up: batches unpacked, a response ends its exchange's wait, `initialize`'s
 * result sets the session's protocol version, and anything that is not JSON-RPC is dropped and counted.
 */
export class HttpInbox {
  /** Requests whose exchange is waiting for the response, by id. */
  readonly exchanges = new Map<RequestId, HttpExchange>();

  constructor(
    private readonly events: PipeEvents,
    private readonly session: HttpSession,
    private readonly log: Logger,
    private readonly safeUrl: string,
  ) {}

  dispatchAll(value: unknown, context: MessageContext): void {
    // JSON-RPC batches (MCP 2025-03-26) carry several messages in one body or event.
    if (Array.isArray(value)) for (const item of value) this.dispatch(item, context);
    else this.dispatch(value, context);
  }

  drop(error: Error): void {
    this.log.warn({ url: this.safeUrl, err: error.message }, "dropped HTTP message");
    this.events.dropped(error);
  }

  private dispatch(value: unknown, context: MessageContext): void {
    const kind = classify(value);
    if (kind === "success" || kind === "error") this.noteResponse(value as JsonRpcResponse);
    if (!this.events.deliver(value, context)) {
      this.drop(new ProtocolError(`Not a JSON-RPC 2.0 message from ${this.safeUrl}: ${preview(JSON.stringify(value) ?? "")}`));
    }
  }

  /** A response ends its exchange's wait (on whichever stream it came); `initialize`'s result sets the protocol version. */
  private noteResponse(response: JsonRpcResponse): void {
    if (response.id === null) return;
    const exchange = this.exchanges.get(response.id);
    if (exchange === undefined || !exchange.settle(response)) return;
    if (exchange.method === "initialize" && "result" in response) this.session.noteInitializeResult(response.result);
  }
}
