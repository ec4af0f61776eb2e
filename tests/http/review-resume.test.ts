/**
 * Regressions found reviewing resumption (`Last-Event-ID`) on the HTTP front end: a stream can be
 * resumed while it has something left to give, and not for ever after.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestDaemon, fixture, startTestDaemon, until } from "../e2e/harness.js";
import { type HttpFrontInfo, authHeaders, httpFront, openSession, post, sseReader } from "./http-harness.js";

let d: TestDaemon;
let front: HttpFrontInfo;

beforeAll(async () => {
  d = await startTestDaemon({ fx: fixture("fx") });
  front = await httpFront(d);
});
afterAll(async () => {
  await d?.stop();
});

const PATH = "/servers/fx/mcp";
const get = (sid: string, lastEventId?: string): Promise<Response> =>
  fetch(new URL(PATH, front.origin), {
    headers: {
      ...authHeaders(front),
      accept: "text/event-stream",
      "mcp-session-id": sid,
      ...(lastEventId ? { "last-event-id": lastEventId } : {}),
    },
  });

async function fxInFlight(): Promise<number> {
  const c = await d.control();
  try {
    return (await c.request("mcpd/status")).result.servers.find((s: any) => s.name === "fx").inFlight;
  } finally {
    c.close();
  }
}

describe("resuming a stream whose kept events were dropped", () => {
  it("regression: a finished stream whose answer was dropped from the replay log stayed resumable for ever, every resume ending at once (clients poll it for ever)", async () => {
    const sid = await openSession(front, PATH);
    // The client's GET stream is open, as a client's usually is.
    const standalone = sseReader(await get(sid));
    expect((await standalone.next()).data).toBe("");
    // An answer larger than the session's replay bound (1 MiB) comes while its client is away.
    const res = await post(
      front,
      PATH,
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "slow", arguments: { ms: 1_500, text: "y".repeat(1_500_000) } } },
      { "mcp-session-id": sid },
    );
    const first = sseReader(res);
    const priming = await first.next();
    expect(priming.data).toBe("");
    await first.cancel();
    await until(async () => (await fxInFlight()) === 0, "the answer arrived");
    // The first resume gets what is left (nothing: the answer was over the bound) and ends.
    const again = sseReader(await get(sid, priming.id));
    await expect(again.next(20_000)).rejects.toThrow(/ended/);
    // Then the stream is done: a resume of it is not served as that stream again.
    const third = await get(sid, priming.id);
    expect(third.status).toBe(409);
    await third.text();
    await standalone.cancel();
  });
});
