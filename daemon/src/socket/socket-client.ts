import type { Socket } from "node:net";
import { JsonLineDecoder, TickBatch, WireCode, encodeRelayedLine, type LineError } from "@mcpd/protocol";
import type { DaemonLogger } from "../infra/daemon-logger.js";
import { encodeOutgoing } from "../infra/encode-outgoing.js";
import type { ClientConn } from "./client-conn.js";
import type { ClientLimits } from "./client-limits.js";
import type { Outbound } from "../router/ports.js";
import type { Router } from "../router/router.js";
import type { Session } from "../router/session.js";
import { WaitingOutput } from "./waiting-output.js";

/** What every connection of one socket server shares: set once by the server, read by each connection. */
export interface SocketClientShared {
  readonly router: Router;
  readonly limits: ClientLimits;
  /** Each connection logs through a child of it (`{client: "c12"}`); messages in and out at its trace level. */
  readonly log: DaemonLogger;
  /** Largest line accepted from a client, in bytes. */
  readonly maxLineBytes: number;
  /** Bytes allowed to wait in one connection's outgoing buffer; past this the client is disconnected. */
  readonly maxOutgoingBytes: number;
}

/**
 * The longest text written to a socket as a string: Node writes one of up to 16 KiB of UTF-8 straight from
 * its stack, and sizes its copy of a longer one (when the kernel does not take it all at once) at 3 bytes
 * per character below 64K characters, counted by `writableLength` as one. Longer text is written as bytes.
 */
const STRING_WRITE_MAX_CHARS = Math.floor((16 * 1024) / 3);

/** The connection a socket belongs to, for the listeners every connection shares. */
const CLIENT = Symbol("mcpd.socketClient");
type ClientSocket = Socket & { [CLIENT]?: SocketClient };

function onData(this: ClientSocket, chunk: Buffer): void {
  this[CLIENT]?.read(chunk);
}

function onSocketError(this: ClientSocket, err: Error): void {
  this[CLIENT]?.log.debug({ err: err.message }, "client socket error");
}

function onClose(this: ClientSocket): void {
  this[CLIENT]?.closed();
}

/**
 * One client connection of the socket face: its socket, line decoder and session, and the counts
 * {@link ClientLimits} keeps for it. It is the session's {@link Outbound}; the socket's listeners are
 * shared by every connection and find it through the socket. One object per connection: as closures it
 * was seven functions, two contexts and two objects (~0.5 KB of the daemon's heap per connection).
 */
export class SocketClient implements ClientConn, Outbound {
  readonly decoder: JsonLineDecoder;
  readonly session: Session;
  log: DaemonLogger;
  inBytes = 0;
  outBytes = 0;
  lineStartedAt = 0;
  flushWatch = false;
  gone = false;
  /** Every message of a tick leaves in one write at its end. */
  private readonly out = new TickBatch((text) => this.writeOut(text), process.nextTick);
  /** ...as bytes when earlier output still waits (waiting-output.ts). */
  private readonly waiting = new WaitingOutput((bytes, done) => this.writeBlock(bytes, done), process.nextTick);

  constructor(
    readonly socket: Socket,
    private readonly shared: SocketClientShared,
  ) {
    this.log = shared.log;
    this.decoder = new JsonLineDecoder({
      maxLineBytes: shared.maxLineBytes,
      onValue: (value) => this.receive(value),
      onError: (err) => this.badLine(err),
    });
    shared.limits.add(this);
    this.session = shared.router.attach(this);
    this.log = shared.log.child({ client: this.session.id });
    (socket as ClientSocket)[CLIENT] = this;
    socket.on("data", onData);
    socket.on("error", onSocketError);
    socket.on("close", onClose);
    this.log.debug("client connected");
  }

  /** Queues one message for the client. False when it is gone or has stopped reading (it is then dropped). */
  send(message: object): boolean {
    const { socket, shared } = this;
    if (this.gone || socket.destroyed || socket.writableEnded) return false;
    if (this.log.isLevelEnabled("trace")) this.log.trace({ message }, "send");
    // A server's answer goes on as the server wrote it, with only its id the client's (no second encoding).
    const line = encodeOutgoing(message, this.log, encodeRelayedLine);
    if (line === undefined) return true;
    // writableLength changes only when the tick's output is written, at its end: one tick's lines all go one way.
    if (socket.writableLength === 0) this.out.add(line);
    else this.waiting.add(line);
    if (socket.writableLength + this.out.length + this.waiting.bytes > shared.maxOutgoingBytes) {
      this.log.warn({ buffered: socket.writableLength }, "client is not reading; disconnecting it");
      shared.limits.drop(this, "notReading");
      return false;
    }
    return true;
  }

  takeOutput(): string {
    return this.out.take() + this.waiting.takeText();
  }

  /** The end of the tick that first wrote: the tick's messages leave together. */
  private writeOut(text: string): void {
    const socket = this.socket;
    if (this.gone || socket.destroyed || socket.writableEnded) return;
    // A long text is written as bytes, so that if it waits it is counted as what it holds (`writableLength`
    // counts a string's characters: V8 holds 2 bytes each of one that is not Latin-1, Node's copy up to 3).
    socket.write(text.length <= STRING_WRITE_MAX_CHARS ? text : Buffer.from(text));
    this.counted();
  }

  /** The end of a tick whose output joined output that still waits (waiting-output.ts). */
  private writeBlock(bytes: Uint8Array, done: () => void): void {
    const socket = this.socket;
    if (this.gone || socket.destroyed || socket.writableEnded) return done();
    socket.write(bytes, done);
    this.counted();
  }

  /**
   * Output is counted once per tick, after the kernel took what it would: a broadcast to many clients in
   * one tick is not mistaken for clients that do not read.
   */
  private counted(): void {
    if (!this.gone) this.shared.limits.countOutput(this);
  }

  /** A chunk from the socket. */
  read(chunk: Buffer): void {
    if (this.gone) return;
    const ended = this.decoder.linesEnded;
    this.decoder.push(chunk);
    if (this.gone) return;
    this.shared.limits.afterInput(this, ended);
  }

  /** The socket closed: the connection is forgotten and its session detached. */
  closed(): void {
    this.log.debug({ clientInfo: this.session.clientInfo }, "client disconnected");
    this.shared.limits.remove(this);
    void this.shared.router.detach(this.session);
  }

  private receive(value: unknown): void {
    if (this.log.isLevelEnabled("trace")) this.log.trace({ message: value }, "recv");
    this.session.handle(value);
  }

  private badLine(err: LineError): void {
    this.log.debug({ err: err.message, preview: err.preview.slice(0, 200) }, "bad line from client");
    if (err.code === "MCPD_MESSAGE_TOO_LARGE") {
      this.session.replyError(null, { code: WireCode.MessageTooLarge, message: err.message, data: { mcpdCode: err.code } });
    } else {
      this.session.replyError(null, { code: WireCode.ParseError, message: `Parse error: ${err.message}`, data: { mcpdCode: err.code } });
    }
  }
}
