/**
 * Through the HTTP front end too, a server's answer goes on as the server wrote it, in a JSON body or an
 * SSE event: only the envelope (`{"jsonrpc":"2.0","id":<the client's>,"result":`) is mcpd's. The fixture's
 * `raw_answer` tool writes exactly the line a test gives it.
 */
import { PROTOCOL_DEFAULTS } from "@mcpd/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestDaemon, fixture, startTestDaemon } from "../e2e/harness.js";
import { type HttpFrontInfo, httpFront, openSession, post, sseReader } from "./http-harness.js";

const PATH = "/servers/fx/mcp";
// Spacing, a \u escape, 1.0 and a number past 2^53: encoded again they would read "é", 1 and 12345678901234567000.
const RESULT = `{ "content" : [ { "type" : "text", "text" : "caf\\u00e9" } ], "n" : 1.0, "big" : 12345678901234567890, "pad": "${"p".repeat(PROTOCOL_DEFAULTS.keepResultMinChars)}" }`;
const LINE = `{"result":${RESULT},"jsonrpc":"2.0","id":$ID}`;

/** A daemon whose front end answers quick calls as JSON (`streamAfterMs` given) or always on SSE (0). */
function frontEnd(streamAfterMs: number): { call: (id: number) => Promise<Response> } {
  let d: TestDaemon;
  let front: HttpFrontInfo;
  let sid: string;
  beforeAll(async () => {
    d = await startTestDaemon({ fx: fixture("fx", ["--tool", "raw_answer"]) }, { settings: { http: { streamAfterMs } } });
    front = await httpFront(d);
    sid = await openSession(front, PATH);
  });
  afterAll(async () => {
    await d?.stop();
  });
  return {
    call: (id) =>
      post(
        front,
        PATH,
        { jsonrpc: "2.0", id, method: "tools/call", params: { name: "raw_answer", arguments: { line: LINE } } },
        { "mcp-session-id": sid, accept: "application/json, text/event-stream" },
      ),
  };
}

describe("answers as JSON bodies", () => {
  const { call } = frontEnd(60_000);

  it("the body is the server's result in mcpd's envelope (regression: every answer was parsed and encoded again)", async () => {
    const r = await call(11);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(await r.text()).toBe(`{"jsonrpc":"2.0","id":11,"result":${RESULT}}`);
  });
});

describe("answers on SSE streams", () => {
  const { call } = frontEnd(0);

  it("the answer's event data is the server's result in mcpd's envelope", async () => {
    const r = await call(12);
    expect(r.headers.get("content-type")).toBe("text/event-stream");
    const events = sseReader(r);
    for (;;) {
      const e = await events.next();
      if (e.data === "") continue; // the priming event
      expect(e.data).toBe(`{"jsonrpc":"2.0","id":12,"result":${RESULT}}`);
      return;
    }
  });
});
