/**
 * The HTTP front end's deadlines for slow clients (slowloris): a connection that never finishes its
 * headers, one that never finishes its body, and one that sends nothing are all closed by
 * `mcpd.http.requestTimeoutMs` (set small here), not by Node's defaults (headers 60 s, checked every 30 s).
 */
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestDaemon, fixture, startTestDaemon, until } from "../e2e/harness.js";
import { type HttpFrontInfo, httpFront } from "./http-harness.js";

/** mcpd.http.requestTimeoutMs for this daemon. */
const TIMEOUT_MS = 1_000;
/** Far below Node's defaults (which closed these connections after 37 to 60 s), far above TIMEOUT_MS. */
const CLOSED_WITHIN_MS = 15_000;

let d: TestDaemon;
let front: HttpFrontInfo;

beforeAll(async () => {
  d = await startTestDaemon({ fx: fixture("fx") }, { settings: { http: { requestTimeoutMs: TIMEOUT_MS } } });
  front = await httpFront(d);
});
afterAll(async () => {
  await d?.stop();
});

/** A raw connection to the front end that records what it receives and whether the daemon closed it. */
async function slowClient(): Promise<{ socket: Socket; received: () => string; closed: () => boolean }> {
  const socket = connect(Number(new URL(front.origin).port), "127.0.0.1");
  let text = "";
  let closed = false;
  socket.on("data", (d) => {
    text += String(d);
  });
  socket.on("error", () => {});
  socket.on("close", () => {
    closed = true;
  });
  await new Promise((r) => socket.once("connect", r));
  return { socket, received: () => text, closed: () => closed };
}

const closedByDaemon = (c: { closed: () => boolean }, what: string): Promise<boolean> =>
  until(() => c.closed(), `the daemon to close ${what}`, CLOSED_WITHIN_MS);

describe("slow clients are cut off by mcpd.http.requestTimeoutMs", () => {
  it("regression: headers never finished held the connection 58-60 s (Node's defaults): closed by the configured limit", async () => {
    const c = await slowClient();
    c.socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${front.token}\r\n`);
    await closedByDaemon(c, "a connection whose headers never end");
    expect(c.received()).toMatch(/^(HTTP\/1\.1 408|$)/);
  });

  it("regression: a body never finished held the connection 58-60 s: 408 and closed by the configured limit", async () => {
    const c = await slowClient();
    c.socket.write(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${front.token}\r\nContent-Type: application/json\r\n` +
        `Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{"jsonrpc":`,
    );
    await closedByDaemon(c, "a connection whose body never ends");
    expect(c.received()).toMatch(/^HTTP\/1\.1 408/);
  });

  it("regression: a connection that sent nothing was held 37 s: closed by the configured limit", async () => {
    const c = await slowClient();
    await closedByDaemon(c, "a connection that sends nothing");
    expect(c.received()).toMatch(/^(HTTP\/1\.1 408|$)/);
  });

  it("a request that arrives in time is served on the same daemon", async () => {
    const r = await fetch(front.url, {
      method: "POST",
      headers: { authorization: `Bearer ${front.token}`, "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      }),
    });
    expect(r.status).toBe(200);
    await r.text();
  });
});
