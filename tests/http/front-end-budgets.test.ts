/**
 * The HTTP front end's per-session stream bound and its share of the daemon-wide buffer budget: a session
 * answering `httpMaxStreamsPerSession` POSTs at once refuses the next with 429, and the SSE events kept
 * for resumption over all sessions stay within `mcpd.maxBufferedBytesTotal`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestDaemon, fixture, startTestDaemon, until } from "../e2e/harness.js";
import { type HttpFrontInfo, authHeaders, httpFront, openSession, post, sseReader } from "./http-harness.js";

/** RUNTIME_DEFAULTS.httpMaxStreamsPerSession. */
const MAX_STREAMS = 64;
/** mcpd.maxBufferedBytesTotal for this daemon: small, so two sessions' kept events exceed it. */
const BUDGET = 256 * 1024;
const PATH = "/servers/fx/mcp";

let d: TestDaemon;
let front: HttpFrontInfo;

beforeAll(async () => {
  d = await startTestDaemon({ fx: fixture("fx") }, { settings: { maxBufferedBytesTotal: BUDGET } });
  front = await httpFront(d);
});
afterAll(async () => {
  await d?.stop();
});

const call = (id: number, name: string, args: object) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });

describe("bounds on one session and on all of them", () => {
  it(`a session answering ${MAX_STREAMS} POSTs at once refuses the next with 429; others are unaffected`, async () => {
    const sid = await openSession(front, PATH);
    const ac = new AbortController();
    const open = await Promise.all(
      Array.from({ length: MAX_STREAMS }, (_, i) =>
        fetch(new URL(PATH, front.origin), {
          method: "POST",
          signal: ac.signal,
          headers: {
            ...authHeaders(front),
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-session-id": sid,
          },
          body: JSON.stringify(call(100 + i, "slow", { ms: 60_000 })),
        }),
      ),
    );
    expect(open.every((r) => r.status === 200)).toBe(true);
    const over = await post(front, PATH, call(999, "echo", { text: "one too many" }), { "mcp-session-id": sid });
    expect(over.status).toBe(429);
    expect((await over.json()).error.data.mcpdCode).toBe("MCPD_TOO_MANY_REQUESTS");
    // Another session is not held to this one's streams (a ping: the server's slots are all taken).
    const other = await openSession(front, PATH);
    const ok = await post(front, PATH, { jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-session-id": other });
    expect(await ok.json()).toMatchObject({ id: 1, result: {} });
    // Ending the session cancels its calls upstream and ends their streams.
    ac.abort();
    const del = await fetch(new URL(PATH, front.origin), { method: "DELETE", headers: { ...authHeaders(front), "mcp-session-id": sid } });
    expect(del.status).toBe(200);
  });

  it("keeps the replay events of all sessions within mcpd.maxBufferedBytesTotal (the session holding the most is trimmed)", async () => {
    const c = await d.control();
    const floodParams = { name: "flood", arguments: { count: 150, size: 2_000, progress: true }, _meta: { progressToken: "p" } };
    const flood = async (): Promise<void> => {
      const sid = await openSession(front, PATH);
      const ac = new AbortController();
      // Its own unread answer counts against the budget too: the stream may be closed over it (then its
      // events are kept, as for a client that went away).
      const res = await fetch(new URL(PATH, front.origin), {
        method: "POST",
        signal: ac.signal,
        headers: {
          ...authHeaders(front),
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-session-id": sid,
        },
        // Progress: what a session is sent for its own request (log messages need a log level or a GET stream).
        body: JSON.stringify({ ...call(1, "flood", {}), params: floodParams }),
      }).catch(() => undefined);
      // Read the priming event, then go away: everything after it is kept for a resume.
      if (res)
        await sseReader(res)
          .next()
          .catch(() => undefined);
      ac.abort();
    };
    await Promise.all([flood(), flood()]);
    // Both floods are done once no HTTP client has a call in flight.
    await until(async () => {
      const st = (await c.request("mcpd/status")).result;
      return !st.clients.some((cl: { face?: string; inFlight: number }) => cl.face === "http" && cl.inFlight > 0);
    }, "the floods answered");
    const http = (await c.request("mcpd/status")).result.http;
    // Each session alone (~300 KB) is within its own 1 MiB, not within the daemon's budget: kept events
    // were trimmed. (A stream whose client took every event before it went away is forgotten whole, so
    // what is left kept may be nothing.)
    expect(http.dropped.replayTrims).toBeGreaterThan(0);
    expect(http.replayBytes).toBeLessThanOrEqual(BUDGET);
    expect(http.bufferedBytes).toBeLessThanOrEqual(BUDGET);
    c.close();
  });
});
