import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { ProtocolError, TransportClosedError, encodeLine, type JsonRpcMessage, type Logger } from "@mcpd/protocol";
import { TRANSPORT_DEFAULTS } from "../defaults.js";
import type { MessagePipe, PipeEvents } from "../message-pipe.js";
import type { CloseInfo, StdioServerConfig, TransportInfo } from "../transport.js";
import { signalGroup, terminateProcessTree, trackGroup, untrackGroup, withinMs } from "./process-tree.js";
import { stderrErrorLine } from "./stderr-headline.js";
import { StderrRing } from "./stderr-ring.js";
import { StdinWriter } from "./stdin-writer.js";
import { describeSpawnError, positiveOption, type StdioTransportOptions } from "./stdio-config.js";
import { spawnServer, whenSpawned } from "./spawn-server.js";
import { StdoutReader } from "./stdout-reader.js";

type State = "idle" | "connecting" | "open" | "closing" | "closed";
type Deferred = { promise: Promise<void>; resolve: () => void };

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
 * stdin/stdout, stderr kept in a ring. It spawns the child (no shell, its own process group:
 * {@link spawnServer}), writes lines with bounded buffering ({@link StdinWriter}), reads stdout's lines
 * ({@link StdoutReader}), and ends the whole process group on close or after an unexpected end.
 */
export class StdioPipe implements MessagePipe {
  private readonly maxPendingWriteBytes: number;
  private readonly closeGraceMs: number;
  private readonly stdout: StdoutReader;
  private readonly ring: StderrRing;

  private state: State = "idle";
  private child: ChildProcessWithoutNullStreams | undefined;
  private writer: StdinWriter | undefined;
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
    this.stdout = new StdoutReader(positiveOption("maxLineBytes", options.maxLineBytes, TRANSPORT_DEFAULTS.maxMessageBytes), events, log);
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
    return this.stdout.bufferedBytes;
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
    const { command, cwd } = this.config;
    let child: ChildProcessWithoutNullStreams;
    try {
      child = spawnServer(this.config);
    } catch (err) {
      // Some failures (cwd is a file: ENOTDIR, NUL bytes in args) throw synchronously.
      this.state = "closed";
      throw await describeSpawnError(command, cwd, err);
    }
    try {
      await whenSpawned(child, (stream, err) => this.streamFailed(stream, err));
    } catch (err) {
      this.state = "closed";
      throw await describeSpawnError(command, cwd, err);
    }
    this.child = child;
    trackGroup(this.pgid);
    child.on("error", (err) => this.log.warn({ err: err.message }, "child process error"));
    child.once("exit", (code, signal) => this.handleExit(code, signal));
    this.writer = new StdinWriter(child.stdin, this.maxPendingWriteBytes, `stdin of "${command}"`);
    child.stdout.on("data", (chunk: Buffer) => this.stdout.push(chunk));
    child.stdout.once("end", () => this.stdout.end());
    child.stdout.once("close", () => {
      this.stdoutClosed.resolve();
      this.fail("the server closed its stdout");
    });
    child.stderr.on("data", (chunk: Buffer) => this.ring.push(chunk));
    child.stderr.once("end", () => this.ring.end());
    child.stderr.once("close", () => this.stderrClosed.resolve());
    this.state = "open";
    this.stdout.delivering = true;
    this.log.debug({ command, serverPid: child.pid }, "stdio server started");
    if (this.closeRequested) {
      this.shutdownDone = this.shutdown(true, "closed by client");
      throw new TransportClosedError("closed while connecting");
    }
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
    this.stdout.delivering = false;
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
