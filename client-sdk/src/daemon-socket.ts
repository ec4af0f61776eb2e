import net from "node:net";
import { DaemonUnavailableError, MAX_TIMER_MS } from "@mcpd/protocol/core";
import { checkSocketPath } from "./paths.js";
import { CLIENT_DEFAULTS } from "./defaults.js";
import { assertTrustedSocket } from "./socket-trust.js";

/** The hint every "daemon unavailable" error of a client that could autostart ends with. */
export const START_HINT = "Start it with `mcpd start` (or pass `autostart: true`).";

/** The same hint for a caller that never starts one (`requestControl`, `requestOnce`). */
export const NO_AUTOSTART_HINT = "Start it with `mcpd start`.";

/**
 * Opens a Unix-socket connection to the daemon.
 *
 * @param socketPath absolute path of the daemon's socket.
 * @param timeoutMs how long to wait for the connection to be accepted, in ms (from `MAX_TIMER_MS` on: no limit).
 * @param hint what every "unavailable" message ends with (default {@link START_HINT}).
 * @throws DaemonUnavailableError (`MCPD_DAEMON_UNAVAILABLE`) when the socket is missing, refuses, is not
 * accessible, is too long for the platform, or does not accept within `timeoutMs`. The message names the
 * path and ends with a hint to run `mcpd start`.
 * @throws UntrustedSocketError (`MCPD_UNTRUSTED_SOCKET`) before connecting when another user could have
 * made the socket (see `checkSocketTrust`): nothing is sent.
 */
export function openDaemonSocket(socketPath: string, timeoutMs: number, hint: string = START_HINT): Promise<net.Socket> {
  const tooLong = checkSocketPath(socketPath);
  if (tooLong) return Promise.reject(new DaemonUnavailableError(tooLong));
  try {
    assertTrustedSocket(socketPath);
  } catch (err) {
    return Promise.reject(err as Error);
  }
  return new Promise((resolve, reject) => {
    const socket = net.createConnection({ path: socketPath });
    const giveUp = (): void => {
      cleanup();
      socket.destroy();
      reject(new DaemonUnavailableError(`mcpd did not accept a connection on ${socketPath} within ${timeoutMs}ms. ${hint}`));
    };
    // A longer timer would fire at once (Node keeps at most MAX_TIMER_MS).
    const timer = timeoutMs < MAX_TIMER_MS ? setTimeout(giveUp, timeoutMs) : undefined;
    const onError = (err: NodeJS.ErrnoException): void => {
      cleanup();
      socket.destroy();
      reject(daemonUnavailable(socketPath, err, hint));
    };
    const onConnect = (): void => {
      cleanup();
      resolve(socket);
    };
    const cleanup = (): void => {
      clearTimeout(timer);
      socket.off("error", onError);
      socket.off("connect", onConnect);
    };
    socket.once("error", onError);
    socket.once("connect", onConnect);
  });
}

/**
 * The `MCPD_DAEMON_UNAVAILABLE` error for a daemon that accepted the connection on `socketPath` but did not
 * answer within `timeoutMs` (stopped, stuck): as good as not there, though starting another would not help.
 * `cause` is the timeout.
 */
export function stuckDaemonError(socketPath: string, timeoutMs: number, cause: Error): DaemonUnavailableError {
  return new DaemonUnavailableError(
    `mcpd accepted the connection on ${socketPath} but did not answer within ${timeoutMs} ms (stopped or stuck?)`,
    { cause },
  );
}

/** The `MCPD_DAEMON_UNAVAILABLE` error for a daemon that accepted and then hung up during the handshake: it is going away (shutdown) or restarting. */
export function hungUpError(hint: string, cause: Error | undefined): DaemonUnavailableError {
  return new DaemonUnavailableError(`mcpd closed the connection during the handshake. ${hint}`, { cause });
}

/** Builds the `MCPD_DAEMON_UNAVAILABLE` error for a failed connect, naming the path and the OS reason. */
export function daemonUnavailable(socketPath: string, err: NodeJS.ErrnoException, hint: string = START_HINT): DaemonUnavailableError {
  let what: string;
  switch (err.code) {
    case "ENOENT":
      what = `mcpd is not running: no socket at ${socketPath}.`;
      break;
    case "ECONNREFUSED":
      what = `mcpd is not running: the socket at ${socketPath} refused the connection (left over from a daemon that exited?).`;
      break;
    case "EACCES":
    case "EPERM":
      what = `Permission denied connecting to mcpd at ${socketPath} (the socket belongs to another user?).`;
      break;
    case "ENOTSOCK":
      what = `${socketPath} is not a socket.`;
      break;
    default:
      what = `Cannot connect to mcpd at ${socketPath}: ${err.message}.`;
  }
  return new DaemonUnavailableError(`${what} ${hint}`, { cause: err });
}

/**
 * Ends `socket`: what was written is flushed first, then it is destroyed; after
 * {@link CLIENT_DEFAULTS.closeGraceMs} it is destroyed anyway (a daemon that stopped reading never takes
 * the rest, and a socket still ending keeps the process alive). `then` runs once it is closed.
 */
export function endSocket(socket: net.Socket, then?: () => void): void {
  if (socket.destroyed) {
    then?.();
    return;
  }
  const drop = setTimeout(() => socket.destroy(), CLIENT_DEFAULTS.closeGraceMs);
  drop.unref();
  socket.once("close", () => {
    clearTimeout(drop);
    then?.();
  });
  socket.end(() => socket.destroy());
}
