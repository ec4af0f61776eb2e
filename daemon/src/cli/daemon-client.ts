import { connect, type McpdClient } from "@mcpd/client";
import type { CliContext } from "./context.js";
import { cliSocketPath, commandConnectTimeoutMs, reportNotRunning } from "./ask-daemon.js";
import { VERSION } from "../version.js";

/** Options of {@link openClient}. */
export interface OpenClientOptions {
  /** Deadline of connecting plus the handshake, in ms. Default: `commandConnectTimeoutMs`. */
  connectTimeoutMs?: number;
  /** Deadline of each request, in ms. Default: the SDK's. */
  timeoutMs?: number;
}

/**
 * Connects to the running daemon through the client SDK (never starting it, never reconnecting: a CLI
 * command is one short conversation), for the commands that ask more than one thing or make an MCP call;
 * one control request is `askDaemon`'s. The connection is a control connection: the CLI is the operator.
 * @throws CliError with exit code 3 (`ExitCode.NotRunning`) when the daemon does not answer;
 * UntrustedSocketError (`MCPD_UNTRUSTED_SOCKET`, exit 1) when another user could have made the socket.
 */
export async function openClient(ctx: CliContext, options: OpenClientOptions = {}): Promise<McpdClient> {
  const socketPath = cliSocketPath(ctx);
  return reportNotRunning(socketPath, () =>
    connect({
      socketPath,
      autostart: false,
      reconnect: false,
      env: ctx.env,
      clientInfo: { name: "mcpd-cli", version: VERSION },
      control: true,
      connectTimeout: options.connectTimeoutMs ?? commandConnectTimeoutMs(ctx),
      ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
    }),
  );
}

/**
 * Runs `fn` with a connected client and closes the client afterwards, whatever happens. The close is not
 * waited for: the answer is in hand, and the socket's ending (what was written is flushed first) runs
 * while the command prints; the process exits once it has closed.
 */
export async function withClient<T>(ctx: CliContext, fn: (client: McpdClient) => Promise<T>, options: OpenClientOptions = {}): Promise<T> {
  const client = await openClient(ctx, options);
  try {
    return await fn(client);
  } finally {
    client.close().catch(() => {});
  }
}
