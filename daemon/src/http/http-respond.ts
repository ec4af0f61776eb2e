import type { IncomingMessage, ServerResponse } from "node:http";
import { WireCode, type McpdErrorCode } from "@mcpd/protocol";

/**
 * Answers an HTTP request with a status and a JSON-RPC error body (what MCP clients show their users):
 * `message` says what was wrong; `mcpdCode` is the stable code for scripts.
 */
export function sendError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  mcpdCode: McpdErrorCode,
  headers?: Record<string, string>,
): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  const body = JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message, data: { mcpdCode } } });
  res.writeHead(status, { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

/**
 * Calls `fn` once the client can no longer get `res`: at its `close`, or when its connection closes while
 * it still waits its turn behind an earlier response (HTTP/1.1 pipelining), which gets no `close` at all.
 */
export function onGone(res: ServerResponse, fn: () => void): void {
  const socket = res.req.socket;
  let called = false;
  const gone = (): void => {
    if (called) return;
    called = true;
    socket.off("close", gone);
    fn();
  };
  res.once("close", gone);
  if (socket.destroyed) queueMicrotask(gone);
  else socket.once("close", gone);
}

/**
 * Whether the client of `res` has gone away: its connection is closed, or it ended its side (Node's server
 * takes a client's end as its going away, and ends the connection).
 */
export function clientGone(res: ServerResponse): boolean {
  const socket = res.req.socket;
  return res.destroyed || socket.destroyed || !socket.writable || socket.readableEnded;
}

/**
 * Calls `fn` two turns of the event loop from now: a hang-up that arrived with a request (its end, or a
 * reset, right behind its bytes) has been read by then. libuv reads a connection's end in the turn after
 * the data before it, so one turn is not enough.
 */
export function afterPendingHangUp(fn: () => void): void {
  setImmediate(() => setImmediate(fn));
}

/** Whether an `Accept` header accepts `type` (`*` and `type/*` ranges count; no header accepts anything). */
export function accepts(header: string | undefined, type: string): boolean {
  if (header === undefined || header.trim() === "") return true;
  const [major] = type.split("/");
  return header.split(",").some((part) => {
    const range = (part.split(";")[0] ?? "").trim().toLowerCase();
    return range === type || range === "*/*" || range === `${major}/*`;
  });
}

/**
 * For a GET that opens an SSE stream: answers 406 unless the client accepts `text/event-stream`, and
 * returns whether the request may go on. `headerRequired`: a missing `Accept` is refused too (Streamable
 * HTTP requires one; legacy HTTP+SSE clients may send none).
 */
export function acceptsSse(req: IncomingMessage, res: ServerResponse, headerRequired: boolean): boolean {
  const header = req.headers.accept;
  if (accepts(header, "text/event-stream") && (header !== undefined || !headerRequired)) return true;
  sendError(
    res,
    406,
    WireCode.InvalidRequest,
    "Not Acceptable: GET opens an SSE stream; accept text/event-stream",
    "MCPD_PROTOCOL_VIOLATION",
  );
  return false;
}
