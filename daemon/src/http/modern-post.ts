import type { ServerResponse } from "node:http";
import { ModernErrorCode, WireCode, encodeRelayed, type JsonRpcErrorObject, type Logger, type RequestId } from "@mcpd/protocol";
import { RUNTIME_DEFAULTS } from "../defaults.js";
import { encodeOutgoing } from "../infra/encode-outgoing.js";
import type { Outbound } from "../router/ports.js";
import type { Session } from "../router/session.js";
import type { HttpBuffers } from "./http-buffers.js";
import type { ViewChoice } from "./http-routes.js";
import { onGone } from "./http-respond.js";
import { OutputMeter } from "./output-meter.js";

/** What opens and ends a POST's router session (the front end's sessions, see http-sessions.ts). */
export interface ModernOpener {
  openModern(
    outbound: Outbound,
    view: ViewChoice,
  ): Session | { status: number; error: { code: number; message: string; mcpdCode: string } };
  closeModern(session: Session): void;
}

/** The HTTP status of an error answer that has not been streamed (the 2026 era's table; anything else is in-band, 200). */
function statusOf(code: unknown): number {
  if (code === WireCode.MethodNotFound) return 404;
  if (code === ModernErrorCode.HeaderMismatch || code === ModernErrorCode.MissingRequiredClientCapability) return 400;
  if (code === ModernErrorCode.UnsupportedProtocolVersion) return 400;
  return 200;
}

/** Sends one JSON-RPC error answer (with the request's id) as a whole response. */
export function sendRpcError(res: ServerResponse, status: number, id: RequestId | null, error: JsonRpcErrorObject): void {
  const body = JSON.stringify({ jsonrpc: "2.0", id, error });
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body);
}

/**
 * One 2026-era request POSTed to a Streamable HTTP endpoint: no session; a router session of its own for as
 * long as its response is open. The answer goes back as JSON, or, once something else comes for the request
 * first (progress, a log message it asked for, a listen's acknowledgement), as an SSE stream (no event ids:
 * the era has no resumption). Closing the response cancels the request (its router session is detached,
 * which cancels what it has in flight upstream). A `subscriptions/listen` keeps its stream open, with
 * keep-alive comments, until its client closes it.
 */
export class ModernPost implements Outbound {
  private session: Session | undefined;
  private streaming = false;
  private done = false;
  private meter: OutputMeter | undefined;
  private keepAlive: NodeJS.Timeout | undefined;

  /** @param listening a `subscriptions/listen`: its connection takes list changes */
  constructor(
    private readonly res: ServerResponse,
    private readonly id: RequestId,
    readonly listening: boolean,
    private readonly limits: { maxOutgoingBytes: number },
    private readonly buffers: HttpBuffers,
    private readonly log: Logger,
  ) {}

  /** Opens its router session on `view` and hands it the request; answered at once (404) when the view cannot be chosen. */
  start(sessions: ModernOpener, view: ViewChoice, message: unknown): void {
    const opened = sessions.openModern(this, view);
    if ("status" in opened) {
      const { code, message: text, mcpdCode } = opened.error;
      return sendRpcError(this.res, opened.status, this.id, { code, message: text, data: { mcpdCode } });
    }
    this.session = opened;
    onGone(this.res, () => this.end(sessions));
    opened.handle(message);
  }

  private end(sessions: ModernOpener): void {
    this.done = true;
    clearInterval(this.keepAlive);
    if (this.session) sessions.closeModern(this.session);
  }

  /** The router's {@link Outbound}: the request's answer ends the response; anything else streams before it. */
  send(message: object): boolean {
    if (this.done) return false;
    const m = message as { id?: RequestId; method?: unknown; error?: { code?: unknown } };
    const text = encodeOutgoing(message, this.log, encodeRelayed);
    if (text === undefined) return true;
    if (m.method !== undefined) {
      this.toSse();
      this.write(`event: message\ndata: ${text}\n\n`);
      return true;
    }
    if (m.id !== this.id) return true;
    this.done = true;
    clearInterval(this.keepAlive);
    if (this.streaming) {
      this.write(`event: message\ndata: ${text}\n\n`);
      this.res.end();
    } else {
      this.res.writeHead(statusOf(m.error?.code), { "content-type": "application/json" }).end(text);
    }
    // What the client has not read yet counts against the daemon-wide budget until it leaves.
    if (this.meter) this.meter.written();
    else if (this.res.writableLength > 0) new OutputMeter(this.res, this.buffers).written();
    return true;
  }

  private toSse(): void {
    if (this.streaming) return;
    this.streaming = true;
    this.res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache, no-transform", "x-accel-buffering": "no" });
    this.meter = new OutputMeter(this.res, this.buffers);
    if (this.listening) {
      this.keepAlive = setInterval(() => this.write(": keep-alive\n\n"), RUNTIME_DEFAULTS.httpListenKeepAliveMs);
      this.keepAlive.unref();
    }
  }

  private write(text: string): void {
    if (this.res.destroyed || this.res.writableEnded) return;
    this.res.write(text);
    if ((this.meter?.written() ?? 0) > this.limits.maxOutgoingBytes) {
      // Not reading: its request (or listen) ends with the response.
      this.log.warn({ client: this.session?.id }, "a 2026-era response stream was not read; it is closed");
      this.res.destroy();
    }
  }
}
