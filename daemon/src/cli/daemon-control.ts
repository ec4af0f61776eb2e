import { requestControl } from "@mcpd/client/once";
import { resolvePaths } from "@mcpd/client/paths";
import { McpdError, McpdStatus, type ControlMethod, type DaemonStatus } from "@mcpd/protocol/core";
import { CliError, ExitCode } from "./args.js";
import type { CliContext } from "./context.js";

/** True for the SDK's "no daemon on that socket" error. */
export function isDaemonUnavailable(err: unknown): boolean {
  return err instanceof McpdError && err.code === "MCPD_DAEMON_UNAVAILABLE";
}

/** True for the SDK's refusal of a socket another user could have made (`MCPD_UNTRUSTED_SOCKET`). */
export function isUntrustedSocket(err: unknown): boolean {
  return err instanceof McpdError && err.code === "MCPD_UNTRUSTED_SOCKET";
}

/** The CLI's "not running" error (exit code 3) for a daemon that does not answer on `socketPath`. */
export function notRunningError(socketPath: string): CliError {
  return new CliError(`mcpd is not running (no answer on ${socketPath}). Start it with 'mcpd start'.`, ExitCode.NotRunning);
}

/** The socket the CLI talks to, from its environment. */
export function cliSocketPath(ctx: CliContext): string {
  return resolvePaths(ctx.env, { cwd: ctx.cwd }).socketPath;
}

/**
 * Asks the running daemon one control request on a control connection of its own (the client SDK's
 * `requestControl`: select and request in one write, one round trip, no session), never starting it.
 * Most commands ask one thing, and every one of them is paid at the start of a process.
 * @param timeoutMs deadline of the whole exchange, in ms (default: the SDK's request deadline).
 * @throws CliError with exit code 3 (`ExitCode.NotRunning`) when the daemon does not answer;
 * UntrustedSocketError (`MCPD_UNTRUSTED_SOCKET`, exit 1) when another user could have made the socket;
 * the daemon's error otherwise.
 */
export async function askDaemon<P, R>(ctx: CliContext, method: ControlMethod<string, P, R>, params?: P, timeoutMs?: number): Promise<R> {
  const socketPath = cliSocketPath(ctx);
  try {
    return await requestControl(method, params, { socketPath, control: true, ...(timeoutMs !== undefined ? { timeout: timeoutMs } : {}) });
  } catch (err) {
    if (isDaemonUnavailable(err)) throw notRunningError(socketPath);
    throw err;
  }
}

/**
 * The daemon's full status. The CLI's connection is a control connection, so the daemon never restricts it.
 * @throws CliError when the answer is restricted all the same (the daemon did not take the connection as one).
 */
export async function fullStatus(ctx: CliContext, timeoutMs?: number): Promise<DaemonStatus> {
  const status = await askDaemon(ctx, McpdStatus, undefined, timeoutMs);
  if (status.restricted)
    throw new CliError("mcpd answered with a restricted status: it did not take this connection as a control connection");
  return status;
}
