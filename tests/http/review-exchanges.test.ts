/**
 * Regressions found reviewing the HTTP front end's exchanges (one POST's requests being answered): a POST
 * must always end, whatever the client does with its requests, and nothing of it may stay behind.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestDaemon, fixture, startTestDaemon } from "../e2e/harness.js";
import { type HttpFrontInfo, httpFront, openSession, post, sseReader } from "./http-harness.js";

let d: TestDaemon;
let front: HttpFrontInfo;

beforeAll(async () => {
  d = await startTestDaemon({ fx: fixture("fx") });
  front = await httpFront(d);
});
afterAll(async () => {
  await d?.stop();
});

/** Resolves with what `p` resolves to, or with "pending" if it has not settled within `ms`. */
function within<T>(p: Promise<T>, ms: number): Promise<T | "pending"> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<"pending">((r) => (timer = setTimeout(() => r("pending"), ms)))]).finally(() => clearTimeout(timer));
}

const PATH = "/servers/fx/mcp";
const slowCall = (id: number, accept: string, sid: string): Promise<Response> =>
  post(
    front,
    PATH,
    { jsonrpc: "2.0", id, method: "tools/call", params: { name: "slow", arguments: { ms: 120_000 } } },
    { "mcp-session-id": sid, accept },
  );
const cancel = async (id: number, sid: string): Promise<void> => {
  const r = await post(
    front,
    PATH,
    { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason: "test" } },
    { "mcp-session-id": sid },
  );
  expect(r.status).toBe(202);
  await r.text();
};

describe("a request the client cancels", () => {
  it("regression: a cancelled request's JSON POST never ended (the router sends no answer), and its id stayed 'in flight'", async () => {
    const sid = await openSession(front, PATH);
    const call = slowCall(1, "application/json", sid);
    // The POST is being answered once a duplicate id is refused.
    for (;;) {
      const dup = await post(front, PATH, { jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-session-id": sid });
      const status = dup.status;
      await dup.text();
      if (status === 400) break;
    }
    await cancel(1, sid);
    const res = await within(call, 20_000);
    expect(res, "the cancelled request's POST is still open").not.toBe("pending");
    const done = res as Response;
    expect(done.status).toBe(202);
    await done.text();
    // Its id is free again.
    const again = await post(front, PATH, { jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-session-id": sid });
    expect(await again.json()).toMatchObject({ id: 1, result: {} });
  });

  it("regression: a cancelled request's SSE stream never ended", async () => {
    const sid = await openSession(front, PATH);
    const res = await slowCall(2, "application/json, text/event-stream", sid);
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
    const events = sseReader(res);
    expect((await events.next()).data).toBe("");
    await cancel(2, sid);
    await expect(events.next(20_000)).rejects.toThrow(/ended/);
  });

  it("regression: a batch with one request cancelled is answered with the other answers", async () => {
    const sid = await openSession(front, PATH);
    const batch = post(
      front,
      PATH,
      [
        { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "slow", arguments: { ms: 120_000 } } },
        { jsonrpc: "2.0", id: 4, method: "ping" },
      ],
      { "mcp-session-id": sid, accept: "application/json" },
    );
    for (;;) {
      const dup = await post(front, PATH, { jsonrpc: "2.0", id: 3, method: "ping" }, { "mcp-session-id": sid });
      const status = dup.status;
      await dup.text();
      if (status === 400) break;
    }
    await cancel(3, sid);
    const res = await within(batch, 20_000);
    expect(res, "the batch's POST is still open").not.toBe("pending");
    expect(await (res as Response).json()).toEqual([{ jsonrpc: "2.0", id: 4, result: {} }]);
  });
});

describe("request ids", () => {
  it("regression: a request whose id was mcpd's own view-selection id (mcpd-http-select) never got its answer", async () => {
    const sid = await openSession(front, "/mcp");
    const call = post(front, "/mcp", { jsonrpc: "2.0", id: "mcpd-http-select", method: "ping" }, { "mcp-session-id": sid });
    const res = await within(call, 20_000);
    expect(res, "the POST is still open").not.toBe("pending");
    expect(await (res as Response).json()).toEqual({ jsonrpc: "2.0", id: "mcpd-http-select", result: {} });
  });

  it("regression: a legacy SSE client's request with id mcpd-http-select never got its answer", async () => {
    const stream = await fetch(new URL("/sse", front.origin), {
      headers: { authorization: `Bearer ${front.token}`, accept: "text/event-stream" },
    });
    const events = sseReader(stream);
    const endpoint = await events.next();
    const r = await fetch(new URL(endpoint.data, front.origin), {
      method: "POST",
      headers: { authorization: `Bearer ${front.token}`, "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: "mcpd-http-select", method: "ping" }),
    });
    expect(r.status).toBe(202);
    await r.text();
    expect(JSON.parse((await events.next(20_000)).data)).toEqual({ jsonrpc: "2.0", id: "mcpd-http-select", result: {} });
    await events.cancel();
  });
});
