import { WireCode, type Logger } from "@mcpd/protocol";

/**
 * The wire form of one outgoing message (`encode`: a JSON line for the socket, plain JSON by default). A message with no JSON form (nested too deep for
 * `JSON.stringify`, from a peer's pathological value) must not throw out of whichever callback is
 * sending it (that would end the daemon): a response becomes an internal error for its id, anything
 * else is dropped; both are logged.
 */
export function encodeOutgoing(message: object, log: Logger, encode: (value: unknown) => string = JSON.stringify): string | undefined {
  try {
    return encode(message);
  } catch (err) {
    const m = message as { id?: unknown; method?: unknown };
    const id = m.method === undefined && (typeof m.id === "string" || typeof m.id === "number") ? m.id : undefined;
    log.error({ err: (err as Error).message, id }, "outgoing message cannot be encoded as JSON");
    if (id === undefined) return undefined;
    return encode({
      jsonrpc: "2.0",
      id,
      error: { code: WireCode.InternalError, message: `Response cannot be encoded as JSON: ${(err as Error).message}` },
    });
  }
}
