import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import {
  JsonLineDecoder,
  MessageTooLargeError,
  PROTOCOL_DEFAULTS,
  ProtocolError,
  TransportClosedError,
  encodeLine,
  quote,
  type JsonRpcMessage,
  type Logger,
  type MessageContext,
} from "@mcpd/protocol";
import { TRANSPORT_DEFAULTS } from "../defaults.js";
import type { MessagePipe, PipeEvents } from "../message-pipe.js";
import type { CloseInfo, StdioServerConfig, TransportInfo } from "../transport.js";
import { buildChildEnv } from "./env.js";
import { TAIL_BYTES, oversizedLineId } from "./oversized-line.js";
import { signalGroup, terminateProcessTree, trackGroup, untrackGroup, withinMs } from "./process-tree.js";
import { stderrErrorLine } from "./stderr-headline.js";
import { StderrRing } from "./stderr-ring.js";
import { StdinWriter } from "./stdin-writer.js";
import { describeSpawnError, positiveOption, type StdioTransportOptions } from "./stdio-config.js";

type State = "idle" | "connecting" | "open" | "closing" | "closed";
type Deferred = { promise: Promise<void>; resolve: () => void };

const BAD_LINE_WARNINGS = 20;
const NO_CONTEXT: MessageContext = Object.freeze({});
const EMPTY_BUFFER = Buffer.alloc(0);

function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** How a message is named in an encoding error. */
function describe(message: JsonRpcMessage): string {
  if ("method" in message) return "id" in message ? `request "${message.method}"` : `notification "${message.method}"`;
  return `answer to request ${String(message.id)}`;
}

/**
 * The wire of {@link StdioTransport}: a child process speaking one JSON-RPC message per line on
 * stdin/stdout, stderr kept in a ring. It spawns the child (no shell, its own process group), writes
 * lines with bounded buffering ({@link StdinWriter}), decodes stdout with a bounded line decoder, and
 * ends the whole process group on close or after an unexpected end. Lines that are not JSON-RPC are
 * skipped and counted; an oversized line that is the response to a pending request fails that request.
 */
export class StdioPipe implements MessagePipe {
  private readonly maxPendingWriteBytes: number;
  private readonly closeGraceMs: number;
  private readonly decoder: JsonLineDecoder;
  private readonly ring: StderrRing;

  private state: State = "idle";
  private child: ChildProcessWithoutNullStreams | undefined;
  private writer: StdinWriter | undefined;
  private badLines = 0;
  /** The stdout chunk being decoded, and the last bytes of the one before: the tail of an oversized line. */
  private chunk: Buffer | undefined;
  private prevTail: Buffer = EMPTY_BUFFER;
  /** Inbound messages are handled until pending requests have been failed. */
  private inboundOpen = false;
  private closeRequested = false;
  private launching: Promise<void> | undefined;
  /** The one shutdown run (close() or an unexpected end); every close() call returns it. */
  private shutdownDone: Promise<void> | undefined;
  private closedReason: string | undefined;
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private readonly exited = deferred();
  private readonly stdoutClosed = deferred();
  private readonly stderrClosed = deferred();

  constructor(
    private readonly config: StdioServerConfig,
    options: StdioTransportOptions,
    private readonly events: PipeEvents,
    private readonly log: Logger,
  ) {
    this.maxPendingWriteBytes = positiveOption(
      "maxPendingWriteBytes",
      options.maxPendingWriteBytes,
      TRANSPORT_DEFAULTS.maxPendingWriteBytes,
    );
    this.closeGraceMs = positiveOption("closeGraceMs", options.closeGraceMs, TRANSPORT_DEFAULTS.closeGraceMs);
    this.decoder = new JsonLineDecoder({
      maxLineBytes: positiveOption("maxLineBytes", options.maxLineBytes, TRANSPORT_DEFAULTS.maxMessageBytes),
      onValue: (value) => this.handleValue(value),
      onError: (err) => this.skipLine(err, err.preview),
      // An answer relayed to a client goes on as the server wrote it (encodeRelayedLine).
      keepResults: true,
    });
    this.ring = new StderrRing({
      maxLines: positiveOption("stderrMaxLines", options.stderrMaxLines, TRANSPORT_DEFAULTS.stderrMaxLines),
      maxBytes: positiveOption("stderrMaxBytes", options.stderrMaxBytes, TRANSPORT_DEFAULTS.stderrMaxBytes),
      onLine: (line) => this.log.debug({ stderr: line }, "server stderr"),
    });
  }

  get open(): boolean {
    return this.state === "open";
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get pgid(): number | undefined {
    return process.platform === "win32" ? undefined : this.child?.pid;
  }

  get pendingWriteBytes(): number {
    return this.writer?.pendingBytes ?? 0;
  }

  get readBufferedBytes(): number {
    return this.decoder.bufferedBytes;
  }

  stderrTail(n?: number): string[] {
    return this.ring.tail(n);
  }

  info(droppedMessages: number): TransportInfo {
    const info: TransportInfo = { type: "stdio", mode: "stdio", droppedMessages };
    if (this.child?.pid !== undefined) info.pid = this.child.pid;
    return info;
  }

  closedError(): TransportClosedError {
    return new TransportClosedError(this.closedReason ?? (this.state === "idle" ? "not connected" : undefined));
  }

  connect(): Promise<void> {
    if (this.state === "open") return Promise.resolve();
    if (this.state === "connecting") return this.launching as Promise<void>;
    if (this.state !== "idle") return Promise.reject(new TransportClosedError("transport is closed; create a new one"));
    this.state = "connecting";
    return (this.launching = this.launch());
  }

  /**
   * Writes one message line. Requests and answers return at once (their bytes may wait for 'drain');
   * a notification returns a promise of its bytes being taken by the child, which gives senders
   * backpressure when the child is slow to read.
   * @throws TransportClosedError, ProtocolError (not encodable), QueueFullError, MessageTooLargeError.
   */
  send(message: JsonRpcMessage): void | Promise<void> {
    if (this.state !== "open") throw this.closedError();
    let line: string;
    try {
      line = encodeLine(message);
    } catch (cause) {
      throw new ProtocolError(`${describe(message)}: params cannot be encoded as JSON`, { cause });
    }
    const writer = this.writer as StdinWriter;
    writer.write(line);
    if (writer.waiting && "method" in message && !("id" in message)) return writer.flushed();
  }

  close(): Promise<void> {
    if (this.shutdownDone) return this.shutdownDone;
    switch (this.state) {
      case "open":
        return (this.shutdownDone = this.shutdown(true, "closed by client"));
      case "connecting": {
        // The launch finishes, sees the flag and shuts down (or failed and left nothing running).
        this.closeRequested = true;
        const after = (): Promise<void> | undefined => this.shutdownDone;
        return (this.launching as Promise<void>).then(after, after);
      }
      default:
        // Never connected (or the launch failed): nothing to release, and onClose does not fire.
        this.state = "closed";
        return Promise.resolve();
    }
  }

  private async launch(): Promise<void> {
    const { command, args = [], cwd } = this.config;
    let child: ChildProcessWithoutNullStreams;
    try {
      child = spawn(command, args, {
        cwd,
        env: buildChildEnv(this.config.envMode, this.config.env),
        stdio: ["pipe", "pipe", "pipe"],
        // Own process group, so close() can signal the server and everything it started at once.
        detached: true,
        shell: false,
        windowsHide: true,
      });
    } catch (err) {
      // Some failures (cwd is a file: ENOTDIR, NUL bytes in args) throw synchronously.
      this.state = "closed";
      throw await describeSpawnError(command, cwd, err);
    }
    // 'spawn' and 'error' are mutually exclusive for the launch itself: exactly one fires, on a later
    // tick. Listen before touching anything else: an 'error' nobody listens to is an uncaught exception.
    const launched = new Promise<void>((resolve, reject) => {
      const onSpawn = (): void => {
        child.off("error", onError);
        resolve();
      };
      const onError = (err: Error): void => {
        child.off("spawn", onSpawn);
        reject(err);
      };
      child.once("spawn", onSpawn);
      child.once("error", onError);
    });
    // Out of descriptors (EMFILE, ENFILE), Node fails before creating the pipes: the streams are absent.
    const streams = [child.stdin, child.stdout, child.stderr] as const;
    // Error listeners first: an EPIPE on any stdio stream must never become an uncaught exception.
    child.stdin?.on("error", (err) => this.streamFailed("stdin", err));
    child.stdout?.on("error", (err) => this.streamFailed("stdout", err));
    child.stderr?.on("error", (err) => this.streamFailed("stderr", err));
    try {
      await launched;
      if (streams.some((stream) => stream == null)) {
        // Never seen after 'spawn'; a process without its pipes could not be talked to anyway.
        child.kill("SIGKILL");
        throw new Error("the process started without its stdio pipes");
      }
    } catch (err) {
      this.state = "closed";
      for (const stream of streams) stream?.destroy();
      throw await describeSpawnError(command, cwd, err);
    }
    this.child = child;
    trackGroup(this.pgid);
    child.on("error", (err) => this.log.warn({ err: err.message }, "child process error"));
    child.once("exit", (code, signal) => this.handleExit(code, signal));
    this.writer = new StdinWriter(child.stdin, this.maxPendingWriteBytes, `stdin of "${command}"`);
    child.stdout.on("data", (chunk: Buffer) => {
      this.chunk = chunk;
      this.decoder.push(chunk);
      this.chunk = undefined;
      // A copy: keeping a view would pin the whole chunk.
      this.prevTail = Buffer.from(
        chunk.length >= TAIL_BYTES
          ? chunk.subarray(chunk.length - TAIL_BYTES)
          : Buffer.concat([this.prevTail, chunk]).subarray(-TAIL_BYTES),
      );
    });
    child.stdout.once("end", () => this.decoder.end());
    child.stdout.once("close", () => {
      this.stdoutClosed.resolve();
      this.fail("the server closed its stdout");
    });
    child.stderr.on("data", (chunk: Buffer) => this.ring.push(chunk));
    child.stderr.once("end", () => this.ring.end());
    child.stderr.once("close", () => this.stderrClosed.resolve());
    this.state = "open";
    this.inboundOpen = true;
    this.log.debug({ command, serverPid: child.pid }, "stdio server started");
    if (this.closeRequested) {
      this.shutdownDone = this.shutdown(true, "closed by client");
      throw new TransportClosedError("closed while connecting");
    }
  }

  // ---- inbound -----------------------------------------------------------------------------------

  private handleValue(value: unknown): void {
    if (!this.inboundOpen || this.events.deliver(value, NO_CONTEXT)) return;
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

  // ---- lifecycle ---------------------------------------------------------------------------------

  private handleExit(code: number | null, signal: NodeJS.Signals | null): void {
    this.exitInfo = { code, signal };
    this.exited.resolve();
    this.log.debug({ serverPid: this.child?.pid, code, signal }, "stdio server exited");
    this.fail(code !== null ? `process exited with code ${code}` : `process was killed by ${signal}`);
  }

  private streamFailed(stream: string, err: Error): void {
    const code = (err as NodeJS.ErrnoException).code;
    if (this.state !== "open") {
      // EPIPE after we closed stdin or the child died is expected noise.
      this.log.debug({ stream, code, err: err.message }, "stdio stream error while closing");
      return;
    }
    this.events.report(err);
    this.fail(`${stream} failed: ${code ?? err.message}`);
  }

  /** Unexpected end (exit, stdout closed, stream error): the same path as close(), expected = false. */
  private fail(why: string): void {
    if (this.state !== "open") return;
    this.shutdownDone = this.shutdown(false, why);
  }

  private describeEnd(why: string): string {
    const exit = this.exitInfo;
    let reason = exit ? (exit.code !== null ? `process exited with code ${exit.code}` : `process was killed by ${exit.signal}`) : why;
    // The line stating the error when there is one (a Node crash ends with its stack and version, not
    // the message), else the last few lines that are not blank.
    const tail = this.ring.tail();
    const error = stderrErrorLine(tail);
    const lines = error !== undefined ? [error] : tail.filter((l) => l.trim() !== "").slice(-TRANSPORT_DEFAULTS.closeReasonStderrLines);
    if (lines.length > 0) reason += `; stderr: ${lines.join(" | ").slice(-1000)}`;
    return reason;
  }

  private async shutdown(expected: boolean, why: string): Promise<void> {
    this.state = "closing";
    const child = this.child as ChildProcessWithoutNullStreams;
    const pgid = this.pgid;
    if (!expected) {
      // The server is gone or broken; its children (npx's real server...) are of no use any more.
      if (this.exitInfo) signalGroup(pgid, "SIGTERM");
      // Give the last stdout/stderr bytes and the exit status a moment to arrive (they race the exit
      // event), so a response written just before exiting still lands and the reason names the code.
      await withinMs(
        Promise.all([this.exited.promise, this.stdoutClosed.promise, this.stderrClosed.promise]),
        TRANSPORT_DEFAULTS.exitSettleMs,
      );
    }
    this.inboundOpen = false;
    const reason = expected ? undefined : this.describeEnd(why);
    this.closedReason = reason ?? "closed by client";
    if (!expected) this.log.warn({ serverPid: child.pid, reason }, "stdio server ended unexpectedly");
    this.events.down(() => new TransportClosedError(reason));
    this.writer?.discard(new TransportClosedError(reason));
    if (!child.stdin.destroyed && !child.stdin.writableEnded) child.stdin.end();

    await terminateProcessTree({
      pgid,
      exited: this.exited.promise,
      hasExited: () => this.exitInfo !== undefined,
      killChild: (signal) => child.kill(signal),
      graceMs: this.closeGraceMs,
      onStep: (step) => this.log.debug({ serverPid: child.pid, pgid }, `stdio server ${step}`),
    });
    // Streams close once every holder of the pipes is gone; a process that escaped the group (setsid)
    // could hold them forever, so wait a bounded time and then let go of our ends.
    await withinMs(Promise.all([this.stdoutClosed.promise, this.stderrClosed.promise]), this.closeGraceMs);
    child.stdin.destroy();
    child.stdout.destroy();
    child.stderr.destroy();
    await withinMs(Promise.all([this.stdoutClosed.promise, this.stderrClosed.promise]), this.closeGraceMs);
    untrackGroup(pgid);
    this.state = "closed";

    const info: CloseInfo = {
      reason: expected ? "closed by client" : (reason as string),
      expected,
      exitCode: this.exitInfo?.code ?? null,
      signal: this.exitInfo?.signal ?? null,
      stderrTail: this.ring.tail(),
    };
    this.log.debug({ serverPid: child.pid, reason: info.reason, expected }, "stdio transport closed");
    this.events.closed(info);
  }
}
