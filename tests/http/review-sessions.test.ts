/**
 * Regressions found reviewing how Streamable HTTP sessions begin: a session is left behind only when its
 * client has its id and a working initialize, never otherwise (each one counts against maxSessions).
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestDaemon, fixture, startTestDaemon, until } from "../e2e/harness.js";
import { type HttpFrontInfo, authHeaders, httpFront, post } from "./http-harness.js";

/**
 * A stdio MCP server whose initialize result carries a key named "error" (inside `capabilities.experimental`,
 * where a server may put anything): a successful initialize all the same.
 */
const ERROR_KEY_SERVER = `
const rl = require("node:readline").createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  const result = m.method === "initialize"
    ? { protocolVersion: m.params.protocolVersion, capabilities: { tools: {}, experimental: { error: { note: "a capability named error" } } }, serverInfo: { name: "errkey", version: "1" } }
    : m.method === "tools/list" ? { tools: [] } : {};
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: m.id, result }) + "\\n");
});
rl.on("close", () => process.exit(0));
`;

/**
 * mcpd.http.requestTimeoutMs: also how long a session its client never used after its initialize is kept
 * (the end of a client that hung up right behind its request may be read only after the answer left).
 */
const REQUEST_TIMEOUT_MS = 2_000;

let d: TestDaemon;
let front: HttpFrontInfo;

beforeAll(async () => {
  d = await startTestDaemon(
    {
      fx: fixture("fx"),
      // Never ready while these tests run: its initialize is never answered.
      stuck: fixture("stuck", ["--init-delay", "600000"], { timeout: 300_000 }),
      errkey: { command: process.execPath, args: ["-e", ERROR_KEY_SERVER] },
      broken: fixture("broken", ["--exit-at-start", "1"], { timeout: 2_000 }),
    },
    { settings: { http: { requestTimeoutMs: REQUEST_TIMEOUT_MS } } },
  );
  front = await httpFront(d);
});
afterAll(async () => {
  await d?.stop();
});

const INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "review", version: "1" } },
};

async function sessionCount(): Promise<number> {
  const c = await d.control();
  try {
    return (await c.request("mcpd/status")).result.http.sessions;
  } finally {
    c.close();
  }
}

describe("opening a session", () => {
  it("regression: an initialize sent as a notification opened a session whose id nobody was given", async () => {
    const before = await sessionCount();
    const { id: _, ...notification } = INIT;
    const r = await post(front, "/mcp", notification);
    expect(r.status).toBe(400);
    expect((await r.json()).error.message).toMatch(/mcp-session-id/i);
    expect(await sessionCount()).toBe(before);
  });

  it("regression: a client that went away before its initialize was answered left its session behind", async () => {
    const before = await sessionCount();
    const ac = new AbortController();
    const pending = fetch(new URL("/servers/stuck/mcp", front.origin), {
      method: "POST",
      headers: { ...authHeaders(front), "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(INIT),
      signal: ac.signal,
    }).catch(() => undefined);
    await until(async () => (await sessionCount()) === before + 1, "the initialize's session opened");
    ac.abort();
    await pending;
    // Nobody has its id (it comes with the answer): it must not wait out sessionIdleMs.
    await until(async () => (await sessionCount()) === before, "the abandoned initialize's session ended");
  });

  it("regression: an initialize whose client hung up right after sending it left its session for 30 minutes (50 took 50 slots)", async () => {
    const before = await sessionCount();
    const body = JSON.stringify(INIT);
    const port = Number(new URL(front.origin).port);
    const request =
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${front.token}\r\n` +
      `Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    // Each client sends its initialize and ends its side at once: it never reads the answer (the session's id).
    let closed = 0;
    for (let i = 0; i < 20; i++) {
      const socket = connect(port, "127.0.0.1");
      socket.on("error", () => {});
      // Whatever comes is read (and dropped), as the client's system does: a socket left paused never
      // reports the daemon's end of the connection when an answer came before it (on a loaded machine the
      // daemon may answer before it reads the end), and the test waited for a close it could not see.
      socket.resume();
      socket.once("connect", () => socket.end(request));
      socket.once("close", () => closed++);
    }
    // No session is left (what the regression was about)...
    await until(async () => (await sessionCount()) === before, "the hung-up initializes' sessions to end", 20_000);
    // ...and every connection is closed by the daemon: at once once it read the request and the end behind
    // it; on a loaded machine one may wait for mcpd.http.requestTimeoutMs (30 s), the bound on any request.
    await until(() => closed === 20, "the daemon to close the 20 connections", 45_000);
    // Still usable: a slot is free.
    const r = await post(front, "/mcp", INIT);
    expect(r.status).toBe(200);
    await r.text();
  });

  it('regression: a successful initialize whose result holds a key named "error" ended the session it opened', async () => {
    const r = await post(front, "/servers/errkey/mcp", INIT);
    expect(r.status).toBe(200);
    const sid = r.headers.get("mcp-session-id") as string;
    expect((await r.json()).result.capabilities.experimental.error).toBeDefined();
    const ping = await post(front, "/servers/errkey/mcp", { jsonrpc: "2.0", id: 2, method: "ping" }, { "mcp-session-id": sid });
    expect(ping.status).toBe(200);
    expect(await ping.json()).toMatchObject({ id: 2, result: {} });
  });

  it("an initialize answered with an error still leaves no session behind", async () => {
    const before = await sessionCount();
    const r = await post(front, "/servers/broken/mcp", INIT);
    const body = await r.json();
    expect(body.error).toBeDefined();
    const sid = r.headers.get("mcp-session-id");
    await until(async () => (await sessionCount()) === before, "the failed initialize's session ended");
    if (sid) {
      const ping = await post(front, "/servers/broken/mcp", { jsonrpc: "2.0", id: 2, method: "ping" }, { "mcp-session-id": sid });
      expect(ping.status).toBe(404);
      await ping.text();
    }
  });
});
