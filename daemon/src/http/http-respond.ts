import type { IncomingMessage, ServerResponse } from "node:http";
import { MessageTooLargeError, WireCode, classify, type McpdError, type McpdErrorCode } from "@mcpd/protocol";

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
 * Reads a request body of at most `limit` bytes (a declared `Content-Length` over it is refused before
 * anything is read; a body that grows past it is cut off).
 * @throws MessageTooLargeError (MCPD_MESSAGE_TOO_LARGE); the stream's error when the client goes away.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(new MessageTooLargeError(declared, limit, "Request body"));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.off("data", onData);
        req.resume();
        reject(new MessageTooLargeError(size, limit, "Request body"));
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.once("end", () => resolve(Buffer.concat(chunks, size)));
    req.once("error", reject);
    req.once("close", () => reject(new Error("request closed before its body was read")));
  });
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

/** A POST's JSON-RPC content: its messages, and whether they came as a batch. */
export interface PostedMessages {
  messages: unknown[];
  batch: boolean;
}

/**
 * Reads a POST's body (at most `maxBodyBytes`) as one JSON-RPC message or a batch of them. Anything else
 * is answered here, and undefined returned: 413 past the size, 400 for JSON that does not parse
 * (-32700), an empty batch, or a value that is not a JSON-RPC 2.0 message; nothing when the client went
 * away mid-body.
 */
export async function readMessages(req: IncomingMessage, res: ServerResponse, maxBodyBytes: number): Promise<PostedMessages | undefined> {
  let body: Buffer;
  try {
    body = await readBody(req, maxBodyBytes);
  } catch (err) {
    const e = err as McpdError;
    if (e.code === "MCPD_MESSAGE_TOO_LARGE") sendError(res, 413, WireCode.MessageTooLarge, e.message, e.code);
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch (err) {
    sendError(res, 400, WireCode.ParseError, `Parse error: ${(err as Error).message}`, "MCPD_PARSE_ERROR");
    return undefined;
  }
  const batch = Array.isArray(parsed);
  const messages: unknown[] = batch ? (parsed as unknown[]) : [parsed];
  const why =
    messages.length === 0
      ? "Invalid Request: an empty batch"
      : messages.some((m) => classify(m) === "invalid")
        ? "Invalid Request: not a JSON-RPC 2.0 message"
        : undefined;
  if (why) {
    sendError(res, 400, WireCode.InvalidRequest, why, "MCPD_PROTOCOL_VIOLATION");
    return undefined;
  }
  return { messages, batch };
}
