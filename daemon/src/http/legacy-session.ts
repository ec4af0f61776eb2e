import { randomBytes } from "node:crypto";
import type { ServerResponse } from "node:http";
import { encodeRelayed, type Logger } from "@mcpd/protocol";
import type { Router } from "../router/router.js";
import type { Session } from "../router/session.js";
import { encodeOutgoing } from "../infra/encode-outgoing.js";
import type { HttpBuffers } from "./http-buffers.js";
import { OutputMeter } from "./output-meter.js";

/**
 * One session of the legacy HTTP+SSE transport (protocol 2024-11-05): the client holds `GET .../sse` open,
 * learns from its first event (`endpoint`) where to POST, and every message mcpd sends it arrives on that
 * one stream. The session lives as long as the stream: when it closes, the router cancels its requests.
 * A reader that falls `maxOutgoingBytes` behind, or that holds the most of any client when the daemon-wide
 * budget runs out, is disconnected (there is no resumption in this transport).
 */
export class LegacySseSession {
  readonly id = randomBytes(24).toString("base64url");
  readonly session: Session;
  private readonly res: ServerResponse;
  private readonly maxOutgoingBytes: number;
  private readonly log: Logger;
  /** What waits for the reader, charged to the daemon-wide budget. */
  private readonly meter: OutputMeter;
  private closed = false;
  /** The endpoint its client POSTs to (named by the stream's first event); set by {@link start}. */
  messagesPath: string | undefined;
  /** Set when the reader fell too far behind and was disconnected. */
  slowReader = false;

  constructor(router: Router, res: ServerResponse, maxOutgoingBytes: number, log: Logger, buffers: HttpBuffers) {
    this.res = res;
    this.maxOutgoingBytes = maxOutgoingBytes;
    this.log = log;
    this.meter = new OutputMeter(res, buffers, () => {
      this.closed = true;
      log.warn({ session: this.session.id }, "over the daemon-wide buffer budget; disconnecting the HTTP+SSE client holding the most");
    });
    this.session = router.attach({ send: (message) => this.deliver(message) }, "sse");
  }

  /** Opens the stream: headers, then the `endpoint` event naming where to POST (`messagesPath?sessionId=...`). */
  start(messagesPath: string): void {
    this.messagesPath = messagesPath;
    this.res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache, no-transform", connection: "keep-alive" });
    this.write(`event: endpoint\ndata: ${messagesPath}?sessionId=${this.id}\n\n`);
  }

  /** Ends the stream (the session ends with it). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (!this.res.writableEnded) this.res.end();
    this.meter.written();
  }

  private deliver(message: object): boolean {
    if (this.closed) return false;
    // A server's answer goes on as the server wrote it, with only its id the client's (no second encoding).
    const text = encodeOutgoing(message, this.log, encodeRelayed);
    if (text === undefined) return true;
    return this.write(`event: message\ndata: ${text}\n\n`);
  }

  private write(text: string): boolean {
    if (this.res.destroyed) return false;
    this.res.write(text);
    if (this.meter.written() > this.maxOutgoingBytes) {
      this.slowReader = true;
      this.log.warn({ session: this.session.id }, "HTTP+SSE client is not reading its stream; disconnecting it");
      this.res.destroy();
      return false;
    }
    return true;
  }
}
