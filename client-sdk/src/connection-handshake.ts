/**
 * One new connection of a session: the daemon's socket opened and the handshake done on it
 * (`mcpd/select` and `initialize` in one write, `notifications/initialized`, then the session's own
 * step), all within one connect deadline, and the errors a failed attempt is reported with.
 */
import {
  ConnectionLostError,
  McpdError,
  McpdSelect,
  RequestTimeoutError,
  type InitializeResult,
  type JsonObject,
  type Logger,
  type RequestId,
  type SelectParams,
} from "@mcpd/protocol/core";
import { hungUpError, openDaemonSocket, START_HINT, stuckDaemonError } from "./daemon-socket.js";
import { SocketConnection, type SocketConnectionLimits } from "./socket-connection.js";

/** What a handshake sends, and whom the new connection tells what the daemon sends it. */
export interface HandshakeOptions extends SocketConnectionLimits {
  socketPath: string;
  /** Params of `mcpd/select`, sent first on every connection. */
  select: SelectParams;
  /** Params of `initialize`, asked for at every handshake (capabilities may have changed). */
  initializeParams: () => JsonObject;
  onNotification(method: string, params: JsonObject | undefined): void;
  onRequest(connection: SocketConnection, id: RequestId, method: string, params: JsonObject | undefined): void;
  /** Runs on each new connection after `notifications/initialized`, before calls flow (re-subscribe here). */
  afterHandshake(connection: SocketConnection, timeoutMs: number): Promise<void>;
}

/**
 * Opens a connection to the daemon and performs the handshake within `connectTimeoutMs`; `onClose`
 * hears when the connection closes later.
 * @throws `MCPD_DAEMON_UNAVAILABLE` (no socket, refused, or no answer to the handshake in time), the
 * daemon's handshake error, or its reason for closing the connection (e.g. `MCPD_TOO_MANY_CONNECTIONS`).
 */
export async function connectWithHandshake(
  o: HandshakeOptions,
  connectTimeoutMs: number,
  logger: Logger,
  onClose: (connection: SocketConnection, error: ConnectionLostError) => void,
): Promise<{ connection: SocketConnection; initializeResult: InitializeResult }> {
  const deadline = Date.now() + connectTimeoutMs;
  const left = (): number => Math.max(1, deadline - Date.now());
  const socket = await openDaemonSocket(o.socketPath, left());
  const conn: SocketConnection = new SocketConnection(
    socket,
    {
      onNotification: (method, params) => o.onNotification(method, params),
      onRequest: (id, method, params) => o.onRequest(conn, id, method, params),
      onClose: (error) => onClose(conn, error),
    },
    o,
    logger,
  );
  let answered = false;
  try {
    // Both at once, one round trip: the daemon handles a connection's messages in order, so it answers
    // `initialize` in the view `mcpd/select` chose. When the select fails, its error is the one thrown.
    const selected = conn.request(McpdSelect.method, { ...o.select }, { timeout: left() });
    const initialized = conn.request("initialize", o.initializeParams(), { timeout: left() });
    initialized.catch(() => {}); // when the select fails, this one's failure says nothing more
    await selected;
    const init = await initialized;
    answered = true;
    conn.notify("notifications/initialized");
    await o.afterHandshake(conn, left());
    if (conn.closed) throw new ConnectionLostError("Connection to mcpd lost during the handshake");
    return { connection: conn, initializeResult: init as unknown as InitializeResult };
  } catch (err) {
    void conn.close();
    // It accepted but did not answer the handshake in time: stopped or stuck, as good as not there.
    if (!answered && err instanceof RequestTimeoutError) throw stuckDaemonError(o.socketPath, connectTimeoutMs, err);
    if (err instanceof McpdError && err.code === "MCPD_CONNECTION_LOST") {
      // The daemon said why it closed the connection (too many connections, ...): that reason, not
      // "unavailable", since it is running and starting another one would not help.
      if (err.cause instanceof McpdError) throw err.cause;
      throw hungUpError(START_HINT, err);
    }
    throw err;
  }
}
