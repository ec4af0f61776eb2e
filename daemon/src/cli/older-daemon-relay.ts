import type { Socket } from "node:net";
import { JsonLineDecoder, WireCode, encodeLine, olderDaemonAnswer } from "@mcpd/protocol/core";

/**
 * The bridge's relay to a daemon of a release before MCP 2026-07-28 (see daemon-eras.ts in the protocol
 * package): message by message instead of byte for byte, so that a 2026-era request of the client is
 * answered here (-32022, saying to restart the daemon) and its answer never lands inside a line of the
 * daemon's. Everything else passes through as the same JSON; a line that is not JSON gets the parse error
 * the daemon would send. Only such a daemon costs this: a current one gets the byte pipe.
 */
export function relayForOlderDaemon(socket: Socket, stdin: NodeJS.ReadableStream, stdout: NodeJS.WritableStream): void {
  // Bounded as the pipe is: a side that does not read pauses the other.
  let clientFull = false;
  let daemonFull = false;
  const toClient = (message: unknown): void => {
    if (stdout.write(encodeLine(message)) || clientFull) return;
    clientFull = true;
    socket.pause();
    stdout.once("drain", () => {
      clientFull = false;
      socket.resume();
    });
  };
  const toDaemon = (message: unknown): void => {
    if (socket.destroyed || socket.write(encodeLine(message)) || daemonFull) return;
    daemonFull = true;
    stdin.pause();
    socket.once("drain", () => {
      daemonFull = false;
      stdin.resume();
    });
  };
  const fromDaemon = new JsonLineDecoder({ onValue: toClient });
  socket.on("data", (chunk: Buffer) => fromDaemon.push(chunk));
  const fromClient = new JsonLineDecoder({
    onValue: (message) => {
      const answer = olderDaemonAnswer(message);
      if (answer !== undefined) toClient(answer);
      else toDaemon(message);
    },
    onError: (error) => toClient({ jsonrpc: "2.0", id: null, error: { code: WireCode.ParseError, message: error.message } }),
  });
  stdin.on("data", (chunk: Buffer | string) => fromClient.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk));
}
