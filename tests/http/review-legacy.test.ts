/**
 * Regressions found reviewing the legacy HTTP+SSE transport (2024-11-05): a session lives exactly as
 * long as its stream, and is reached only through the endpoint its stream named.
 */
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestDaemon, fixture, startTestDaemon, until } from "../e2e/harness.js";
import { type HttpFrontInfo, authHeaders, httpFront, sseReader } from "./http-harness.js";

let d: TestDaemon;
let front: HttpFrontInfo;

beforeAll(async () => {
  d = await startTestDaemon({ fx: fixture("fx"), pc: fixture("pc", [], { sharing: "per-client" }) });
  front = await httpFront(d);
});
afterAll(async () => {
  await d?.stop();
});

async function status(): Promise<any> {
  const c = await d.control();
  try {
    return (await c.request("mcpd/status")).result;
  } finally {
    c.close();
  }
}

/** Opens a legacy session on `ssePath`; returns its stream's reader and the endpoint it names. */
async function openLegacy(ssePath: string): Promise<{ events: ReturnType<typeof sseReader>; endpoint: string }> {
  const res = await fetch(new URL(ssePath, front.origin), { headers: { ...authHeaders(front), accept: "text/event-stream" } });
  expect(res.status).toBe(200);
  const events = sseReader(res);
  const ev = await events.next();
  expect(ev.event).toBe("endpoint");
  return { events, endpoint: ev.data };
}

describe("legacy sessions", () => {
  it("regression: a POST whose session ended while its body was arriving was accepted and run by the ended session", async () => {
    const { events, endpoint } = await openLegacy("/servers/pc/sse");
    const before = (await status()).http.legacySessions;
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { text: "late" } } });
    const u = new URL(endpoint, front.origin);
    const answer = new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        {
          host: u.hostname,
          port: u.port,
          path: `${u.pathname}${u.search}`,
          method: "POST",
          headers: {
            ...authHeaders(front),
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
            // The server sends 100 Continue as it hands the request to the front end: the session was found.
            expect: "100-continue",
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on("continue", () => {
        // The session ends (its stream closes) before the body has arrived.
        (async () => {
          await events.cancel();
          await until(async () => (await status()).http.legacySessions === before - 1, "the legacy session ended");
          req.end(body);
        })().catch(reject);
      });
      req.on("error", reject);
      req.flushHeaders();
    });
    expect(await answer).toBe(404);
    // And nothing was started for it: a per-client server process exists only for a live session.
    expect((await status()).servers.find((s: any) => s.name === "pc").sessions).toBe(0);
  });
});

describe("legacy endpoints", () => {
  it("regression: a legacy session could be posted to through another endpoint's messages path (as Streamable HTTP's, it is 404)", async () => {
    const { events, endpoint } = await openLegacy("/servers/fx/sse");
    expect(endpoint).toMatch(/^\/servers\/fx\/messages\?sessionId=/);
    const elsewhere = endpoint.replace("/servers/fx/messages", "/messages");
    const ping = (path: string): Promise<Response> =>
      fetch(new URL(path, front.origin), {
        method: "POST",
        headers: { ...authHeaders(front), "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      });
    const wrong = await ping(elsewhere);
    expect(wrong.status).toBe(404);
    expect((await wrong.json()).error.data.mcpdCode).toBe("MCPD_HTTP_SESSION_NOT_FOUND");
    const right = await ping(endpoint);
    expect(right.status).toBe(202);
    await right.text();
    expect(JSON.parse((await events.next()).data)).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
    await events.cancel();
  });
});
