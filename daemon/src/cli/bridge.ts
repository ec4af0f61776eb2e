import { connect, type Socket } from "node:net";
// The lean entries: `mcpd connect` loads this file once per agent session, and starts within a few ms of Node.
import { assertTrustedSocket } from "@mcpd/client/paths";
import {
  DaemonUnavailableError,
  JsonLineDecoder,
  McpdSelect,
  OLDER_DAEMON_NOTICE,
  encodeLine,
  isObject,
  olderDaemonAnswer,
  servesModern,
  type SelectParams,
} from "@mcpd/protocol/core";
import { BridgeInFlight } from "./bridge-in-flight.js";
import { CLI_DEFAULTS } from "./cli-defaults.js";
import { relayForOlderDaemon } from "./older-daemon-relay.js";
import type { ViewSelection } from "@mcpd/protocol";

export interface BridgeOptions extends ViewSelection {
  /** Transparent view of this server; absent: the aggregate view. */
  server?: string;
  socketPath: string;
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
  /**
   * How long the daemon has to answer `mcpd/select` once the socket accepted the connection, in ms
   * (default `CLI_DEFAULTS.connectTimeoutMs`, 10000). A stopped or stuck daemon's socket still accepts.
   */
  selectTimeoutMs?: number;
}

const SELECT_ID = "mcpd-connect-select";

/**
 * `mcpd connect`: pipes an MCP client's stdio onto the daemon's socket, so any MCP client can use mcpd
 * by running `mcpd connect [SERVER]` as its server command. It first sends its own `mcpd/select` (that
 * server's transparent view when SERVER is given, else the aggregate view; the `profile` and `tools`
 * selection when given) and swallows the answer, so the connection is never a control connection; after
 * that bytes flow untouched in both directions. A refused select (an unknown server or profile) or a
 * refused connection (the daemon's connection cap) is written to stderr and ends the bridge with exit code 1.
 * When the daemon goes away while the client's stdin is still open, every request of the client still
 * in flight is answered with -32062 `MCPD_CONNECTION_LOST`, a one-line reason goes to stderr, and the exit
 * code is 1. Returns the exit code: 0 when the client ends the session (stdin closed), 1 on errors.
 * @throws DaemonUnavailableError (MCPD_DAEMON_UNAVAILABLE) when the socket does not accept the connection,
 * or the daemon does not answer `mcpd/select` within `selectTimeoutMs` (nothing of stdin was read then);
 * UntrustedSocketError (MCPD_UNTRUSTED_SOCKET), before connecting, when another user could have made it.
 */
export function runBridge(opts: BridgeOptions): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    // The agent would see whatever tools and instructions the socket's owner chose: check who that is.
    assertTrustedSocket(opts.socketPath);
    const socket = connect(opts.socketPath);
    let connected = false;
    let exitCode = 0;
    let stdinEnded = false;
    let inFlight: BridgeInFlight | undefined;
    const selectTimeoutMs = opts.selectTimeoutMs ?? CLI_DEFAULTS.connectTimeoutMs;
    let selectTimer: NodeJS.Timeout | undefined;
    socket.once("error", (err: NodeJS.ErrnoException) => {
      if (!connected) return reject(unreachable(opts.socketPath, err));
      exitCode = 1;
    });
    socket.once("connect", () => {
      connected = true;
      // The bridge always speaks first, selecting the view itself: the agent's own messages are never the
      // connection's first, so nothing it sends can make the connection a control connection.
      let selected = false;
      const decoder = new JsonLineDecoder({
        onValue: (v) => {
          if (selected || !isObject(v)) return;
          // Before the select's answer only a refusal of the whole connection (id null) can come, such as
          // -32072 at the daemon's connection cap: the daemon closes the connection after it.
          const refused = v.id === null && isObject(v.error);
          if (v.id !== SELECT_ID && !refused) return;
          selected = true;
          clearTimeout(selectTimer);
          socket.off("data", onData);
          if (isObject(v.error)) {
            opts.stderr?.write(`mcpd connect: ${String(v.error.message)}\n`);
            exitCode = 1;
            socket.end();
            return;
          }
          inFlight = relay(socket, opts, !servesModern(v.result));
        },
      });
      // Read lines until the select answer; anything else before it cannot exist (the client has not spoken yet).
      const onData = (chunk: Buffer): void => decoder.push(chunk);
      socket.on("data", onData);
      socket.write(encodeLine({ jsonrpc: "2.0", id: SELECT_ID, method: McpdSelect.method, params: selectParams(opts) }));
      const endSocket = (): void => {
        stdinEnded = true;
        socket.end();
      };
      opts.stdin.on("end", endSocket);
      // Before the answer nothing of the client's was read or sent: the caller may start a daemon and retry.
      selectTimer = setTimeout(() => {
        connected = false;
        opts.stdin.off("end", endSocket);
        socket.destroy();
        reject(
          new DaemonUnavailableError(
            `mcpd did not answer on ${opts.socketPath} within ${selectTimeoutMs} ms (is it stopped or stuck? see 'mcpd status')`,
          ),
        );
      }, selectTimeoutMs);
    });
    socket.on("close", () => {
      clearTimeout(selectTimer);
      if (!connected) return;
      // The daemon went away (stopped, killed, or it closed this connection) while the client is still
      // there: answer what it waits for, say why on stderr, and fail, so that its host sees the server end.
      if (inFlight && !stdinEnded) {
        reportLost(inFlight, opts);
        exitCode = 1;
      }
      resolve(exitCode);
    });
  });
}

/** The bridge's `mcpd/select`: the view and selection it was given. */
function selectParams(opts: BridgeOptions): SelectParams {
  const params: SelectParams = {};
  if (opts.server !== undefined) params.server = opts.server;
  if (opts.profile !== undefined) params.profile = opts.profile;
  if (opts.tools !== undefined) params.tools = opts.tools;
  if (opts.toolSearch !== undefined) params.toolSearch = opts.toolSearch;
  return params;
}

/**
 * Relays bytes between the client and the daemon, untouched (`older`: a daemon of a release before MCP
 * 2026-07-28, whose client's 2026-era requests are answered here), with taps beside the pipe, never in it:
 * what the client still waits for when the daemon goes away.
 */
function relay(socket: Socket, opts: BridgeOptions, older: boolean): BridgeInFlight {
  if (older) opts.stderr?.write(`mcpd connect: ${OLDER_DAEMON_NOTICE}\n`);
  const tracker = new BridgeInFlight(older ? (m) => olderDaemonAnswer(m) !== undefined : undefined);
  opts.stdin.on("data", (chunk: Buffer) => tracker.client(chunk));
  socket.on("data", (chunk: Buffer) => tracker.daemon(chunk));
  if (older) relayForOlderDaemon(socket, opts.stdin, opts.stdout);
  else {
    socket.pipe(opts.stdout as NodeJS.WritableStream, { end: false });
    opts.stdin.pipe(socket);
  }
  return tracker;
}

/** The daemon went away while the client is still there: its requests in flight are answered, and why said on stderr. */
function reportLost(inFlight: BridgeInFlight, opts: BridgeOptions): void {
  const why = inFlight.lastRefusal ?? "the daemon closed the connection (it stopped or was killed)";
  const answered = inFlight.answerAll(opts.stdout, why);
  const calls = answered === 0 ? "" : ` (${answered === 1 ? "1 request" : `${answered} requests`} in flight answered with an error)`;
  opts.stderr?.write(`mcpd connect: lost the connection to mcpd: ${why}${calls}\n`);
}

/** The error of a socket that does not accept the bridge's connection. */
function unreachable(socketPath: string, err: NodeJS.ErrnoException): DaemonUnavailableError {
  return new DaemonUnavailableError(`mcpd is not reachable on ${socketPath} (${err.code ?? err.message}); run 'mcpd start'`, {
    cause: err,
  });
}
