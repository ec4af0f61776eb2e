import type { WebSocket } from "ws";
import { MAX_TIMER_MS, ProtocolError, QueueFullError, TransportClosedError, type JsonRpcMessage, type Logger } from "@mcpd/protocol";
import { TRANSPORT_DEFAULTS } from "../defaults.js";
import { errorText } from "../http/http-wire.js";
import type { MessagePipe, PipeEvents } from "../message-pipe.js";
import type { TransportInfo } from "../transport.js";
import { readRefusedUpgrade } from "./refused-upgrade.js";
import type { ResolvedWsConfig } from "./ws-config.js";
import { WsFrameReader } from "./ws-frames.js";

/** The WebSocket subprotocol offered on every connection. A server that does not select it is refused. */
export const MCP_WS_SUBPROTOCOL = "mcp";

type State = "idle" | "connecting" | "open" | "closed";

/**
 * The `ws` package, loaded by the first WebSocket transport that connects instead of imported: it adds
 * several MB of resident memory to every process that imports it, and a daemon whose servers are all stdio
 * never needs it.
 */
let wsPackage: Promise<typeof import("ws")> | undefined;
function loadWs(): Promise<typeof import("ws")> {
  wsPackage ??= import("ws");
  return wsPackage;
}

/**
 * The wire of {@link WebSocketTransport} (see there for the behaviour): one socket (package `ws`,
 * subprotocol `mcp`), one JSON-RPC message per frame out, text or binary UTF-8 frames and batches in.
 * It opens the socket (a refused upgrade is an `HttpError`: {@link readRefusedUpgrade}), hands frames to
 * its {@link WsFrameReader}, bounds what waits in the socket, and on close or a broken socket fails
 * everything pending at once.
 */
export class WsPipe implements MessagePipe {
  private state: State = "idle";
  private ws: WebSocket | undefined;
  /** Rejecters of notifications whose frame is not flushed yet, so a close never leaves one hanging. */
  private readonly flushing = new Set<(error: Error) => void>();
  private closeReason: string | undefined;
  private connectPromise: Promise<void> | undefined;
  private settleConnect: ((error?: Error) => void) | undefined;
  private closePromise: Promise<void> | undefined;
  private socketClosed: Promise<void> = Promise.resolve();
  private markSocketClosed: () => void = () => {};
  private readonly frames: WsFrameReader;

  constructor(
    private readonly cfg: ResolvedWsConfig,
    private readonly events: PipeEvents,
    private readonly log: Logger,
  ) {
    this.frames = new WsFrameReader(events, log, cfg.safeUrl);
  }

  get open(): boolean {
    return this.state === "open";
  }

  info(droppedMessages: number): TransportInfo {
    return { type: "ws", mode: "websocket", droppedMessages };
  }

  closedError(): TransportClosedError {
    if (this.state === "idle" || this.state === "connecting") return new TransportClosedError("not connected");
    return new TransportClosedError(this.closeReason ?? "closed");
  }

  connect(): Promise<void> {
    if (this.state === "open") return Promise.resolve();
    if (this.state === "connecting" && this.connectPromise) return this.connectPromise;
    if (this.state === "closed") return Promise.reject(new TransportClosedError(this.closeReason ?? "closed"));
    this.state = "connecting";
    this.socketClosed = new Promise((resolve) => (this.markSocketClosed = resolve));
    this.connectPromise = new Promise<void>((resolve, reject) => {
      this.settleConnect = (error) => {
        this.settleConnect = undefined;
        if (error) reject(error);
        else resolve();
      };
    });
    loadWs().then(
      ({ WebSocket }) => this.openSocket(WebSocket),
      (err: unknown) => this.cannotOpen(err),
    );
    return this.connectPromise;
  }

  /** Opens the socket once `ws` is loaded, unless close() ran meanwhile (it settled connect() then). */
  private openSocket(WebSocketClass: typeof WebSocket): void {
    if (this.state !== "connecting") return;
    const configured = this.cfg.timeoutMs ?? TRANSPORT_DEFAULTS.requestTimeoutMs;
    const handshakeMs = configured === 0 || configured > MAX_TIMER_MS ? TRANSPORT_DEFAULTS.requestTimeoutMs : configured;
    let ws: WebSocket;
    try {
      ws = new WebSocketClass(this.cfg.url, [MCP_WS_SUBPROTOCOL], {
        headers: this.cfg.headers,
        maxPayload: this.cfg.maxPayloadBytes,
        handshakeTimeout: handshakeMs,
        followRedirects: false,
      });
    } catch (err) {
      this.cannotOpen(err);
      return;
    }
    this.ws = ws;
    ws.on("open", () => this.handleOpen());
    // The server answered the upgrade with a plain HTTP status.
    ws.on("unexpected-response", (_req, res) => readRefusedUpgrade(res, this.cfg.safeUrl, (error) => this.failConnect(error)));
    ws.on("message", (data, isBinary) => {
      if (this.state === "open") this.frames.read(data, isBinary);
    });
    ws.on("error", (err) => this.handleSocketError(err));
    ws.on("close", (code, reason) => this.handleSocketClose(code, reason.toString("utf8")));
  }

  /** The socket could not even be made (a bad URL for ws, or the package failed to load): connect() fails. */
  private cannotOpen(err: unknown): void {
    if (this.state !== "connecting") return;
    this.state = "closed";
    this.closeReason = `cannot connect to ${this.cfg.safeUrl}: ${errorText(err)}`;
    this.markSocketClosed();
    this.settleConnect?.(new TransportClosedError(this.closeReason, { cause: err }));
  }

  /**
   * Sends one frame. A request's or notification's promise settles when ws flushed the frame (rejecting
   * with TransportClosedError when it could not, or when the socket closes first); answers are sent
   * without waiting. @throws TransportClosedError, QueueFullError (too much waiting in the socket),
   * ProtocolError (not encodable).
   */
  send(message: JsonRpcMessage): void | Promise<void> {
    const ws = this.ws;
    if (this.state !== "open" || !ws) throw this.closedError();
    if (!("method" in message)) {
      ws.send(encode(message, `the answer to ${String(message.id)}`), (err) => {
        if (err) this.log.debug({ err: err.message, id: message.id }, "failed to answer server request");
      });
      return;
    }
    const method = message.method;
    const frame = encode(message, method);
    this.checkBackpressure(method);
    if ("id" in message) {
      return new Promise<void>((resolve, reject) => {
        ws.send(frame, (err) =>
          err ? reject(new TransportClosedError(`failed to send ${method}: ${err.message}`, { cause: err })) : resolve(),
        );
      });
    }
    return new Promise<void>((resolve, reject) => {
      const fail = (error: Error): void => {
        this.flushing.delete(fail);
        reject(error);
      };
      this.flushing.add(fail);
      ws.send(frame, (err) => {
        if (!this.flushing.delete(fail)) return;
        if (err) reject(new TransportClosedError(`failed to send ${method}: ${err.message}`, { cause: err }));
        else resolve();
      });
    });
  }

  close(): Promise<void> {
    this.closePromise ??= this.shutdown();
    return this.closePromise;
  }

  private async shutdown(): Promise<void> {
    const previous = this.state;
    const ws = this.ws;
    if (previous === "idle" || !ws) {
      this.state = "closed";
      this.closeReason ??= "closed by client";
      if (previous === "connecting") {
        // Closed while `ws` was loading: no socket was made.
        this.markSocketClosed();
        this.settleConnect?.(new TransportClosedError(`closed by client before ${this.cfg.safeUrl} was connected`));
      }
      return;
    }
    if (previous === "closed") {
      // Closed by the other side already: only wait for the socket to be released.
      await this.socketClosed;
      return;
    }
    this.state = "closed";
    this.closeReason = "closed by client";
    if (previous === "connecting") {
      this.settleConnect?.(new TransportClosedError(`closed by client before ${this.cfg.safeUrl} was connected`));
      ws.terminate();
      await this.socketClosed;
      return;
    }
    this.rejectAll("closed by client");
    ws.close(1000, "client closing");
    // A peer that never answers the close frame must not hold close() forever.
    const grace = setTimeout(() => ws.terminate(), TRANSPORT_DEFAULTS.closeGraceMs);
    await this.socketClosed;
    clearTimeout(grace);
    this.events.closed({ reason: "closed by client", expected: true });
  }

  // --- socket events ---

  private handleOpen(): void {
    if (this.state !== "connecting") return;
    this.state = "open";
    this.log.debug({ url: this.cfg.safeUrl }, "websocket connected");
    this.settleConnect?.();
  }

  private handleSocketError(err: Error): void {
    if (this.state === "connecting") {
      this.failConnect(new TransportClosedError(`cannot connect to ${this.cfg.safeUrl}: ${err.message}`, { cause: err }));
      return;
    }
    if (this.state !== "open") {
      this.log.debug({ url: this.cfg.safeUrl, err: err.message }, "websocket error after close");
      return;
    }
    const code = (err as { code?: string }).code;
    const reason =
      code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH"
        ? `a WebSocket frame from ${this.cfg.safeUrl} exceeded maxPayload of ${this.cfg.maxPayloadBytes} bytes (close code 1009)`
        : `WebSocket error on ${this.cfg.safeUrl}: ${err.message}`;
    this.log.warn({ url: this.cfg.safeUrl, err: err.message }, "websocket failed");
    this.events.report(err);
    // Fail now rather than after ws's own close handshake, which may wait up to 30 s for the peer.
    this.fail(reason, err);
  }

  private handleSocketClose(code: number, reason: string): void {
    const state = this.state;
    if (state === "connecting") {
      this.failConnect(new TransportClosedError(`cannot connect to ${this.cfg.safeUrl}: closed during the handshake (code ${code})`));
    } else if (state === "open") {
      const detail = code === 1006 ? "connection dropped without a close frame" : "closed by server";
      this.fail(`WebSocket ${detail} (code ${code}${reason ? `: ${reason}` : ""})`);
    }
    this.markSocketClosed();
  }

  private failConnect(error: Error): void {
    if (this.state !== "connecting") return;
    this.state = "closed";
    this.closeReason = error.message;
    this.log.debug({ url: this.cfg.safeUrl, err: error.message }, "websocket connect failed");
    this.settleConnect?.(error);
    this.ws?.terminate();
  }

  /** Unexpected end of an open connection: reject everything, release the socket, tell the owner once. */
  private fail(reason: string, cause?: unknown): void {
    if (this.state !== "open") return;
    this.state = "closed";
    this.closeReason = reason;
    this.rejectAll(reason, cause);
    this.ws?.terminate();
    this.events.closed({ reason, expected: false });
  }

  private rejectAll(reason: string, cause?: unknown): void {
    this.events.down(() => new TransportClosedError(reason, { cause }));
    for (const fail of [...this.flushing]) fail(new TransportClosedError(reason, { cause }));
  }

  private checkBackpressure(method: string): void {
    const buffered = this.ws?.bufferedAmount ?? 0;
    if (buffered > TRANSPORT_DEFAULTS.maxPendingWriteBytes) {
      throw new QueueFullError(
        `WebSocket send buffer to ${this.cfg.safeUrl} holds ${buffered} bytes ` +
          `(limit ${TRANSPORT_DEFAULTS.maxPendingWriteBytes}); ${method} refused`,
      );
    }
  }
}

// --- helpers ---

function encode(message: object, what: string): string {
  try {
    return JSON.stringify(message);
  } catch (err) {
    throw new ProtocolError(`params of ${what} cannot be serialized as JSON: ${errorText(err)}`, { cause: err });
  }
}
