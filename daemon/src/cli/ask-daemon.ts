import { requestControl } from "@mcpd/client/once";
import { resolvePaths } from "@mcpd/client/paths";
import { McpdError, McpdStatus, RequestTimeoutError, type ControlMethod, type DaemonStatus } from "@mcpd/protocol/core";
import { CliError, ExitCode } from "./args.js";
import { CLI_DEFAULTS, envTimeoutMs } from "./cli-defaults.js";
import type { CliContext } from "./context.js";

/** True for the SDK's "no daemon on that socket" error. */
export function isDaemonUnavailable(err: unknown): boolean {
  return err instanceof McpdError && err.code === "MCPD_DAEMON_UNAVAILABLE";
}

/** True for the SDK's refusal of a socket another user could have made (`MCPD_UNTRUSTED_SOCKET`). */
export function isUntrustedSocket(err: unknown): boolean {
  return err instanceof McpdError && err.code === "MCPD_UNTRUSTED_SOCKET";
}

/**
 * The CLI's "not running" error (exit code 3) for `err`, the SDK's `MCPD_DAEMON_UNAVAILABLE` on `socketPath`:
 * its own words when a daemon accepted but did not answer (stopped or stuck: starting one would not help),
 * else that none answers.
 */
export function notRunningError(socketPath: string, err?: unknown): CliError {
  if (err instanceof McpdError && err.cause instanceof RequestTimeoutError) return new CliError(err.message, ExitCode.NotRunning);
  return new CliError(`mcpd is not running (no answer on ${socketPath}). Start it with 'mcpd start'.`, ExitCode.NotRunning);
}

/**
 * How long a command gives the daemon to accept its connection and answer its first message, in ms:
 * `MCPD_CONNECT_TIMEOUT_MS` (as `mcpd connect`), else `CLI_DEFAULTS.commandConnectTimeoutMs`.
 */
export function commandConnectTimeoutMs(ctx: CliContext): number {
  return envTimeoutMs(ctx.env, "MCPD_CONNECT_TIMEOUT_MS", CLI_DEFAULTS.commandConnectTimeoutMs);
}

/** The socket the CLI talks to, from its environment. */
export function cliSocketPath(ctx: CliContext): string {
  return resolvePaths(ctx.env, { cwd: ctx.cwd }).socketPath;
}

/** Deadlines of {@link askDaemon}, in ms. */
export interface AskOptions {
  /** Connecting and the daemon's first answer. Default {@link commandConnectTimeoutMs}. */
  connectTimeoutMs?: number;
  /** The request, once sent. Default: the SDK's (60 s). */
  timeoutMs?: number;
}

/**
 * Asks the running daemon one control request on a control connection of its own (the client SDK's
 * `requestControl`: select and request in one write, one round trip, no session), never starting it.
 * Most commands ask one thing, and every one of them is paid at the start of a process.
 * @throws CliError with exit code 3 (`ExitCode.NotRunning`) when the daemon does not answer;
 * UntrustedSocketError (`MCPD_UNTRUSTED_SOCKET`, exit 1) when another user could have made the socket;
 * the daemon's error otherwise.
 */
export async function askDaemon<P, R>(
  ctx: CliContext,
  method: ControlMethod<string, P, R>,
  params?: P,
  options: AskOptions = {},
): Promise<R> {
  const socketPath = cliSocketPath(ctx);
  return reportNotRunning(socketPath, () =>
    requestControl(method, params, {
      socketPath,
      control: true,
      connectTimeout: options.connectTimeoutMs ?? commandConnectTimeoutMs(ctx),
      ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
    }),
  );
}

/** Runs `talk` (with the daemon on `socketPath`); the SDK's `MCPD_DAEMON_UNAVAILABLE` becomes the CLI's "not running" (exit 3). */
export async function reportNotRunning<T>(socketPath: string, talk: () => Promise<T>): Promise<T> {
  try {
    return await talk();
  } catch (err) {
    if (isDaemonUnavailable(err)) throw notRunningError(socketPath, err);
    throw err;
  }
}

/**
 * The daemon's full status. The CLI's connection is a control connection, so the daemon never restricts it.
 * @throws CliError when the answer is restricted all the same (the daemon did not take the connection as one).
 */
export async function fullStatus(ctx: CliContext, options: AskOptions = {}): Promise<DaemonStatus> {
  const status = await askDaemon(ctx, McpdStatus, undefined, options);
  if (status.restricted)
    throw new CliError("mcpd answered with a restricted status: it did not take this connection as a control connection");
  return status;
}
