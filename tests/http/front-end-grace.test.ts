/**
 * How a tools/call is answered to a client that accepts both JSON and SSE (`mcpd.http.streamAfterMs`):
 * as plain JSON when the answer comes within the grace (cheaper for the daemon and the client), on a
 * primed, resumable SSE stream when it takes longer, on SSE at once when something comes for it before
 * its answer, and always on SSE with a grace of 0. Each case is chosen so that timing cannot decide it:
 * a grace of a minute for the quick call, a call of 600 ms against a grace of 100.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestDaemon, fixture, startTestDaemon } from "../e2e/harness.js";
import { type HttpFrontInfo, httpFront, openSession, post, sseReader } from "./http-harness.js";

const PATH = "/servers/fx/mcp";

/** A daemon with one fixture server and `mcpd.http.streamAfterMs` set, and an open session on its front end. */
function withGrace(streamAfterMs: number): {
  call: (id: number, name: string, args: object, extra?: object, accept?: string) => Promise<Response>;
} {
  let d: TestDaemon;
  let front: HttpFrontInfo;
  let sid: string;
  beforeAll(async () => {
    d = await startTestDaemon({ fx: fixture("fx") }, { settings: { http: { streamAfterMs } } });
    front = await httpFront(d);
    sid = await openSession(front, PATH);
  });
  afterAll(async () => {
    await d?.stop();
  });
  return {
    call: (id, name, args, extra = {}, accept = "application/json, text/event-stream") =>
      post(
        front,
        PATH,
        { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args, ...extra } },
        { "mcp-session-id": sid, accept },
      ),
  };
}

/** The JSON-RPC messages of an SSE response up to the answer to `id` (the priming event skipped). */
async function messagesUntil(r: Response, id: number): Promise<any[]> {
  const events = sseReader(r);
  const seen: any[] = [];
  for (;;) {
    const e = await events.next();
    if (e.data === "") continue;
    const m = JSON.parse(e.data);
    seen.push(m);
    if (m.id === id) return seen;
  }
}

describe("a grace of a minute: quick calls come back as JSON", () => {
  const { call } = withGrace(60_000);

  it("regression: a tools/call answered at once comes back as one JSON body, not an SSE stream (SSE for every call cost the client and the daemon more per call)", async () => {
    const r = await call(1, "echo", { text: "quick" });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(await r.json()).toMatchObject({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "quick" }] } });
  });

  it("a tools/call whose progress comes before its answer is switched to SSE at once, the progress first", async () => {
    const r = await call(2, "progress", { steps: 2 }, { _meta: { progressToken: "p2" } });
    expect(r.headers.get("content-type")).toBe("text/event-stream");
    const seen = await messagesUntil(r, 2);
    expect(seen[0]).toMatchObject({ method: "notifications/progress", params: { progressToken: "p2" } });
    expect(seen.at(-1)).toMatchObject({ id: 2, result: {} });
  });

  it("a client that accepts only SSE gets SSE even for a quick call", async () => {
    const r = await call(3, "echo", { text: "sse" }, {}, "text/event-stream");
    expect(r.headers.get("content-type")).toBe("text/event-stream");
    expect((await messagesUntil(r, 3)).at(-1)).toMatchObject({ id: 3, result: { content: [{ text: "sse" }] } });
  });
});

describe("a grace of 100 ms: a longer call is streamed", () => {
  const { call } = withGrace(100);

  it("a tools/call still running after the grace is switched to an SSE stream, primed with an event id and retry, its answer following on it", async () => {
    const r = await call(4, "slow", { ms: 600, text: "late" });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/event-stream");
    const events = sseReader(r);
    const priming = await events.next();
    expect(priming.id).toMatch(/^s\d+\.\d+$/);
    expect(priming.data).toBe("");
    expect(priming.retry).toBeGreaterThan(0);
    const answer = await events.next();
    expect(JSON.parse(answer.data)).toMatchObject({ id: 4, result: { content: [{ type: "text", text: "late" }] } });
    expect(answer.id).toMatch(/^s\d+\.\d+$/);
  });
});

describe("a grace of 0: every call is streamed", () => {
  const { call } = withGrace(0);

  it("even a quick tools/call is answered on a primed SSE stream", async () => {
    const r = await call(5, "echo", { text: "streamed" });
    expect(r.headers.get("content-type")).toBe("text/event-stream");
    expect((await messagesUntil(r, 5)).at(-1)).toMatchObject({ id: 5, result: { content: [{ text: "streamed" }] } });
  });
});
