import { LATEST_PROTOCOL_VERSION, McpdSelect, type Implementation, type JsonObject, type SelectParams } from "@mcpd/protocol/core";
import { openDaemonSocket } from "./daemon-socket.js";
import { CLIENT_DEFAULTS } from "./defaults.js";
import { resolvePaths } from "./paths.js";
import { routeToServer } from "./server-routing.js";
import { SocketConnection, type RequestOptions } from "./socket-connection.js";

/** Options of {@link requestOnce}: where, as whom, and the request's own options. Durations in ms. */
export interface RequestOnceOptions extends RequestOptions {
  /** The daemon's socket. Default: `resolvePaths(env).socketPath`. */
  socketPath?: string;
  /** Environment the socket path is resolved from. Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The server the request is routed to (`_meta["mcpd/server"]`); default: the aggregate view routes it. */
  server?: string;
  /** Sent in `initialize`. Default `{ name: "@mcpd/client", version: "0.1.0" }`. */
  clientInfo?: Implementation;
  /** A control connection (see `McpdClientOptions.control`). Default `false`. */
  control?: boolean;
  /** Deadline of connecting and the handshake, in ms. Default {@link CLIENT_DEFAULTS.connectTimeoutMs}. */
  connectTimeout?: number;
}

/**
 * One MCP request on a connection of its own: it connects, sends the handshake (`mcpd/select`,
 * `initialize`, `notifications/initialized`) and the request together, in one write, and resolves with
 * the answer, closing the connection. One round trip instead of a session's two; progress, `signal` and
 * `timeout` work as for a session's request. For a command that makes one call (`mcpd call`); for several,
 * or server notifications, use {@link connect}.
 * @throws what `connect()` and `McpdClient.request` throw; when the handshake fails (an unknown `server`
 * is the request's own error), its error.
 */
export async function requestOnce(method: string, params: JsonObject | undefined, options: RequestOnceOptions = {}): Promise<JsonObject> {
  const routed = routeToServer(options.server, undefined, params);
  const socketPath = options.socketPath ?? resolvePaths(options.env ?? process.env).socketPath;
  const connectTimeout = options.connectTimeout ?? CLIENT_DEFAULTS.connectTimeoutMs;
  const socket = await openDaemonSocket(socketPath, connectTimeout);
  const conn: SocketConnection = new SocketConnection(socket, {
    onNotification: () => {},
    onRequest: (id, m) => conn.respondError(id, { code: -32601, message: `Method not found: ${m.slice(0, 100)}` }),
    onClose: () => {},
  });
  const select: SelectParams = options.control === true ? { control: true } : {};
  // The daemon handles a connection's messages in order: the request is answered after the handshake.
  const selected = conn.request(McpdSelect.method, select as JsonObject, { timeout: connectTimeout });
  const initialized = conn.request(
    "initialize",
    {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: (options.clientInfo ?? { name: "@mcpd/client", version: "0.1.0" }) as unknown as JsonObject,
    },
    { timeout: connectTimeout },
  );
  conn.notify("notifications/initialized");
  const { socketPath: _s, env: _e, server: _v, clientInfo: _c, control: _k, connectTimeout: _t, ...requestOptions } = options;
  const answered = conn.request(method, routed, requestOptions);
  // The answers may come in any order (the daemon answers `initialize` after the request, when that one
  // fails at once): each is awaited below, in the order that says most, none is left unhandled meanwhile.
  initialized.catch(() => {});
  answered.catch(() => {});
  try {
    await selected;
    await initialized;
    return await answered;
  } finally {
    // Not waited for: what was written is flushed first, and the caller has its answer.
    void conn.close();
  }
}
