/**
 * Raw HTTP clients of the daemon's front end for the soak scripts: requests written by hand on a TCP
 * socket (a client that never reads, or never finishes its body, is exactly what they must be), and plain
 * `fetch` for the well-behaved ones. Plain JavaScript, run by node without a TypeScript step.
 */
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { until } from "./soak-daemon.mjs";

/** The front end of a daemon, from a control connection's `mcpd/status`: its origin, port and token. */
export async function frontOf(control) {
  const http = await until(
    async () => (await control.call("mcpd/status")).http?.url && (await control.call("mcpd/status")).http,
    "HTTP up",
  );
  const url = new URL(http.url);
  return { origin: url.origin, port: Number(url.port), token: readFileSync(http.tokenFile, "utf8").trim() };
}

const INIT = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "soak-http", version: "1" } };

/** POSTs one JSON-RPC message at `path` (in session `sid`, when given); resolves with the response, read. */
async function postMessage(front, path, message, sid) {
  const r = await fetch(`${front.origin}${path}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${front.token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(sid ? { "mcp-session-id": sid } : {}),
    },
    body: JSON.stringify(message),
  });
  await r.text();
  return r;
}

/** Opens a Streamable HTTP session at `path` as a client does (initialize, then notifications/initialized); returns its id. */
export async function openSession(front, path = "/mcp") {
  const r = await postMessage(front, path, { jsonrpc: "2.0", id: 0, method: "initialize", params: INIT });
  const sid = r.headers.get("mcp-session-id");
  if (r.status !== 200 || !sid) throw new Error(`initialize: HTTP ${r.status}`);
  await postMessage(front, path, { jsonrpc: "2.0", method: "notifications/initialized" }, sid);
  return sid;
}

/** Ends session `sid` (DELETE). */
export async function endSession(front, path, sid) {
  const r = await fetch(`${front.origin}${path}`, {
    method: "DELETE",
    headers: { authorization: `Bearer ${front.token}`, "mcp-session-id": sid },
  });
  await r.text();
}

/** The head of a request with the token and a loopback Host. */
export function head(front, method, path, headers = {}) {
  const lines = [`${method} ${path} HTTP/1.1`, `Host: 127.0.0.1:${front.port}`, `Authorization: Bearer ${front.token}`];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  return `${lines.join("\r\n")}\r\n\r\n`;
}

/**
 * A TCP connection to the front end that never reads what it is sent (paused at once). `closed` turns
 * true when the daemon closes it.
 */
export function rawConnection(front) {
  return new Promise((resolve, reject) => {
    const s = connect(front.port, "127.0.0.1");
    s.closedByPeer = false;
    s.once("connect", () => {
      s.pause();
      resolve(s);
    });
    s.once("error", reject);
    s.on("error", () => {});
    s.on("close", () => {
      s.closedByPeer = true;
    });
  });
}

/** Writes and resolves once the data is handed to the kernel (or the socket died). */
export function writeAll(s, data) {
  return new Promise((resolve) => {
    if (s.destroyed) return resolve();
    s.write(data, () => resolve());
  });
}

/** A GET stream of session `sid` that is never read. */
export async function unreadGet(front, path, sid) {
  const s = await rawConnection(front);
  s.write(head(front, "GET", path, { Accept: "text/event-stream", "Mcp-Session-Id": sid }));
  return s;
}

/** A POST of `message` to session `sid` whose answer (an SSE stream) is never read. */
export async function unreadPost(front, path, sid, message) {
  const s = await rawConnection(front);
  const body = JSON.stringify(message);
  s.write(
    head(front, "POST", path, {
      "Content-Type": "application/json",
      Accept: "text/event-stream",
      "Mcp-Session-Id": sid,
      "Content-Length": Buffer.byteLength(body),
    }) + body,
  );
  return s;
}
