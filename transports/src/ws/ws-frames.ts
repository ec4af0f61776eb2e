/**
 * The frames a WebSocket server sends, read as JSON-RPC: text or binary UTF-8, one message or a batch
 * per frame, each delivered; a frame that is not JSON, or a value that is not JSON-RPC, is dropped and
 * counted. A delivery that throws is reported, never let into `ws`'s event emitter.
 */
import type { RawData } from "ws";
import { PROTOCOL_DEFAULTS, ParseError, ProtocolError, keepResultText, quote, type Logger, type MessageContext } from "@mcpd/protocol";
import type { PipeEvents } from "../message-pipe.js";
import { errorText } from "../http/http-wire.js";

const NO_CONTEXT: MessageContext = Object.freeze({});

export class WsFrameReader {
  constructor(
    private readonly events: PipeEvents,
    private readonly log: Logger,
    /** The server's URL as messages and logs name it. */
    private readonly safeUrl: string,
  ) {}

  read(data: RawData, isBinary: boolean): void {
    const text = rawToText(data);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      const kind = isBinary ? "binary frame" : "frame";
      this.drop(
        new ParseError(`Invalid JSON in WebSocket ${kind} from ${this.safeUrl}: ${quote(text, PROTOCOL_DEFAULTS.previewBytes, "...")}`, {
          cause: err,
        }),
      );
      return;
    }
    // JSON-RPC batches (allowed by MCP 2025-03-26) carry several messages in one frame.
    if (Array.isArray(value) && value.length > 0) {
      for (const item of value) this.dispatch(item, text);
    } else {
      // An answer relayed to a client goes on as the server wrote it (encodeRelayedLine).
      keepResultText(value, text);
      this.dispatch(value, text);
    }
  }

  private dispatch(value: unknown, text: string): void {
    try {
      if (this.events.deliver(value, NO_CONTEXT)) return;
      this.drop(
        new ProtocolError(
          `Not a JSON-RPC 2.0 message in WebSocket frame from ${this.safeUrl}: ${quote(text, PROTOCOL_DEFAULTS.previewBytes, "...")}`,
        ),
      );
    } catch (err) {
      // A throwing callback must not escape into ws's event emitter.
      this.log.warn({ err: errorText(err) }, "websocket message handler threw");
      this.events.report(err instanceof Error ? err : new Error(errorText(err)));
    }
  }

  private drop(error: Error): void {
    this.log.warn({ url: this.safeUrl, err: error.message }, "dropped websocket message");
    this.events.dropped(error);
  }
}

function rawToText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString("utf8");
  return data.toString("utf8");
}
