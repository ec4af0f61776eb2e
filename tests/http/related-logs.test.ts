/**
 * A log message a server sends while it answers a Streamable HTTP session's request goes on that
 * request's stream, before the answer, as the 2025 transport advises for messages related to a request:
 * it went on the session's GET stream, in no order with the answer (a client counting the log lines of a
 * call when its answer came could miss some; the conformance suite's tools-call-with-logging did). When
 * the session has several requests in flight to the server, nothing tells which one a log is for, and it
 * goes on the GET stream as before.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestDaemon, fixture, startTestDaemon } from "../e2e/harness.js";
import { type HttpFrontInfo, authHeaders, httpFront, openSession, post, sseReader } from "./http-harness.js";

const PATH = "/servers/fx/mcp";

let d: TestDaemon;
let front: HttpFrontInfo;

beforeAll(async () => {
  d = await startTestDaemon({ fx: fixture("fx") });
  front = await httpFront(d);
});
afterAll(async () => {
  await d?.stop();
});

/** A session with its GET stream open (read up to its priming event). */
async function listeningSession(): Promise<{ sid: string; get: ReturnType<typeof sseReader> }> {
  const sid = await openSession(front, PATH);
  const res = await fetch(new URL(PATH, front.origin), {
    headers: { ...authHeaders(front), accept: "text/event-stream", "mcp-session-id": sid },
  });
  expect(res.status).toBe(200);
  const get = sseReader(res);
  expect((await get.next()).data).toBe("");
  return { sid, get };
}

/** The JSON-RPC messages of an SSE body (its priming event left out). */
function messages(body: string): Array<{ id?: number; method?: string; params?: { data?: unknown } }> {
  return body
    .split("\n\n")
    .flatMap((block) => block.split("\n").filter((l) => l.startsWith("data: ")))
    .map((l) => l.slice("data: ".length))
    .filter((data) => data !== "")
    .map((data) => JSON.parse(data));
}

describe("log messages that come with a request", () => {
  it("regression: go on the request's stream before its answer, not on the GET stream in no order with it", async () => {
    const { sid, get } = await listeningSession();
    const r = await post(
      front,
      PATH,
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "flood", arguments: { count: 3, size: 5, char: "l" } } },
      { "mcp-session-id": sid },
    );
    expect(r.headers.get("content-type")).toContain("text/event-stream");
    const sent = messages(await r.text());
    expect(sent.map((m) => m.method ?? `answer ${m.id}`)).toEqual([
      "notifications/message",
      "notifications/message",
      "notifications/message",
      "answer 1",
    ]);
    expect(sent[0]?.params?.data).toBe("lllll");
    await get.cancel();
  });

  it("with several requests of the session in flight to the server, they go on the GET stream", async () => {
    const { sid, get } = await listeningSession();
    // A call that holds until released, so that the flood's logs could be for either.
    const held = post(
      front,
      PATH,
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "slow", arguments: { ms: 60_000 } } },
      { "mcp-session-id": sid },
    );
    const r = await post(
      front,
      PATH,
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "flood", arguments: { count: 2, size: 3, char: "g" } } },
      { "mcp-session-id": sid },
    );
    // Nothing but its answer came for it: answered as JSON.
    expect(r.headers.get("content-type")).toContain("application/json");
    expect(JSON.parse(await r.text())).toMatchObject({ id: 2, result: { content: [{ text: "flooded 2" }] } });
    const onGet = [JSON.parse((await get.next()).data), JSON.parse((await get.next()).data)];
    expect(onGet.map((m) => [m.method, m.params.data])).toEqual([
      ["notifications/message", "ggg"],
      ["notifications/message", "ggg"],
    ]);
    await get.cancel();
    // The held call is cancelled: its POST ends with nothing more to say.
    const cancel = { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1, reason: "test over" } };
    expect((await post(front, PATH, cancel, { "mcp-session-id": sid })).status).toBe(202);
    await (await held).text();
  });
});
