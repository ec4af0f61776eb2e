import { connect, McpdError, resolvePaths, type DaemonStatus, type McpdClient } from "@mcpd/client";
import { CliError, ExitCode } from "./args.js";
import type { CliContext } from "./context.js";
import { VERSION } from "../version.js";

/** Options of {@link openClient}. */
export interface OpenClientOptions {
  /** Deadline of connecting plus the handshake, in ms. Default 5000. */
  connectTimeoutMs?: number;
  /** Deadline of each request, in ms. Default: the SDK's. */
  timeoutMs?: number;
}

/** True for the SDK's "no daemon on that socket" error. */
export function isDaemonUnavailable(err: unknown): boolean {
  return err instanceof McpdError && err.code === "MCPD_DAEMON_UNAVAILABLE";
}

/** True for the SDK's refusal of a socket another user could have made (`MCPD_UNTRUSTED_SOCKET`). */
export function isUntrustedSocket(err: unknown): boolean {
  return err instanceof McpdError && err.code === "MCPD_UNTRUSTED_SOCKET";
}

/**
 * Connects to the running daemon through the client SDK (never starting it, never reconnecting: a CLI
 * command is one short conversation). The connection is a control connection: the CLI is the operator.
 * @throws CliError with exit code 3 (`ExitCode.NotRunning`) when the daemon does not answer;
 * UntrustedSocketError (`MCPD_UNTRUSTED_SOCKET`, exit 1) when another user could have made the socket.
 */
export async function openClient(ctx: CliContext, options: OpenClientOptions = {}): Promise<McpdClient> {
  const socketPath = resolvePaths(ctx.env, { cwd: ctx.cwd }).socketPath;
  try {
    return await connect({
      socketPath,
      autostart: false,
      reconnect: false,
      env: ctx.env,
      clientInfo: { name: "mcpd-cli", version: VERSION },
      control: true,
      connectTimeout: options.connectTimeoutMs ?? 5_000,
      ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
    });
  } catch (err) {
    if (isDaemonUnavailable(err)) {
      throw new CliError(`mcpd is not running (no answer on ${socketPath}). Start it with 'mcpd start'.`, ExitCode.NotRunning);
    }
    throw err;
  }
}

/**
 * The daemon's full status. The CLI's connection is a control connection, so the daemon never restricts it.
 * @throws CliError when the answer is restricted all the same (the daemon did not take the connection as one).
 */
export async function fullStatus(client: McpdClient): Promise<DaemonStatus> {
  const status = await client.status();
  if (status.restricted)
    throw new CliError("mcpd answered with a restricted status: it did not take this connection as a control connection");
  return status;
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
