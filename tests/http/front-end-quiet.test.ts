/**
 * Quiet HTTP sessions: a Streamable HTTP session with no GET stream open, no resource subscription and no
 * log level set is sent no log messages or list changes (there is nowhere to deliver them), so a server's
 * flood neither costs the daemon a copy per idle session nor leaves bytes kept for it. Once its GET stream
 * is open, or it sets a log level, it gets them again.
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

/** Calls a tool of fx in session `sid` and reads the whole answer (JSON or SSE). */
async function callTool(sid: string, id: number, name: string, args: object): Promise<string> {
  const r = await post(
    front,
    PATH,
    { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } },
    { "mcp-session-id": sid },
  );
  expect(r.status).toBe(200);
  return r.text();
}

async function httpStatus(): Promise<any> {
  const c = await d.control();
  try {
    return (await c.request("mcpd/status")).result.http;
  } finally {
    c.close();
  }
}

describe("a session nobody listens to", () => {
  it("regression: idle sessions were each sent (and kept) a copy of every log message: a quiet one holds nothing", async () => {
    const quiet = await openSession(front, PATH);
    const caller = await openSession(front, PATH);
    expect(await callTool(caller, 1, "flood", { count: 200, size: 2_000 })).toMatch(/flooded 200/);
    expect(await callTool(caller, 2, "change_tools", {})).toMatch(/changed/);
    // Neither session listens (no GET stream, no log level): nothing was kept for either.
    expect((await httpStatus()).replayBytes).toBe(0);
    // Its GET stream, opened now, starts empty: the flood and the list change were never its to replay.
    const get = await fetch(new URL(PATH, front.origin), {
      headers: { ...authHeaders(front), accept: "text/event-stream", "mcp-session-id": quiet },
    });
    const events = sseReader(get);
    expect((await events.next()).data).toBe("");
    // Listening now: what the server says from here on reaches it.
    expect(await callTool(caller, 3, "log", { level: "warning", message: "now you listen" })).toMatch(/logged/);
    const next = JSON.parse((await events.next()).data);
    expect(next).toMatchObject({ method: "notifications/message", params: { level: "warning", data: "now you listen" } });
    await events.cancel();
  });

  it("a session that set a log level keeps getting log messages without a GET stream (kept for it)", async () => {
    const leveled = await openSession(front, PATH);
    const set = await post(
      front,
      PATH,
      { jsonrpc: "2.0", id: 1, method: "logging/setLevel", params: { level: "info" } },
      { "mcp-session-id": leveled },
    );
    expect(await set.json()).toMatchObject({ id: 1, result: {} });
    const before = (await httpStatus()).replayBytes;
    const caller = await openSession(front, PATH);
    await callTool(caller, 1, "flood", { count: 10, size: 1_000 });
    expect((await httpStatus()).replayBytes).toBeGreaterThan(before);
  });
});
