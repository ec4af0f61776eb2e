import { silentLogger } from "@mcpd/protocol";
import { TRANSPORT_DEFAULTS } from "../defaults.js";
import { PipeTransport } from "../pipe-transport.js";
import type { StdioServerConfig } from "../transport.js";
import { StdioPipe } from "./stdio-pipe.js";
import { validateStdioConfig, type StdioTransportOptions } from "./stdio-config.js";

export type { StdioTransportOptions } from "./stdio-config.js";

/**
 * MCP over a child process's stdio: one JSON-RPC message per line on stdin/stdout, stderr kept as logs.
 *
 * The child is spawned without a shell (arguments are never interpreted) as the leader of its own
 * process group; close() ends the whole group (stdin EOF, then SIGTERM, then SIGKILL) so wrappers such as
 * `npx` never leave the real server behind. Requests use integer ids from 1. Lines that are not JSON-RPC
 * are skipped and counted. Nothing is retried or respawned here: on exit every pending request fails with
 * `TransportClosedError` (code MCPD_TRANSPORT_CLOSED) and `onClose` fires once; the manager decides.
 * The requests' bookkeeping is the {@link JsonRpcPeer}'s; the process and its pipes are {@link StdioPipe}'s.
 *
 * Errors: connect() -> SpawnError (MCPD_SPAWN_FAILED), ConfigError; request() -> RequestTimeoutError
 * (MCPD_REQUEST_TIMEOUT), the caller's `signal.reason`, McpRemoteError (MCPD_MCP_ERROR),
 * QueueFullError (MCPD_QUEUE_FULL), MessageTooLargeError (MCPD_MESSAGE_TOO_LARGE), TransportClosedError.
 */
export class StdioTransport extends PipeTransport<StdioPipe> {
  constructor(config: StdioServerConfig, options: StdioTransportOptions = {}) {
    validateStdioConfig(config);
    const log = options.logger ?? silentLogger;
    super(log, config.timeout ?? TRANSPORT_DEFAULTS.requestTimeoutMs, (events) => new StdioPipe(config, options, events, log));
  }

  /** The child's pid once spawned. */
  get pid(): number | undefined {
    return this.pipe.pid;
  }

  /** The child's process group id (= its pid: it is spawned as a group leader). POSIX only. */
  get pgid(): number | undefined {
    return this.pipe.pgid;
  }

  /** Bytes written but not yet taken by the child (ours waiting for drain + the stream's buffer). */
  get pendingWriteBytes(): number {
    return this.pipe.pendingWriteBytes;
  }

  /** Bytes of an incomplete stdout line held by the decoder (bounded by maxLineBytes). */
  get readBufferedBytes(): number {
    return this.pipe.readBufferedBytes;
  }

  /** The last `n` stderr lines (default: all kept), oldest first. */
  stderrTail(n?: number): string[] {
    return this.pipe.stderrTail(n);
  }

  /**
   * Spawns the server. Resolves once the process exists (the MCP handshake is the caller's job).
   * Rejects with SpawnError naming the command when it cannot start (missing, not executable, bad cwd);
   * nothing is left running then. A transport connects once; after close() use a new one.
   */
  override connect(): Promise<void> {
    return this.pipe.connect();
  }

  /**
   * Ends the server: fails pending requests with TransportClosedError, closes stdin, waits
   * `closeGraceMs`, SIGTERMs the process group, waits again, SIGKILLs it, and also ends any of the
   * server's children still in the group. Resolves once the process is gone and its output streams are
   * closed; `onClose` fires just before. Idempotent: every call shares one promise.
   */
  override close(): Promise<void> {
    return this.pipe.close();
  }
}
