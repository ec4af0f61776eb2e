/**
 * A stdio server's stdout read as JSON-RPC lines: decoded with a bounded line decoder and delivered;
 * a line that is not JSON-RPC is skipped and counted (warned of for the first few); a line too long to
 * read that is the response to a pending request fails that request at once.
 */
import {
  JsonLineDecoder,
  MessageTooLargeError,
  PROTOCOL_DEFAULTS,
  ProtocolError,
  quote,
  type Logger,
  type MessageContext,
} from "@mcpd/protocol";
import type { PipeEvents } from "../message-pipe.js";
import { TAIL_BYTES, oversizedLineId } from "./oversized-line.js";

const BAD_LINE_WARNINGS = 20;
const NO_CONTEXT: MessageContext = Object.freeze({});
const EMPTY_BUFFER = Buffer.alloc(0);

export class StdoutReader {
  /** Messages are delivered while this is true: from the launch until pending requests have been failed at the end. */
  delivering = false;
  private readonly decoder: JsonLineDecoder;
  private badLines = 0;
  /** The stdout chunk being decoded, and the last bytes of the one before: the tail of an oversized line. */
  private chunk: Buffer | undefined;
  private prevTail: Buffer = EMPTY_BUFFER;

  /** @throws what the decoder throws for a bad `maxLineBytes`. */
  constructor(
    maxLineBytes: number,
    private readonly events: PipeEvents,
    private readonly log: Logger,
  ) {
    this.decoder = new JsonLineDecoder({
      maxLineBytes,
      onValue: (value) => this.handleValue(value),
      onError: (err) => this.skipLine(err, err.preview),
      // An answer relayed to a client goes on as the server wrote it (encodeRelayedLine).
      keepResults: true,
    });
  }

  /** Bytes of a line not yet complete. */
  get bufferedBytes(): number {
    return this.decoder.bufferedBytes;
  }

  push(chunk: Buffer): void {
    this.chunk = chunk;
    this.decoder.push(chunk);
    this.chunk = undefined;
    // A copy: keeping a view would pin the whole chunk.
    this.prevTail = Buffer.from(
      chunk.length >= TAIL_BYTES ? chunk.subarray(chunk.length - TAIL_BYTES) : Buffer.concat([this.prevTail, chunk]).subarray(-TAIL_BYTES),
    );
  }

  /** stdout ended: a last line without its newline is decoded. */
  end(): void {
    this.decoder.end();
  }

  private handleValue(value: unknown): void {
    if (!this.delivering || this.events.deliver(value, NO_CONTEXT)) return;
    let preview: string;
    try {
      preview = quote(JSON.stringify(value), PROTOCOL_DEFAULTS.previewBytes);
    } catch {
      preview = quote(String(value), PROTOCOL_DEFAULTS.previewBytes);
    }
    this.skipLine(new ProtocolError("Line is JSON but not a JSON-RPC 2.0 message", { data: { preview } }), preview);
  }

  private skipLine(err: Error, preview: string): void {
    if (err instanceof MessageTooLargeError) this.failOversized(err, preview);
    // A chatty server could print thousands of banner lines: warn for the first few, then debug.
    const level = this.badLines++ < BAD_LINE_WARNINGS ? "warn" : "debug";
    this.log[level]({ err: err.message, preview }, "skipped a stdout line that is not a JSON-RPC message");
    this.events.dropped(err);
  }

  /**
   * A line over maxLineBytes was dropped. When it is the response to a pending request (its id is at
   * the start or the end of the line), that request fails now with MessageTooLargeError instead of
   * waiting for its timeout; the connection goes on.
   */
  private failOversized(err: MessageTooLargeError, head: string): void {
    // The line ended at the first newline of the chunk being decoded (pipes deliver at most 64 KiB at a
    // time, far less than a line this long), or at the end of the stream.
    const chunk = this.chunk;
    const nl = chunk === undefined ? -1 : chunk.indexOf(0x0a);
    const end = chunk === undefined || nl === -1 ? this.prevTail : Buffer.concat([this.prevTail, chunk.subarray(0, nl)]);
    const id = oversizedLineId(head, end.subarray(-TAIL_BYTES).toString("utf8"));
    if (id === undefined) return;
    const size = Number(/(\d+) bytes exceeds/.exec(err.message)?.[1] ?? Number.NaN);
    this.events.failRequest(id, (method) =>
      Number.isFinite(size) ? new MessageTooLargeError(size, err.limitBytes, `Response to ${method}`) : err,
    );
  }
}
