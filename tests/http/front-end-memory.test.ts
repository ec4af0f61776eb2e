/**
 * The HTTP front end's bytes in the daemon-wide budget (`mcpd.maxBufferedBytesTotal`, shared with the
 * socket): request bodies still arriving and output a client does not read are charged to it, and past it
 * the holder holding the most is let go (a body refused with 503, a stream closed) while other clients go on.
 */
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestDaemon, fixture, startTestDaemon, until } from "../e2e/harness.js";
import { type HttpFrontInfo, authHeaders, httpFront, openSession, post } from "./http-harness.js";

/** mcpd.maxBufferedBytesTotal for this daemon: small, so a few bodies or one unread stream pass it. */
const BUDGET = 512 * 1024;
const PATH = "/servers/fx/mcp";

let d: TestDaemon;
let front: HttpFrontInfo;
let port: number;

beforeAll(async () => {
  d = await startTestDaemon({ fx: fixture("fx") }, { settings: { maxBufferedBytesTotal: BUDGET } });
  front = await httpFront(d);
  port = Number(new URL(front.origin).port);
});
afterAll(async () => {
  await d?.stop();
});

async function status(): Promise<any> {
  const c = await d.control();
  try {
    return (await c.request("mcpd/status")).result;
  } finally {
    c.close();
  }
}

/** A raw connection to the front end that keeps what it is answered. */
async function rawClient(): Promise<{ socket: Socket; received: () => string }> {
  const socket = connect(port, "127.0.0.1");
  let text = "";
  socket.on("data", (chunk) => {
    text += String(chunk);
  });
  socket.on("error", () => {});
  await new Promise((r) => socket.once("connect", r));
  return { socket, received: () => text };
}

const head = (method: string, headers: Record<string, string | number>): string =>
  `${method} ${PATH} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${front.token}\r\n` +
  `${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("")}\r\n`;

describe("HTTP buffers in the daemon-wide budget", () => {
  it("regression: unfinished request bodies were outside the budget (100 of 4 MiB held +393 MiB): the largest gets 503", async () => {
    // Three bodies of 300 KiB, each sent but for its last bytes: any two are over the budget, one is not.
    const size = 300 * 1024;
    const clients = await Promise.all([0, 1, 2].map(() => rawClient()));
    for (const c of clients) {
      c.socket.write(head("POST", { "Content-Type": "application/json", Accept: "application/json", "Content-Length": size }));
      c.socket.write(Buffer.alloc(size - 10, "x"));
    }
    const refused = (): typeof clients => clients.filter((c) => /^HTTP\/1\.1 503/.test(c.received()));
    await until(() => refused().length === 2, "two of the three bodies refused over the budget");
    const answer = refused()[0]?.received() as string;
    const error = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)).error;
    expect(error).toMatchObject({ code: -32073, data: { mcpdCode: "MCPD_BUFFER_BUDGET_EXCEEDED" } });
    expect(error.message).toMatch(/over mcpd\.maxBufferedBytesTotal \(524288 bytes\), and this request body held the most/);
    // The body still arriving is counted, by the front end and in the daemon's one total with the socket's.
    const held = await until(async () => {
      const st = await status();
      return st.http.bufferedBytes >= size - 10 && st;
    }, "the remaining body counted");
    expect(held.http.bufferedBytes).toBeLessThanOrEqual(BUDGET);
    expect(held.daemon.bufferedBytes).toBeGreaterThanOrEqual(held.http.bufferedBytes);
    expect(held.http.dropped.overBudget).toBe(2);
    // Others go on meanwhile.
    const sid = await openSession(front, PATH);
    const ping = await post(front, PATH, { jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-session-id": sid });
    expect(await ping.json()).toMatchObject({ id: 1, result: {} });
    for (const c of clients) c.socket.destroy();
    await until(async () => (await status()).http.bufferedBytes === 0, "the abandoned body released");
  });

  it("regression: a GET stream that never read was outside the budget (10 held +237 MiB): it is closed, its events dropped and counted", async () => {
    const sid = await openSession(front, PATH);
    // With a log level set, its session still takes log messages once the stream is gone (kept, then dropped).
    const level = await post(
      front,
      PATH,
      { jsonrpc: "2.0", id: 1, method: "logging/setLevel", params: { level: "info" } },
      { "mcp-session-id": sid },
    );
    expect(await level.json()).toMatchObject({ id: 1, result: {} });
    const reader = await rawClient();
    reader.socket.pause();
    reader.socket.write(head("GET", { Accept: "text/event-stream", "Mcp-Session-Id": sid }));
    // Another client floods the server's log messages (the stream's session listens: its GET stream is open)
    // until the unread stream is closed; the kernel's socket buffers take the first few MiB.
    const caller = await openSession(front, PATH);
    const before = (await status()).http.dropped?.overBudget ?? 0;
    let id = 0;
    const dropped = await until(async () => {
      const r = await post(
        front,
        PATH,
        { jsonrpc: "2.0", id: ++id, method: "tools/call", params: { name: "flood", arguments: { count: 200, size: 16 * 1024 } } },
        { "mcp-session-id": caller },
      );
      expect(await r.text()).toMatch(/flooded 200/);
      const st = await status();
      return st.http.dropped?.overBudget > before && st;
    }, "the unread stream closed over the budget");
    // Closed by the daemon-wide budget, long before its own 16 MiB bound.
    expect(dropped.http.slowReaders).toBe(0);
    expect(dropped.http.dropped.droppedEvents).toBeGreaterThan(0);
    expect(dropped.http.bufferedBytes).toBeLessThanOrEqual(BUDGET);
    expect(dropped.daemon.bufferedBytes).toBeLessThanOrEqual(BUDGET);
    const ping = await post(front, PATH, { jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-session-id": caller });
    expect(await ping.json()).toMatchObject({ id: 1, result: {} });
    reader.socket.destroy();
    for (const s of [sid, caller]) {
      const r = await fetch(new URL(PATH, front.origin), { method: "DELETE", headers: { ...authHeaders(front), "mcp-session-id": s } });
      await r.text();
    }
  });
});
