import type net from "node:net";
import {
  ConnectionLostError,
  JsonLineDecoder,
  McpdError,
  McpdSelect,
  QueueFullError,
  encodeLine,
  fromWireError,
  olderDaemonAnswer,
  servesModern,
  type JsonRpcErrorObject,
  type JsonRpcMessage,
  type SelectParams,
} from "@mcpd/protocol/core";
import { runAutostart, type AutostartOption } from "./autostart.js";
import { openDaemonSocket, endSocket } from "./daemon-socket.js";
import { CLIENT_DEFAULTS } from "./defaults.js";
import { resolvePaths } from "./paths.js";

/**
 * A JSON-RPC message as {@link McpdTransport} passes it. Loose on purpose: the official SDK's own message
 * types (which this package does not import) must be assignable to it, so that `client.connect(new
 * McpdTransport())` type-checks.
 */
export type TransportMessage = JsonRpcMessage | { jsonrpc: "2.0"; [key: string]: unknown };

/** Options of {@link McpdTransport}. Durations in ms. */
export interface McpdTransportOptions {
  /** A server's transparent view; omitted: the aggregate view. */
  server?: string;
  /** A profile of the daemon's config (`mcpd.profiles.<name>`): only what it selects is seen (see `McpdClientOptions.profile`). */
  profile?: string;
  /** One-off tool globs over the aggregate names: only the tools they match (see `McpdClientOptions.tools`). */
  tools?: string[];
  /** The daemon's socket. Default: found like the CLI does (`resolvePaths`). */
  socketPath?: string;
  /** Start the daemon when its socket does not answer (see {@link AutostartOption}). Default `false`. */
  autostart?: AutostartOption;
  /** Also receive `notifications/mcpd/serverState` (default false: an MCP client would not know it). */
  events?: boolean;
  /** Deadline of connecting plus `mcpd/select`, in ms (default {@link CLIENT_DEFAULTS.connectTimeoutMs}). */
  connectTimeout?: number;
  /** Largest line accepted from the daemon, in bytes (default {@link CLIENT_DEFAULTS.maxLineBytes}). */
  maxLineBytes?: number;
  /** Unsent bytes allowed before `send` rejects with `MCPD_QUEUE_FULL`, in bytes (default {@link CLIENT_DEFAULTS.maxWriteBufferBytes}). */
  maxWriteBufferBytes?: number;
  /** The environment the socket path and `MCPD_BIN` are read from. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
}

/**
 * An MCP transport over the mcpd socket with the shape of the official `@modelcontextprotocol/sdk`
 * `Transport` (`start`, `send`, `close`, `onmessage`, `onclose`, `onerror`, `sessionId`,
 * `setProtocolVersion`), without depending on the SDK:
 *
 * ```ts
 * const client = new Client({ name: "agent", version: "1.0.0" });
 * await client.connect(new McpdTransport({ server: "github" }));
 * ```
 *
 * `start()` connects and sends `mcpd/select` under a string id (the SDK's ids are integers, so they cannot
 * collide), swallows its answer, and from then on hands every line to `onmessage` unchanged. It never
 * reconnects: when the socket closes, `onclose` runs (the SDK then fails pending requests). Both eras of
 * MCP pass through it (the v1 SDK's `Client` and the v2 SDK's, pinned or negotiating); a daemon of a release
 * before MCP 2026-07-28 gets only 2025-era requests, the others being answered -32022 here, saying to
 * restart that daemon (a negotiating client then falls back to 2025-11-25).
 */
export class McpdTransport {
  onmessage?: (message: TransportMessage, extra?: unknown) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  /** Always undefined: the SDK's `Client` skips `initialize` when a transport has a session id. */
  sessionId?: string;
  /** The version the SDK negotiated (set through {@link setProtocolVersion}). */
  protocolVersion?: string;

  private socket: net.Socket | undefined;
  /** The daemon predates MCP 2026-07-28 (its select answer names no 2026 revision): 2026-era requests are answered here. */
  private olderDaemon = false;
  private started = false;
  private closed = false;
  private readonly socketPath: string;
  private readonly maxWriteBufferBytes: number;

  constructor(private readonly options: McpdTransportOptions = {}) {
    this.socketPath = options.socketPath ?? resolvePaths(options.env ?? process.env).socketPath;
    this.maxWriteBufferBytes = options.maxWriteBufferBytes ?? CLIENT_DEFAULTS.maxWriteBufferBytes;
  }

  /**
   * Connects and selects the view.
   * @throws `MCPD_DAEMON_UNAVAILABLE` (no daemon, or no answer to `mcpd/select` within `connectTimeout`),
   * `MCPD_UNTRUSTED_SOCKET` (another user could have made the socket: nothing is sent, no autostart),
   * `MCPD_CONNECTION_LOST` when `close()` ran before the select was answered,
   * or the daemon's `mcpd/select` error rebuilt by `fromWireError` (an unknown server or profile: -32602
   * naming the configured ones).
   */
  async start(): Promise<void> {
    if (this.started) throw new Error("McpdTransport already started (the SDK's Client calls start() itself)");
    this.started = true;
    const timeoutMs = this.options.connectTimeout ?? CLIENT_DEFAULTS.connectTimeoutMs;
    const deadline = Date.now() + timeoutMs;
    let socket: net.Socket;
    try {
      socket = await openDaemonSocket(this.socketPath, timeoutMs);
    } catch (err) {
      if (this.closed || !this.options.autostart || !(err instanceof McpdError) || err.code !== "MCPD_DAEMON_UNAVAILABLE") throw err;
      await runAutostart(this.options.autostart, {
        ...(this.options.socketPath !== undefined ? { socketPath: this.socketPath } : {}),
        ...(this.options.env ? { env: this.options.env } : {}),
      });
      socket = await retryOpen(this.socketPath, Date.now() + CLIENT_DEFAULTS.autostartTimeoutMs);
    }
    // close() ran while the socket was opening (onclose has fired): the transport stays closed.
    if (this.closed) {
      socket.destroy();
      throw new ConnectionLostError("McpdTransport was closed while connecting");
    }
    this.socket = socket;
    await this.select(socket, Math.max(1, deadline - Date.now()));
  }

  /** Writes one message. @throws `MCPD_CONNECTION_LOST` when not connected, `MCPD_QUEUE_FULL` when the daemon stopped reading. */
  send(message: TransportMessage, _options?: unknown): Promise<void> {
    const socket = this.socket;
    if (!socket || this.closed) return Promise.reject(new ConnectionLostError("Not connected to mcpd"));
    const answer = this.olderDaemon ? olderDaemonAnswer(message) : undefined;
    if (answer !== undefined) {
      // A daemon of a release before MCP 2026-07-28 would answer "Not initialized": say why, as the daemon's answer.
      queueMicrotask(() => this.deliver(answer));
      return Promise.resolve();
    }
    if (socket.writableLength > this.maxWriteBufferBytes) {
      return Promise.reject(new QueueFullError(`mcpd is not reading: ${socket.writableLength} bytes are waiting to be sent`));
    }
    socket.write(encodeLine(message));
    return Promise.resolve();
  }

  /** Closes the socket (after flushing what was sent); `onclose` runs once. */
  async close(): Promise<void> {
    const socket = this.socket;
    if (!socket || socket.destroyed) {
      this.fireClose();
      return;
    }
    await new Promise<void>((resolve) => endSocket(socket, resolve));
  }

  /** Called by the SDK after `initialize`. */
  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  private select(socket: net.Socket, timeoutMs: number): Promise<void> {
    // The global Web Crypto, not node:crypto: it loads on first use, not with the client (a few ms of the
    // start of every process that imports @mcpd/client, most of which never make an McpdTransport).
    const selectId = `mcpd-select-${globalThis.crypto.randomUUID()}`;
    const early: JsonRpcMessage[] = [];
    let selecting = true;
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const fail = (err: Error): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        socket.destroy();
        reject(err);
      };
      const timer = setTimeout(
        () => fail(new McpdError("MCPD_DAEMON_UNAVAILABLE", `mcpd did not answer mcpd/select within ${timeoutMs}ms`)),
        timeoutMs,
      );
      const decoder = new JsonLineDecoder({
        maxLineBytes: this.options.maxLineBytes ?? CLIENT_DEFAULTS.maxLineBytes,
        onValue: (value) => {
          const msg = value as JsonRpcMessage & { id?: unknown; error?: JsonRpcErrorObject };
          if (selecting) {
            if (msg && typeof msg === "object" && msg.id === selectId) {
              selecting = false;
              clearTimeout(timer);
              if (msg.error) {
                fail(fromWireError(msg.error));
                return;
              }
              settled = true;
              this.olderDaemon = !servesModern((msg as { result?: unknown }).result);
              resolve();
              for (const m of early.splice(0)) this.deliver(m);
            } else early.push(msg);
            return;
          }
          this.deliver(msg);
        },
        onError: (err) => this.onerror?.(err),
      });
      socket.on("data", (chunk: Buffer) => decoder.push(chunk));
      socket.on("end", () => decoder.end());
      socket.on("error", (err) => {
        if (settled) this.onerror?.(err);
      });
      socket.once("close", () => {
        fail(new ConnectionLostError("mcpd closed the connection during mcpd/select"));
        this.fireClose();
      });
      const params: SelectParams = {};
      if (this.options.server !== undefined) params.server = this.options.server;
      if (this.options.profile !== undefined) params.profile = this.options.profile;
      if (this.options.tools !== undefined) params.tools = this.options.tools;
      if (this.options.events) params.events = true;
      socket.write(encodeLine({ jsonrpc: "2.0", id: selectId, method: McpdSelect.method, params }));
    });
  }

  private deliver(message: JsonRpcMessage): void {
    try {
      this.onmessage?.(message);
    } catch (err) {
      this.onerror?.(err as Error);
    }
  }

  private fireClose(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
}

async function retryOpen(socketPath: string, deadline: number): Promise<net.Socket> {
  let delay = 50;
  for (;;) {
    try {
      return await openDaemonSocket(socketPath, Math.max(1, deadline - Date.now()));
    } catch (err) {
      // Only "not up yet" is worth waiting for; an untrusted socket stays untrusted.
      if (!(err instanceof McpdError) || err.code !== "MCPD_DAEMON_UNAVAILABLE" || Date.now() + delay >= deadline) throw err;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 500);
    }
  }
}
