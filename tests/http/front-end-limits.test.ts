/**
 * The HTTP front end's streams and bounds: a dropped SSE stream resumes with Last-Event-ID, request bodies,
 * sessions and slow readers are bounded, a taken port never stops the daemon, and `mcpd.http` reloads hot.
 */
import { writeFileSync } from "node:fs";
import { connect, createServer, type Server } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type TestDaemon, fixture, startTestDaemon, until } from "../e2e/harness.js";
import { type HttpFrontInfo, authHeaders, httpFront, openSession, post, sseReader } from "./http-harness.js";

/** Small enough to reach in a test, large enough for every other test here to open its own sessions. */
const MAX_SESSIONS = 10;

let d: TestDaemon;
let front: HttpFrontInfo;

beforeAll(async () => {
  d = await startTestDaemon({ fx: fixture("fx") }, { settings: { http: { maxSessions: MAX_SESSIONS } } });
  front = await httpFront(d);
});
afterAll(async () => {
  await d?.stop();
});

describe("resumption", () => {
  it("a client whose SSE stream dropped mid-call gets the rest, answer included, with Last-Event-ID", async () => {
    const sid = await openSession(front, "/servers/fx/mcp");
    const res = await post(
      front,
      "/servers/fx/mcp",
      {
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: { name: "progress", arguments: { steps: 4, intervalMs: 300 }, _meta: { progressToken: "p" } },
      },
      { "mcp-session-id": sid },
    );
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
    const first = sseReader(res);
    const priming = await first.next();
    expect(priming.data).toBe("");
    expect(priming.id).toMatch(/\.\d+$/);
    expect(priming.retry).toBeGreaterThan(0);
    const p1 = await first.next();
    expect(JSON.parse(p1.data).params.progress).toBe(1);
    await first.cancel();
    // Reconnect from the last event seen: progress 2..4 and the answer come, none twice, then the stream ends.
    const again = await fetch(front.url.replace(/\/mcp$/, "/servers/fx/mcp"), {
      headers: { ...authHeaders(front), accept: "text/event-stream", "mcp-session-id": sid, "last-event-id": p1.id as string },
    });
    expect(again.status).toBe(200);
    const rest = sseReader(again);
    const got: any[] = [];
    for (;;) {
      const ev = await rest.next();
      if (ev.data === "") continue;
      got.push(JSON.parse(ev.data));
      if (got.at(-1).id === 7) break;
    }
    expect(got.slice(0, -1).map((m) => m.params.progress)).toEqual([2, 3, 4]);
    expect(got.at(-1).result.content[0].text).toBe("done");
    await expect(rest.next(5_000)).rejects.toThrow(/ended/);
  });

  it("keeps one GET stream per session (409 for a second) and delivers server notifications on it", async () => {
    const sid = await openSession(front, "/servers/fx/mcp");
    const open = () =>
      fetch(front.url.replace(/\/mcp$/, "/servers/fx/mcp"), {
        headers: { ...authHeaders(front), accept: "text/event-stream", "mcp-session-id": sid },
      });
    const get = await open();
    expect(get.status).toBe(200);
    const second = await open();
    expect(second.status).toBe(409);
    await second.text();
    const events = sseReader(get);
    expect((await events.next()).data).toBe("");
    // A list change is unrelated to any request: it comes on the GET stream.
    const r = await post(
      front,
      "/servers/fx/mcp",
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "change_tools", arguments: {} } },
      { "mcp-session-id": sid },
    );
    await r.text();
    for (;;) {
      const ev = await events.next();
      if (ev.data && JSON.parse(ev.data).method === "notifications/tools/list_changed") break;
    }
    await events.cancel();
  });
});

describe("bounds", () => {
  it("refuses a body over the message limit with 413 before reading it, and the session stays usable", async () => {
    const sid = await openSession(front);
    const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "x".repeat(5 * 1024 * 1024) } });
    const r = await post(front, "/mcp", big, { "mcp-session-id": sid });
    expect(r.status).toBe(413);
    expect((await r.json()).error.data.mcpdCode).toBe("MCPD_MESSAGE_TOO_LARGE");
    const ok = await post(front, "/mcp", { jsonrpc: "2.0", id: 2, method: "ping" }, { "mcp-session-id": sid });
    expect(await ok.json()).toMatchObject({ id: 2, result: {} });
  });

  it("answers malformed input with a clear 4xx: bad JSON, not JSON-RPC, wrong content type, duplicate id", async () => {
    const sid = await openSession(front);
    const h = { "mcp-session-id": sid };
    const bad = await post(front, "/mcp", "{not json", h);
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.code).toBe(-32700);
    const notRpc = await post(front, "/mcp", { hello: 1 }, h);
    expect(notRpc.status).toBe(400);
    await notRpc.text();
    const text = await post(front, "/mcp", "{}", { ...h, "content-type": "text/plain" });
    expect(text.status).toBe(415);
    await text.text();
    const slow = await post(
      front,
      "/mcp",
      { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "fx__slow", arguments: { ms: 2_000 } } },
      h,
    );
    const dup = await post(front, "/mcp", { jsonrpc: "2.0", id: 5, method: "ping" }, h);
    expect(dup.status).toBe(400);
    expect((await dup.json()).error.message).toMatch(/already in flight/);
    expect(await slow.text()).toMatch(/slept 2000/);
  });

  it("caps the sessions (mcpd.http.maxSessions): the one over gets 503 until one ends", async () => {
    const c = await d.control();
    const open = (await c.request("mcpd/status")).result.http.sessions + (await c.request("mcpd/status")).result.http.legacySessions;
    const ids: string[] = [];
    for (let i = open; i < MAX_SESSIONS; i++) ids.push(await openSession(front));
    const over = await post(front, "/mcp", {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "over", version: "1" } },
    });
    expect(over.status).toBe(503);
    expect((await over.json()).error.data.mcpdCode).toBe("MCPD_TOO_MANY_CONNECTIONS");
    for (const sid of ids) {
      const del = await fetch(front.url, { method: "DELETE", headers: { ...authHeaders(front), "mcp-session-id": sid } });
      await del.text();
    }
    const again = await openSession(front);
    await (await fetch(front.url, { method: "DELETE", headers: { ...authHeaders(front), "mcp-session-id": again } })).text();
    const st = (await c.request("mcpd/status")).result.http;
    expect(st.refused).toBeGreaterThanOrEqual(1);
    c.close();
  });

  it("drops a reader that stops reading its SSE stream instead of buffering without limit; others go on", async () => {
    const sid = await openSession(front, "/servers/fx/mcp");
    const u = new URL(front.url);
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      // Progress for its own call: what a session gets whatever it listens to.
      params: { name: "flood", arguments: { count: 48, size: 1024 * 1024, progress: true }, _meta: { progressToken: "p" } },
    });
    // A client that sends its request and never reads a byte of the answer.
    const sock = connect(Number(u.port), "127.0.0.1");
    await new Promise((r) => sock.once("connect", r));
    sock.pause();
    sock.write(
      `POST /servers/fx/mcp HTTP/1.1\r\nHost: 127.0.0.1:${u.port}\r\nAuthorization: Bearer ${front.token}\r\n` +
        `Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: ${sid}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    const c = await d.control();
    await until(async () => (await c.request("mcpd/status")).result.http.slowReaders >= 1, "slow reader dropped", 60_000);
    sock.destroy();
    const other = await openSession(front);
    const ok = await post(front, "/mcp", { jsonrpc: "2.0", id: 5, method: "ping" }, { "mcp-session-id": other });
    expect(await ok.json()).toMatchObject({ id: 5, result: {} });
    c.close();
  });
});

describe("legacy HTTP+SSE sessions", () => {
  it("end when their stream closes: the router forgets them", async () => {
    const c = await d.control();
    const count = async (): Promise<number> => (await c.request("mcpd/status")).result.http.legacySessions;
    const before = await count();
    const res = await fetch(new URL("/sse", front.origin), { headers: { ...authHeaders(front), accept: "text/event-stream" } });
    const events = sseReader(res);
    const endpoint = await events.next();
    expect(endpoint.event).toBe("endpoint");
    expect(endpoint.data).toMatch(/^\/messages\?sessionId=[A-Za-z0-9_-]{32}$/);
    expect(await count()).toBe(before + 1);
    await events.cancel();
    await until(async () => (await count()) === before, "legacy session ended");
    const stale = await fetch(new URL(endpoint.data, front.origin), {
      method: "POST",
      headers: { ...authHeaders(front), "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    expect(stale.status).toBe(404);
    await stale.text();
    c.close();
  });
});

describe("the port and reloads", () => {
  let blocker: Server | undefined;
  let other: TestDaemon | undefined;
  afterEach(async () => {
    await other?.stop();
    other = undefined;
    await new Promise((r) => (blocker ? blocker.close(() => r(undefined)) : r(undefined)));
    blocker = undefined;
  });

  it("a taken port never stops the daemon: it serves the socket and says why HTTP is off in status", async () => {
    blocker = createServer();
    await new Promise<void>((r) => blocker!.listen(0, "127.0.0.1", () => r()));
    const port = (blocker.address() as { port: number }).port;
    other = await startTestDaemon({ fx: fixture("fx") }, { env: { MCPD_HTTP_PORT: String(port) } });
    const c = await other.control();
    const st = (await c.request("mcpd/status")).result;
    expect(st.http.listening).toBe(false);
    expect(st.http.url).toBeNull();
    expect(st.http.error).toMatch(new RegExp(`port ${port} .*in use`));
    expect(st.servers.map((s: any) => s.name)).toEqual(["fx"]);
    c.close();
  });

  it("mcpd.http is hot-reloadable: disabled, the front end stops; enabled again, it serves", async () => {
    other = await startTestDaemon({ fx: fixture("fx") });
    const first = await httpFront(other);
    const settings = (http: object): void => {
      writeFileSync(other!.configFile, JSON.stringify({ mcpd: { http }, mcpServers: { fx: fixture("fx") } }));
    };
    const c = await other.control();
    settings({ enabled: false });
    expect((await c.request("mcpd/reload")).result).toBeDefined();
    const st = (await c.request("mcpd/status")).result.http;
    expect(st).toMatchObject({ enabled: false, listening: false, url: null });
    await expect(fetch(first.url, { method: "POST" })).rejects.toThrow();
    settings({ enabled: true });
    await c.request("mcpd/reload");
    const back = await httpFront(other);
    expect(back.token).toBe(first.token);
    const sid = await openSession(back);
    expect(sid).toBeTruthy();
    c.close();
  });
});
