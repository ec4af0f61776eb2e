import { SpawnError, silentLogger, type ClientCapabilities, type Logger } from "@mcpd/protocol";
import type { CloseInfo, MCPTransport, TransportConfig } from "@mcpd/transports";
import type { ResolvedServerConfig } from "../config/config-schema.js";
import type { EraChoice } from "./era-handshake.js";
import { UpstreamClient, type UpstreamRequestHandler } from "./upstream-client.js";
import type { ServerStderr } from "./server-stderr.js";

/** How a server's runs are made, and whom they tell about the processes they spawn. */
export interface ServerRunOptions {
  /** Makes the transport of one run; `server` is the whole config (its name and `auth` choose the OAuth provider). */
  createTransport: (config: TransportConfig, logger: Logger, server: ResolvedServerConfig) => MCPTransport;
  logger?: Logger;
  clientCapabilities?: ClientCapabilities;
  onChildStarted?: (pid: number) => void;
  onChildExited?: (pid: number) => void;
}

/**
 * One run of a server: the transport its config names and the MCP session over it ({@link client}).
 * The process the run spawns is reported when it starts (before the handshake) and when it ends; its
 * stderr joins the server's history when the run ends.
 */
export class ServerRun {
  readonly transport: MCPTransport;
  readonly client: UpstreamClient;
  /** The process spawned for this run, once spawned (stdio only). */
  pid: number | undefined;
  private readonly opts: ServerRunOptions;
  private readonly stderr: ServerStderr;

  /** `requestHandler` answers the server's sampling, elicitation and roots requests. */
  constructor(config: ResolvedServerConfig, options: ServerRunOptions, stderr: ServerStderr, requestHandler: UpstreamRequestHandler) {
    this.opts = options;
    this.stderr = stderr;
    const log = options.logger ?? silentLogger;
    const transport = options.createTransport(config.transport, log, config);
    this.transport = transport;
    const keepsStderr = stderr.runStarting(transport);
    this.client = new UpstreamClient(transport, {
      clientInfo: { name: "mcpd", version: "0.1.0" },
      capabilities: options.clientCapabilities ?? {},
      logger: log,
      initializeTimeoutMs: config.timeout,
    });
    this.client.requestHandler = requestHandler;
    this.client.on("close", (info: CloseInfo) => {
      if (this.pid !== undefined) options.onChildExited?.(this.pid);
      // The run's stderr joins the history, once: the close event fires exactly once per transport.
      if (keepsStderr) stderr.runEnded(transport, info, this.pid);
    });
  }

  /** Spawns or connects, then opens the MCP session in `choice`'s era. Rejects with why the start failed. */
  async open(choice: EraChoice): Promise<void> {
    // Spawn, and record the process, before the handshake: a daemon killed (-9) while a slow server
    // initializes (an npx cold start takes seconds) must find that process at its next start.
    await this.transport.connect();
    this.pid = this.transport.info().pid;
    if (this.pid !== undefined) this.opts.onChildStarted?.(this.pid);
    await this.client.connect(choice);
  }

  /** The run failed to start (`why`, from `err`): what happened is kept in the stderr history, and the transport is closed. */
  async abandon(err: unknown, why: string): Promise<void> {
    // Nothing ran, so no close event: the history still says what happened.
    if (err instanceof SpawnError) this.stderr.spawnFailed(this.transport, why);
    await this.transport.close().catch(() => {});
  }

  /**
   * The session is ready: over Streamable HTTP, opens the GET stream for server-initiated messages; from
   * now on the session's re-reads of its lists go `through` the server's concurrency limit (its handshake's
   * first listings did not: nothing else runs on a session before it is ready).
   */
  ready(through: (read: () => Promise<void>) => Promise<void>): void {
    (this.transport as { startSSEListener?: () => void }).startSSEListener?.();
    this.client.rereadsThrough = through;
  }
}
