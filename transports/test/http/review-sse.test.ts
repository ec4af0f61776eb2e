/**
 * Regressions found by review in the Streamable HTTP / legacy SSE client, each against a tiny HTTP
 * server of its own on 127.0.0.1 (port 0).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { HttpTransport } from "../../src/http/http-transport.js";
import type { HttpTransportOptions } from "../../src/http/http-config.js";
import type { HttpServerConfig } from "../../src/transport.js";
import { INIT_PARAMS, rejection, waitFor } from "./http-helpers.js";

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: Record<string, unknown> | undefined) => void;

const servers: http.Server[] = [];
const transports: HttpTransport[] = [];

afterEach(async () => {
  await Promise.all(transports.splice(0).map((t) => t.close().catch(() => {})));
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
});

/** A server whose handler gets each request with its parsed JSON body. */
async function serve(handler: Handler): Promise<string> {
  const s = http.createServer((req, res) => {
    let text = "";
    req.on("data", (c: Buffer) => (text += c.toString()));
    req.on("end", () => handler(req, res, text ? (JSON.parse(text) as Record<string, unknown>) : undefined));
  });
  servers.push(s);
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}/mcp`;
}

async function connected(config: Partial<HttpServerConfig> & { url: string }, options: HttpTransportOptions = {}): Promise<HttpTransport> {
  const t = new HttpTransport({ type: "http", ...config } as HttpServerConfig, options);
  transports.push(t);
  await t.connect();
  return t;
}

function initResult(id: unknown, protocolVersion = "2025-06-18"): string {
  return JSON.stringify({ jsonrpc: "2.0", id, result: { protocolVersion, capabilities: {}, serverInfo: { name: "x", version: "1" } } });
}

/** Answers initialize (session `sid`), notifications (202), GET (405), DELETE; hands other requests to `call`. */
function streamable(call: Handler, sid: () => string = () => "S1"): Handler {
  return (req, res, body) => {
    if (req.method === "GET") return void res.writeHead(405).end();
    if (req.method === "DELETE") return void res.writeHead(200).end();
    if (body?.method === "initialize") {
      res.writeHead(200, { "content-type": "application/json", "mcp-session-id": sid() });
      return void res.end(initResult(body.id));
    }
    if (body === undefined || !("id" in body)) return void res.writeHead(202).end();
    call(req, res, body);
  };
}

const sse = (data: unknown, id?: string): string => `${id === undefined ? "" : `id: ${id}\n`}data: ${JSON.stringify(data)}\n\n`;
const progress = (n: number) => ({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: n } });

/** Keepalives a quiet stream carries (sse-starlette's ping comment, id-only events), `bytes` of them. */
function keepalives(bytes: number): string {
  const unit = ": ping - 2025-01-01 00:00:00.000000\r\n\r\nid: k\n\n";
  return unit.repeat(Math.ceil(bytes / unit.length));
}

describe("review: SSE event size bound", () => {
  it("regression: an oversized event that starts in the chunk ending a previous event fails with MCPD_MESSAGE_TOO_LARGE", async () => {
    const limit = 4096;
    let rest: (() => void) | undefined;
    const url = await serve(
      streamable((_req, res, body) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        const big = `data: ${JSON.stringify({ jsonrpc: "2.0", id: body?.id, result: { content: [{ type: "text", text: "x".repeat(limit) }] } })}`;
        // The progress event and the start of the big one in one write; the rest once the progress arrived.
        res.write(sse(progress(1)) + big.slice(0, limit / 2));
        rest = () => res.write(`${big.slice(limit / 2)}\n\n`);
      }),
    );
    const t = await connected({ url }, { maxBodyBytes: limit });
    t.onNotification = () => rest?.();
    await t.request("initialize", INIT_PARAMS);
    const err = await rejection(t.request("tools/call", { name: "x" }, { timeout: 10_000 }));
    expect(err.code).toBe("MCPD_MESSAGE_TOO_LARGE");
  });

  it("regression: keepalive comments and id-only events on a reply stream do not add up to an oversized event", async () => {
    const url = await serve(
      streamable((_req, res, body) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(keepalives(512 * 1024) + sse({ jsonrpc: "2.0", id: body?.id, result: { content: [] } }));
      }),
    );
    const t = await connected({ url }, { maxBodyBytes: 4096 });
    await t.request("initialize", INIT_PARAMS);
    await expect(t.request("tools/call", { name: "slow" }, { timeout: 10_000 })).resolves.toEqual({ content: [] });
  });

  it("regression: keepalive comments on a quiet legacy stream do not close the session", async () => {
    let stream: http.ServerResponse | undefined;
    const url = await serve((req, res, body) => {
      if (req.method === "GET") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(`event: endpoint\ndata: /messages?sessionId=abc\n\n${keepalives(512 * 1024)}`);
        stream = res;
        return;
      }
      res.writeHead(202).end("Accepted");
      if (body && "id" in body) stream?.write(`event: message\ndata: ${initResult(body.id, "2024-11-05")}\n\n`);
    });
    const t = await connected({ type: "sse", url }, { maxBodyBytes: 4096 });
    let closed: unknown;
    t.onClose = (info) => (closed = info);
    // The answer comes on the stream after the keepalives: by then every one of them was read.
    await expect(t.request("initialize", { ...INIT_PARAMS, protocolVersion: "2024-11-05" })).resolves.toMatchObject({
      protocolVersion: "2024-11-05",
    });
    expect(closed).toBeUndefined();
    expect(t.connected).toBe(true);
  });
});

describe("review: resuming an SSE reply", () => {
  it("regression: a resumption that only replays the event already seen is no progress, and is not delivered again", async () => {
    let gets = 0;
    const replay = `retry: 10\n\n${sse(progress(1), "e1")}`;
    const url = await serve((req, res, body) => {
      if (req.method === "GET") {
        gets++;
        res.writeHead(200, { "content-type": "text/event-stream" });
        return void res.end(replay);
      }
      streamable((_req, r) => {
        r.writeHead(200, { "content-type": "text/event-stream" });
        // The stream drops before the response; every resumption replays e1 (inclusive) and drops again.
        r.end(replay);
      })(req, res, body);
    });
    const t = await connected({ url }, { sseResumeAttempts: 3 });
    let notes = 0;
    t.onNotification = () => notes++;
    await t.request("initialize", INIT_PARAMS);
    const err = await rejection(t.request("tools/call", { name: "x" }, { timeout: 10_000 }));
    expect(err.code).toBe("MCPD_NO_RESPONSE");
    expect(gets).toBe(3);
    expect(notes).toBe(1);
  });

  it("regression: a huge retry: on a reply stream is capped at listenerMaxDelayMs, not overflowed to 1 ms", async () => {
    const at: number[] = [];
    const url = await serve((req, res, body) => {
      if (req.method === "GET") {
        at.push(Date.now());
        res.writeHead(200, { "content-type": "text/event-stream" });
        return void res.end();
      }
      streamable((_req, r) => {
        at.push(Date.now());
        r.writeHead(200, { "content-type": "text/event-stream" });
        r.end("id: 1\nretry: 9999999999\ndata:\n\n");
      })(req, res, body);
    });
    const t = await connected({ url }, { sseResumeAttempts: 1, listenerMaxDelayMs: 300 });
    await t.request("initialize", INIT_PARAMS);
    // Settles (no parking for 115 days): the wait was capped, the resumption went out and brought nothing.
    const err = await rejection(t.request("tools/call", { name: "x" }, { timeout: 20_000 }));
    expect(err.code).toBe("MCPD_NO_RESPONSE");
    expect(at).toHaveLength(2);
    // A lower bound only: the resumption waited the cap (an overflowed timer fires after 1 ms).
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(300);
  });
});

describe("review: the background listener", () => {
  it("regression: a 404 to the listener's GET heals the session and listens on the new one, without the old Last-Event-ID", async () => {
    let sid = "S0";
    let inits = 0;
    const gets: Array<{ sid: unknown; lastEventId: unknown; status: number }> = [];
    const note = (n: number) => ({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: n } });
    const others = streamable(
      () => {},
      () => {
        inits++;
        sid = `S${inits}`;
        return sid;
      },
    );
    const url = await serve((req, res, body) => {
      if (req.method !== "GET") return others(req, res, body);
      const status = req.headers["mcp-session-id"] === sid ? 200 : 404;
      gets.push({ sid: req.headers["mcp-session-id"], lastEventId: req.headers["last-event-id"], status });
      if (status === 404) return void res.writeHead(404).end("session not found");
      res.writeHead(200, { "content-type": "text/event-stream" });
      if (sid === "S1") {
        // The server forgets the session and closes the stream: the listener's reconnect meets a 404.
        sid = "expired";
        return void res.end(sse(note(1), "L1"));
      }
      res.write(sse(note(2), "M1"));
    });
    const t = await connected({ url }, { listenerInitialDelayMs: 20, listenerMaxDelayMs: 200 });
    const seen: unknown[] = [];
    t.onNotification = (_method, params) => seen.push(params?.data);
    await t.request("initialize", INIT_PARAMS);
    t.startSSEListener();
    await waitFor(() => seen.length === 2, { timeoutMs: 5_000, message: "a message on the healed session's listener" });
    expect(seen).toEqual([1, 2]);
    expect(inits).toBe(2);
    expect(t.info().sessionId).toBe("S2");
    expect(gets).toEqual([
      { sid: "S1", lastEventId: undefined, status: 200 },
      { sid: "S1", lastEventId: "L1", status: 404 },
      { sid: "S2", lastEventId: undefined, status: 200 },
    ]);
    expect(t.listenerState).toBe("running");
  });

  it("regression: a listener stream that only replays an event already delivered is no progress, and the event is not delivered again (each reconnect delivered it, and reset the backoff)", async () => {
    const gets: unknown[] = [];
    const note = { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "once" } };
    const others = streamable(() => {});
    const url = await serve((req, res, body) => {
      if (req.method !== "GET") return others(req, res, body);
      gets.push(req.headers["last-event-id"]);
      // Every GET gets the same event again (a server replaying from Last-Event-ID inclusive), then the end.
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(`retry: 10\n${sse(note, "E1")}`);
    });
    const t = await connected({ url }, { listenerInitialDelayMs: 10, listenerMaxDelayMs: 100 });
    const seen: unknown[] = [];
    t.onNotification = (_method, params) => seen.push(params?.data);
    await t.request("initialize", INIT_PARAMS);
    t.startSSEListener();
    await waitFor(() => gets.length >= 5, { timeoutMs: 10_000, message: "the listener to reconnect a few times" });
    expect(seen).toEqual(["once"]);
    expect(gets.slice(1).every((id) => id === "E1")).toBe(true);
  });
});
