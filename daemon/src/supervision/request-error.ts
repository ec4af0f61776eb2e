import { McpdError, TransportClosedError, type ServerState } from "@mcpd/protocol";

/**
 * Makes a failed request's error clear to the caller. A session mcpd ended on purpose (health restart,
 * restart, disable, reload) closes without a reason of its own: the server's state says why. A network
 * error a transport let through raw (undici's `UND_ERR_SOCKET`, `ECONNRESET`, ...) would reach the client
 * as a bare -32603 "other side closed": it becomes TransportClosedError (-32062) naming the server and code.
 * Anything else is returned as it is.
 */
export function clarifyRequestError(err: unknown, server: { name: string; state: ServerState; stateReason: string }): unknown {
  if (err instanceof TransportClosedError && err.reason === undefined)
    return new TransportClosedError(`${server.state}: ${server.stateReason}`);
  const code = (err as { code?: unknown } | undefined)?.code;
  if (err instanceof Error && !(err instanceof McpdError) && err.name !== "AbortError" && typeof code === "string") {
    return new TransportClosedError(`network error talking to "${server.name}": ${err.message} (${code})`, { cause: err });
  }
  return err;
}
