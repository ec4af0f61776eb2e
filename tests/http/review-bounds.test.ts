/**
 * Regressions found reviewing the HTTP front end's bounds: a session's idle clock restarts when its GET
 * stream closes (a stream open longer than the idle limit left the session to the next sweep, with the
 * events it kept for resumption), and 2026-era requests pipelined on one TCP connection are answered at
 * most `httpMaxStreamsPerSession` at once (each had a router session of its own, counted nowhere: one
 * connection could put 10,000 calls in flight and fill a server's queue for every other client).
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HTTP_RUNTIME_DEFAULTS } from "../../daemon/src/defaults-http.js";
import { type TestDaemon, fixture, startTestDaemon, until } from "../e2e/harness.js";
import { modernEnvelope } from "../helpers/modern.js";
import { type HttpFrontInfo, authHeaders, httpFront, post } from "./http-harness.js";

/**
 * mcpd.http.sessionIdleMs. A session never used after its initialize ends after requestTimeoutMs instead
 * (1.5 s here): such a session ending is how the test knows that much time has passed. Sessions are swept
 * every quarter of the shorter one, at least every second: every second here.
 */
const IDLE_MS = 6_000;
const REQUEST_TIMEOUT_MS = 1_500;

let d: TestDaemon;
let front: HttpFrontInfo;

beforeAll(async () => {
  d = await startTestDaemon(
    { fx: fixture("fx") },
    { settings: { http: { sessionIdleMs: IDLE_MS, requestTimeoutMs: REQUEST_TIMEOUT_MS } } },
  );
  front = await httpFront(d);
});
afterAll(async () => {
  await d?.stop();
});

/** The front end's part of `mcpd/status`, and its HTTP clients. */
async function status(): Promise<{ http: any; clients: any[] }> {
  const c = await d.control();
  try {
    const st = (await c.request("mcpd/status")).result;
    return { http: st.http, clients: st.clients.filter((cl: any) => cl.face === "http") };
  } finally {
    c.close();
  }
}

/** The client names of `mcpd/status` clients. */
const names = (clients: any[]): string[] => clients.map((cl) => cl.clientInfo?.name);

/** Opens a Streamable HTTP session whose client is named `name` (how `mcpd/status` tells them apart). */
async function openNamed(name: string): Promise<string> {
  const r = await post(front, "/mcp", {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name, version: "1" } },
  });
  expect(r.status).toBe(200);
  await r.text();
  return r.headers.get("mcp-session-id") as string;
}

describe("the HTTP front end's bounds", () => {
  it("regression: a session whose GET stream was open longer than sessionIdleMs lives sessionIdleMs after the stream closes (the next sweep ended it)", async () => {
    const sid = await openNamed("held-get");
    const stream = new AbortController();
    const get = await fetch(new URL("/mcp", front.origin), {
      headers: { ...authHeaders(front), accept: "text/event-stream", "mcp-session-id": sid },
      signal: stream.signal,
    });
    expect(get.status).toBe(200);
    // A marker session, used, then idle from now on: it ends at the first sweep more than IDLE_MS from now.
    const marker = await openNamed("marker");
    const used = await post(front, "/mcp", { jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-session-id": marker });
    expect(used.status).toBe(200);
    await used.text();
    // A session never used: it ends REQUEST_TIMEOUT_MS from now, at a sweep. Then the stream has been open
    // longer than a sweep period, and closes more than two sweeps before the marker ends.
    await openNamed("unused");
    expect(names((await status()).clients)).toContain("unused");
    await until(async () => !names((await status()).clients).includes("unused"), "the unused session to end", 30_000);
    stream.abort();
    // When the marker is gone, a sweep came after the stream closed, more than IDLE_MS after the held
    // session's GET opened: the held session must still be there, in the same snapshot.
    const snapshot = await until(
      async () => {
        const s = names((await status()).clients);
        return s.includes("marker") ? undefined : s;
      },
      "the marker session to expire",
      30_000,
    );
    expect(snapshot).toContain("held-get");
    const ping = await post(front, "/mcp", { jsonrpc: "2.0", id: 2, method: "ping" }, { "mcp-session-id": sid });
    expect(ping.status).toBe(200);
    await ping.text();
  });

  it("regression: 2026-era requests pipelined on one connection are answered httpMaxStreamsPerSession at once; the others get 429 (all went upstream)", async () => {
    const cap = HTTP_RUNTIME_DEFAULTS.httpMaxStreamsPerSession;
    const count = cap + 16;
    const requests: string[] = [];
    for (let i = 1; i <= count; i++) {
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: i,
        method: "tools/call",
        params: { name: "fx__slow", arguments: { ms: 120_000 }, _meta: modernEnvelope() },
      });
      requests.push(
        `POST /mcp HTTP/1.1\r\nHost: ${new URL(front.origin).host}\r\nAuthorization: Bearer ${front.token}\r\n` +
          "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
          "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: fx__slow\r\n" +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    }
    const before = (await status()).http.dropped.tooManyRequests ?? 0;
    const socket = connect(Number(new URL(front.origin).port), "127.0.0.1");
    socket.on("error", () => {});
    await new Promise((r) => socket.once("connect", r));
    socket.write(requests.join(""));
    try {
      const counts = async () => {
        const s = await status();
        const inFlight = s.clients.reduce((n, cl) => n + cl.inFlight, 0);
        return { inFlight, refused: (s.http.dropped.tooManyRequests ?? 0) - before };
      };
      const seen = await until(
        async () => {
          const c = await counts();
          return c.inFlight + c.refused >= count ? c : undefined;
        },
        "every pipelined request to be taken or refused",
        30_000,
      );
      expect(seen).toEqual({ inFlight: cap, refused: count - cap });
    } finally {
      socket.destroy();
    }
    // Closing the connection cancels what it had in flight.
    await until(async () => (await status()).clients.every((cl) => cl.inFlight === 0), "the calls to be cancelled", 30_000);
  });
});
