import { connect } from "node:net";
import { assertTrustedSocket } from "@mcpd/client";
import {
  DaemonUnavailableError,
  JsonLineDecoder,
  McpdSelect,
  encodeLine,
  isObject,
  type SelectParams,
  type ViewSelection,
} from "@mcpd/protocol";

export interface BridgeOptions extends ViewSelection {
  /** Transparent view of this server; absent: the aggregate view. */
  server?: string;
  socketPath: string;
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
}

const SELECT_ID = "mcpd-connect-select";

/**
 * `mcpd connect`: pipes an MCP client's stdio onto the daemon's socket, so any MCP client can use mcpd
 * by running `mcpd connect [SERVER]` as its server command. It first sends its own `mcpd/select` (that
 * server's transparent view when SERVER is given, else the aggregate view; the `profile` and `tools`
 * selection when given) and swallows the answer, so the connection is never a control connection; after
 * that bytes flow untouched in both directions. A refused select (an unknown server or profile) is
 * written to stderr and ends the bridge with exit code 1.
 * Returns the exit code: 0 when either side ends normally, 1 on errors.
 * @throws DaemonUnavailableError (MCPD_DAEMON_UNAVAILABLE) when the socket does not answer;
 * UntrustedSocketError (MCPD_UNTRUSTED_SOCKET), before connecting, when another user could have made it.
 */
export function runBridge(opts: BridgeOptions): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    // The agent would see whatever tools and instructions the socket's owner chose: check who that is.
    assertTrustedSocket(opts.socketPath);
    const socket = connect(opts.socketPath);
    let connected = false;
    let exitCode = 0;
    socket.once("error", (err: NodeJS.ErrnoException) => {
      if (!connected) {
        reject(
          new DaemonUnavailableError(`mcpd is not reachable on ${opts.socketPath} (${err.code ?? err.message}); run 'mcpd start'`, {
            cause: err,
          }),
        );
        return;
      }
      exitCode = 1;
    });
    socket.once("connect", () => {
      connected = true;
      const startPiping = (): void => {
        socket.pipe(opts.stdout as NodeJS.WritableStream, { end: false });
        opts.stdin.pipe(socket);
      };
      // The bridge always speaks first, selecting the view itself: the agent's own messages are never the
      // connection's first, so nothing it sends can make the connection a control connection.
      let selected = false;
      const decoder = new JsonLineDecoder({
        onValue: (v) => {
          if (selected || !isObject(v) || v.id !== SELECT_ID) return;
          selected = true;
          socket.off("data", onData);
          if (isObject(v.error)) {
            opts.stderr?.write(`mcpd connect: ${String(v.error.message)}\n`);
            exitCode = 1;
            socket.end();
            return;
          }
          startPiping();
        },
      });
      // Read lines until the select answer; anything else before it cannot exist (the client has not spoken yet).
      const onData = (chunk: Buffer): void => decoder.push(chunk);
      socket.on("data", onData);
      const params: SelectParams = {};
      if (opts.server !== undefined) params.server = opts.server;
      if (opts.profile !== undefined) params.profile = opts.profile;
      if (opts.tools !== undefined) params.tools = opts.tools;
      socket.write(encodeLine({ jsonrpc: "2.0", id: SELECT_ID, method: McpdSelect.method, params }));
      opts.stdin.on("end", () => socket.end());
    });
    socket.on("close", () => {
      if (connected) resolve(exitCode);
    });
  });
}
