/**
 * A WebSocket upgrade the server answered with a plain HTTP status, turned into the {@link HttpError} it
 * stands for: the status, the auth headers, and a preview of the body.
 */
import type { IncomingMessage } from "node:http";
import { HttpError, PROTOCOL_DEFAULTS } from "@mcpd/protocol";

/**
 * Reads the start of `res`'s body (at most `PROTOCOL_DEFAULTS.previewBytes`) and calls `onRefused` once
 * with the error, when that much arrived or the response ended, closed or failed.
 */
export function readRefusedUpgrade(res: IncomingMessage, safeUrl: string, onRefused: (error: HttpError) => void): void {
  const status = res.statusCode ?? 0;
  const limit = PROTOCOL_DEFAULTS.previewBytes;
  const chunks: Buffer[] = [];
  let size = 0;
  let done = false;
  const finish = (): void => {
    if (done) return;
    done = true;
    const body = Buffer.concat(chunks).subarray(0, limit).toString("utf8").trim() || res.statusMessage || "";
    const error = new HttpError(status, body, {
      wwwAuthenticate: headerValue(res.headers["www-authenticate"]),
      mcpAuthServer: headerValue(res.headers["mcp-auth-server"]),
    });
    error.message = `WebSocket upgrade to ${safeUrl} refused: ${error.message}`;
    onRefused(error);
  };
  res.on("data", (chunk: Buffer) => {
    if (size < limit) chunks.push(chunk);
    size += chunk.length;
    if (size >= limit) finish();
  });
  res.on("end", finish);
  res.on("close", finish);
  res.on("error", finish);
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(", ") : value;
}
