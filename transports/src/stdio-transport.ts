import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import {
  JsonLineDecoder,
  McpRemoteError,
  MessageTooLargeError,
  ProtocolError,
  RequestTimeoutError,
  TransportClosedError,
  WireCode,
  classify,
  encodeLine,
  silentLogger,
  toWireError,
  type JsonObject,
  type RequestId,
  type JsonRpcErrorObject,
  type JsonRpcRequest,
  type Logger,
  PROTOCOL_DEFAULTS,
} from "@mcpd/protocol";
import { TRANSPORT_DEFAULTS } from "./defaults.js";
import { buildChildEnv } from "./env.js";
import { signalGroup, terminateProcessTree, trackGroup, untrackGroup, withinMs } from "./process-tree.js";
import { stderrErrorLine } from "./stderr-headline.js";
import { StderrRing } from "./stderr-ring.js";
import { StdinWriter } from "./stdin-writer.js";
import { describeSpawnError, positiveOption, validateStdioConfig } from "./stdio-config.js";
import { PendingRequest, SignalWatch } from "./stdio-pending.js";
import type {
  CloseInfo,
  MCPTransport,
  MessageContext,
  RequestOptions,
  ServerRequestHandler,
  StdioServerConfig,
  TransportInfo,
  TransportOptions,
} from "./transport.js";

/** Constructor options of {@link StdioTransport}, besides the logger. Sizes in bytes, times in ms. */
export interface StdioTransportOptions extends TransportOptions {
  /** Longest stdout line accepted; longer lines are dropped and counted. Default `TRANSPORT_DEFAULTS.maxMessageBytes` (4 MiB). */
  maxLineBytes?: number;
  /** stderr lines kept for {@link StdioTransport.stderrTail}. Default 200. */
  stderrMaxLines?: number;
  /** stderr bytes kept. Default 64 KiB. */
  stderrMaxBytes?: number;
  /** Bytes allowed to wait for `drain` on the child's stdin; beyond it requests fail with QueueFullError. Default 16 MiB. */
  maxPendingWriteBytes?: number;
  /** close(): wait after ending stdin before SIGTERM, and after SIGTERM before SIGKILL. Default 2000. */
  closeGraceMs?: number;
}

type State = "idle" | "connecting" | "open" | "closing" | "closed";
type Deferred = { promise: Promise<void>; resolve: () => void };

/** setTimeout's largest delay; longer deadlines are treated as none (Node would fire them after 1 ms). */
const MAX_TIMER_MS = 2_147_483_647;
const BAD_LINE_WARNINGS = 20;
const NO_CONTEXT: MessageContext = Object.freeze({});
/** Bytes kept from the end of each stdout chunk: where the id of an oversized response is looked for. */
const TAIL_BYTES = 128;
const EMPTY_BUFFER = Buffer.alloc(0);
/** `{"jsonrpc":"2.0","id":7,` or `{"id":7,` at the start of a line: the id of a response written id-first. */
const HEAD_ID = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(\d+)\s*,/;
/** `"id":7}` or `"id":7,"jsonrpc":"2.0"}` closing a line: the id of a response written result-first (the TS SDK's order). */
const TAIL_ID = /"id"\s*:\s*(\d+)\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$/;

/**
 * The top-level id of a line too large to parse, from its first and last bytes, when either shows it
 * unambiguously (a nested `"id"` never matches: the head pattern needs it to be the first key, the tail
 * pattern needs exactly one closing brace after it).
 */
function oversizedLineId(head: string, tail: string): number | undefined {
  const m = HEAD_ID.exec(head) ?? TAIL_ID.exec(tail);
  return m ? Number(m[1]) : undefined;
}

function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * MCP over a child process's stdio: one JSON-RPC message per line on stdin/stdout, stderr kept as logs.
 *
 * The child is spawned without a shell (arguments are never interpreted) as the leader of its own
 * process group; close() ends the whole group (stdin EOF, then SIGTERM, then SIGKILL) so wrappers such as
 * `npx` never leave the real server behind. Requests use integer ids from 1. Lines that are not JSON-RPC
 * are skipped and counted. Nothing is retried or respawned here: on exit every pending request fails with
 * `TransportClosedError` (code MCPD_TRANSPORT_CLOSED) and `onClose` fires once; the manager decides.
 *
 * Errors: connect() -> SpawnError (MCPD_SPAWN_FAILED), ConfigError; request() -> RequestTimeoutError
 * (MCPD_REQUEST_TIMEOUT), the caller's `signal.reason`, McpRemoteError (MCPD_MCP_ERROR),
 * QueueFullError (MCPD_QUEUE_FULL), MessageTooLargeError (MCPD_MESSAGE_TOO_LARGE), TransportClosedError.
 */
export class StdioTransport implements MCPTransport {
  onClose?: (info: CloseInfo) => void;
  onError?: (error: Error) => void;
  onNotification?: (method: string, params: JsonObject | undefined, context: MessageContext) => void;
  onRequest?: ServerRequestHandler;

  private readonly config: StdioServerConfig;
  private readonly log: Logger;
  private readonly maxPendingWriteBytes: number;
  private readonly closeGraceMs: number;
  private readonly decoder: JsonLineDecoder;
  private readonly ring: StderrRing;

  private state: State = "idle";
  private child: ChildProcessWithoutNullStreams | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, PendingRequest>();
  private readonly watches = new Map<AbortSignal, SignalWatch>();
  private dropped = 0;
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

  private writer: StdinWriter | undefined;

  constructor(config: StdioServerConfig, options: StdioTransportOptions = {}) {
    validateStdioConfig(config);
    this.config = config;
    this.log = options.logger ?? silentLogger;
    this.maxPendingWriteBytes = positiveOption("maxPendingWriteBytes", options.maxPendingWriteBytes, TRANSPORT_DEFAULTS.maxPendingWriteBytes);
    this.closeGraceMs = positiveOption("closeGraceMs", options.closeGraceMs, TRANSPORT_DEFAULTS.closeGraceMs);
    this.decoder = new JsonLineDecoder({
      maxLineBytes: positiveOption("maxLineBytes", options.maxLineBytes, TRANSPORT_DEFAULTS.maxMessageBytes),
      onValue: (value) => this.handleMessage(value),
      onError: (err) => this.skipLine(err, err.preview),
    });
    this.ring = new StderrRing({
      maxLines: positiveOption("stderrMaxLines", options.stderrMaxLines, TRANSPORT_DEFAULTS.stderrMaxLines),
      maxBytes: positiveOption("stderrMaxBytes", options.stderrMaxBytes, TRANSPORT_DEFAULTS.stderrMaxBytes),
      onLine: (line) => this.log.debug({ stderr: line }, "server stderr"),
    });
  }

  /** True while requests can be sent. */
  get connected(): boolean {
    return this.state === "open";
  }

  /** The child's pid once spawned. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The child's process group id (= its pid: it is spawned as a group leader). POSIX only. */
  get pgid(): number | undefined {
    return process.platform === "win32" ? undefined : this.child?.pid;
  }

  /** Requests waiting for an answer. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Bytes written but not yet taken by the child (ours waiting for drain + the stream's buffer). */
  get pendingWriteBytes(): number {
    return this.writer?.pendingBytes ?? 0;
  }

  /** Bytes of an incomplete stdout line held by the decoder (bounded by maxLineBytes). */
  get readBufferedBytes(): number {
    return this.decoder.bufferedBytes;
  }

  /** The last `n` stderr lines (default: all kept), oldest first. */
  stderrTail(n?: number): string[] {
    return this.ring.tail(n);
  }

  info(): TransportInfo {
    const info: TransportInfo = { type: "stdio", mode: "stdio", droppedMessages: this.dropped };
    if (this.child?.pid !== undefined) info.pid = this.child.pid;
    return info;
  }

  /**
   * Spawns the server. Resolves once the process exists (the MCP handshake is the caller's job).
   * Rejects with SpawnError naming the command when it cannot start (missing, not executable, bad cwd);
   * nothing is left running then. A transport connects once; after close() use a new one.
   */
  connect(): Promise<void> {
    if (this.state === "open") return Promise.resolve();
    if (this.state === "connecting") return this.launching as Promise<void>;
    if (this.state !== "idle") return Promise.reject(new TransportClosedError("transport is closed; create a new one"));
    this.state = "connecting";
    return (this.launching = this.launch());
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
      this.prevTail = Buffer.from(chunk.length >= TAIL_BYTES ? chunk.subarray(chunk.length - TAIL_BYTES) : Buffer.concat([this.prevTail, chunk]).subarray(-TAIL_BYTES));
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
    this.log.debug({ command, pid: child.pid }, "stdio server started");
    if (this.closeRequested) {
      this.shutdownDone = this.shutdown(true, "closed by client");
      throw new TransportClosedError("closed while connecting");
    }
  }

  request<T = JsonObject>(method: string, params?: JsonObject, options?: RequestOptions): Promise<T> {
    if (this.state !== "open") return Promise.reject(this.closedError());
    const signal = options?.signal;
    // Already aborted: fail at once and send nothing, so the server never sees it.
    if (signal?.aborted) return Promise.reject(signal.reason);
    let timeoutMs = options?.timeout ?? this.config.timeout ?? TRANSPORT_DEFAULTS.requestTimeoutMs;
    if (typeof timeoutMs !== "number" || !(timeoutMs >= 0)) {
      return Promise.reject(new RangeError(`request "${method}": timeout must be a number of ms >= 0 (got ${String(timeoutMs)})`));
    }
    if (timeoutMs > MAX_TIMER_MS) timeoutMs = 0;
    const id = this.nextId++;
    options?.onRequestId?.(id);
    let line: string;
    try {
      line = encodeLine(params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params });
    } catch (cause) {
      return Promise.reject(new ProtocolError(`request "${method}": params cannot be encoded as JSON`, { cause }));
    }
    return new Promise<T>((resolve, reject) => {
      try {
        (this.writer as StdinWriter).write(line);
      } catch (err) {
        reject(err);
        return;
      }
      const p = new PendingRequest(id, method, timeoutMs, resolve as (value: unknown) => void, reject);
      this.pending.set(id, p);
      if (timeoutMs > 0) p.timer = setTimeout(this.timeoutPending, timeoutMs, p);
      if (signal !== undefined) (this.watches.get(signal) ?? new SignalWatch(signal, this.watches, this.abortPending)).add(p);
    });
  }

  /**
   * Sends a notification. Resolves once its bytes are handed to the child's stdin stream: when the
   * child is slow to read, this waits for `drain`, which gives callers backpressure.
   */
  async notify(method: string, params?: JsonObject): Promise<void> {
    if (this.state !== "open") throw this.closedError();
    let line: string;
    try {
      line = encodeLine(params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params });
    } catch (cause) {
      throw new ProtocolError(`notification "${method}": params cannot be encoded as JSON`, { cause });
    }
    const writer = this.writer as StdinWriter;
    writer.write(line);
    if (writer.waiting) await writer.flushed();
  }

  /**
   * Ends the server: fails pending requests with TransportClosedError, closes stdin, waits
   * `closeGraceMs`, SIGTERMs the process group, waits again, SIGKILLs it, and also ends any of the
   * server's children still in the group. Resolves once the process is gone and its output streams are
   * closed; `onClose` fires just before. Idempotent: every call shares one promise.
   */
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

  // ---- inbound -----------------------------------------------------------------------------------

  private handleMessage(value: unknown): void {
    if (!this.inboundOpen) return;
    const kind = classify(value);
    const msg = value as { id?: unknown; method?: string; params?: JsonObject; result?: unknown; error?: JsonRpcErrorObject };
    if (kind === "success" || kind === "error") {
      const p = typeof msg.id === "number" ? this.pending.get(msg.id) : undefined;
      if (p === undefined) {
        this.dropped++;
        this.log.debug({ id: msg.id }, "dropped a response with an unknown id");
        return;
      }
      this.pending.delete(p.id);
      p.detach();
      if (kind === "success") p.resolve(msg.result);
      else p.reject(new McpRemoteError(msg.error as JsonRpcErrorObject));
    } else if (kind === "notification") {
      const handler = this.onNotification;
      if (handler === undefined) return;
      try {
        handler(msg.method as string, msg.params, NO_CONTEXT);
      } catch (err) {
        this.log.warn({ err: (err as Error)?.message, method: msg.method }, "onNotification threw");
      }
    } else if (kind === "request") {
      this.serveRequest(value as JsonRpcRequest);
    } else {
      let preview: string;
      try {
        preview = JSON.stringify(value).slice(0, PROTOCOL_DEFAULTS.previewBytes);
      } catch {
        preview = String(value).slice(0, PROTOCOL_DEFAULTS.previewBytes);
      }
      this.skipLine(new ProtocolError("Line is JSON but not a JSON-RPC 2.0 message", { data: { preview } }), preview);
    }
  }

  private skipLine(err: Error, preview: string): void {
    if (err instanceof MessageTooLargeError) this.failOversized(err, preview);
    this.dropped++;
    // A chatty server could print thousands of banner lines: warn for the first few, then debug.
    const level = this.badLines++ < BAD_LINE_WARNINGS ? "warn" : "debug";
    this.log[level]({ err: err.message, preview }, "skipped a stdout line that is not a JSON-RPC message");
    this.emitError(err);
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
    const p = id === undefined ? undefined : this.pending.get(id);
    if (p === undefined) return;
    this.pending.delete(p.id);
    p.detach();
    const size = Number(/(\d+) bytes exceeds/.exec(err.message)?.[1] ?? Number.NaN);
    p.reject(Number.isFinite(size) ? new MessageTooLargeError(size, err.limitBytes, `Response to ${p.method}`) : err);
  }

  /** Server-to-client request: hand it to onRequest and write back its answer (-32601 without a handler). */
  private serveRequest(request: JsonRpcRequest): void {
    const handler = this.onRequest;
    if (handler === undefined) {
      this.answer(request.id, undefined, { code: WireCode.MethodNotFound, message: `Method not found: ${request.method}` });
      return;
    }
    let result: Promise<JsonObject>;
    try {
      result = Promise.resolve(handler(request, NO_CONTEXT));
    } catch (err) {
      result = Promise.reject(err);
    }
    result.then(
      (value) => this.answer(request.id, value ?? {}),
      (err: unknown) => this.answer(request.id, undefined, toWireError(err)),
    );
  }

  private answer(id: string | number, result: JsonObject | undefined, error?: JsonRpcErrorObject): void {
    if (this.state !== "open") {
      this.log.debug({ id }, "transport closed before a server request could be answered");
      return;
    }
    try {
      (this.writer as StdinWriter).write(encodeLine(error === undefined ? { jsonrpc: "2.0", id, result } : { jsonrpc: "2.0", id, error }));
    } catch (err) {
      this.log.warn({ id, err: (err as Error).message }, "could not answer a server request");
    }
  }

  // ---- outbound ----------------------------------------------------------------------------------

  private readonly timeoutPending = (p: PendingRequest): void => {
    if (this.pending.get(p.id) !== p) return;
    this.pending.delete(p.id);
    p.detach();
    const err = new RequestTimeoutError(p.timeoutMs);
    p.reject(err);
    this.cancelUpstream(p, err.message);
  };

  private readonly abortPending = (p: PendingRequest): void => {
    this.giveUp(p, p.watch?.signal.reason);
  };

  /** Cancels a pending request by id, exactly as an abort of its signal would (see MCPTransport.cancel). */
  cancel(id: RequestId, reason: unknown): boolean {
    const p = typeof id === "number" ? this.pending.get(id) : undefined;
    if (!p) return false;
    this.giveUp(p, reason);
    return true;
  }

  private giveUp(p: PendingRequest, reason: unknown): void {
    if (this.pending.get(p.id) !== p) return;
    this.pending.delete(p.id);
    p.detach();
    p.reject(reason);
    this.cancelUpstream(p, reason instanceof Error ? reason.message : typeof reason === "string" ? reason : "Request cancelled");
  }

  /** notifications/cancelled for a request we stopped waiting for. Never for initialize (MCP forbids it). */
  private cancelUpstream(p: PendingRequest, reason: string): void {
    if (p.method === "initialize" || this.state !== "open") return;
    try {
      (this.writer as StdinWriter).write(encodeLine({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: p.id, reason } }));
    } catch (err) {
      this.log.debug({ id: p.id, err: (err as Error).message }, "could not send notifications/cancelled");
    }
  }

  // ---- lifecycle ---------------------------------------------------------------------------------

  private emitError(err: Error): void {
    try {
      this.onError?.(err);
    } catch (e) {
      this.log.warn({ err: (e as Error)?.message }, "onError threw");
    }
  }

  private closedError(): TransportClosedError {
    return new TransportClosedError(this.closedReason ?? (this.state === "idle" ? "not connected" : undefined));
  }

  private handleExit(code: number | null, signal: NodeJS.Signals | null): void {
    this.exitInfo = { code, signal };
    this.exited.resolve();
    this.log.debug({ pid: this.child?.pid, code, signal }, "stdio server exited");
    this.fail(code !== null ? `process exited with code ${code}` : `process was killed by ${signal}`);
  }

  private streamFailed(stream: string, err: Error): void {
    const code = (err as NodeJS.ErrnoException).code;
    if (this.state !== "open") {
      // EPIPE after we closed stdin or the child died is expected noise.
      this.log.debug({ stream, code, err: err.message }, "stdio stream error while closing");
      return;
    }
    this.emitError(err);
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
      await withinMs(Promise.all([this.exited.promise, this.stdoutClosed.promise, this.stderrClosed.promise]), TRANSPORT_DEFAULTS.exitSettleMs);
    }
    this.inboundOpen = false;
    const reason = expected ? undefined : this.describeEnd(why);
    this.closedReason = reason ?? "closed by client";
    if (!expected) this.log.warn({ pid: child.pid, reason, pending: this.pending.size }, "stdio server ended unexpectedly");
    for (const p of this.pending.values()) {
      p.detach();
      p.reject(new TransportClosedError(reason));
    }
    this.pending.clear();
    this.writer?.discard(new TransportClosedError(reason));
    if (!child.stdin.destroyed && !child.stdin.writableEnded) child.stdin.end();

    await terminateProcessTree({
      pgid,
      exited: this.exited.promise,
      hasExited: () => this.exitInfo !== undefined,
      killChild: (signal) => child.kill(signal),
      graceMs: this.closeGraceMs,
      onStep: (step) => this.log.debug({ pid: child.pid, pgid }, `stdio server ${step}`),
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
    this.log.debug({ pid: child.pid, reason: info.reason, expected }, "stdio transport closed");
    try {
      this.onClose?.(info);
    } catch (err) {
      this.log.warn({ err: (err as Error)?.message }, "onClose threw");
    }
  }
}
