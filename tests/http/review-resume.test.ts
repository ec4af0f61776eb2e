/**
 * Regressions found reviewing resumption (`Last-Event-ID`) on the HTTP front end: a stream can be
 * resumed while it has something left to give, and not for ever after.
 */
import { connect } from "node:net";
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

describe("a response waiting its turn on a pipelined connection", () => {
  it("regression: a GET stream queued behind another response on a connection that closed stayed 'open' for ever (every later GET got 409, the session never idled out)", async () => {
    const sid = await openSession(front, PATH);
    const u = new URL(front.url);
    const sock = connect(Number(u.port), "127.0.0.1");
    sock.on("error", () => {});
    await new Promise((r) => sock.once("connect", r));
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "slow", arguments: { ms: 60_000 } } });
    const head = `Host: 127.0.0.1:${u.port}\r\nAuthorization: Bearer ${front.token}\r\nMcp-Session-Id: ${sid}\r\n`;
    // HTTP/1.1 pipelining: a POST answered as JSON (not yet), then the GET stream, whose response waits behind it.
    sock.write(
      `POST ${PATH} HTTP/1.1\r\n${head}Content-Type: application/json\r\nAccept: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}` +
        `GET ${PATH} HTTP/1.1\r\n${head}Accept: text/event-stream\r\n\r\n`,
    );
    // Wait until the daemon has both pipelined requests without probing with a GET of our own (a probe
    // could take the stream first): the POST's call in flight means the GET that followed it was read too.
    const c = await d.control();
    await until(async () => {
      const st = (await c.request("mcpd/status")).result;
      return st.clients.some((cl: { face?: string; inFlight: number }) => cl.face === "http" && cl.inFlight >= 1);
    }, "the pipelined POST in flight");
    c.close();
    const taken = await get(sid);
    await taken.body?.cancel();
    expect(taken.status).toBe(409);
    sock.destroy();
    // The connection is gone, and the GET stream with it: the client can open another.
    await until(async () => {
      const r = await get(sid);
      await r.body?.cancel();
      return r.status === 200;
    }, "a new GET stream accepted");
  });
});
