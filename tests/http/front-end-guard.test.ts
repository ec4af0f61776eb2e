/**
 * The HTTP front end's defences: the bearer token (kept in a 0600 file), Host/Origin checks against
 * loopback names (DNS rebinding), and the session rules of Streamable HTTP (a session id is required,
 * an unknown or expired one is 404, DELETE ends it, an unsupported protocol version is 400).
 */
import { statSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestDaemon, fixture, startTestDaemon, until } from "../e2e/harness.js";
import { type HttpFrontInfo, httpFront, openSession, post } from "./http-harness.js";

/** A request with headers fetch() will not let us set (Host), answered with its status and body. */
function rawRequest(front: HttpFrontInfo, headers: Record<string, string>, body = ""): Promise<{ status: number; body: string }> {
  const u = new URL(front.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, path: u.pathname, method: "POST", headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "guard-test", version: "1" } },
};

let d: TestDaemon;
let front: HttpFrontInfo;

beforeAll(async () => {
  d = await startTestDaemon({ fx: fixture("fx") }, { settings: { http: { sessionIdleMs: 1_000 } } });
  front = await httpFront(d);
});
afterAll(async () => {
  await d?.stop();
});

describe("the bearer token", () => {
  it("is kept in a file only its owner can read, and the front end is on by default", () => {
    expect(statSync(front.tokenFile).mode & 0o777).toBe(0o600);
    expect(front.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(front.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });

  it("listens on 127.0.0.1 and ::1 (same port) and nowhere else", async ({ skip }) => {
    const port = new URL(front.url).port;
    expect(front.status.addresses[0]).toBe(`127.0.0.1:${port}`);
    if (!front.status.addresses.includes(`[::1]:${port}`)) skip("this machine has no IPv6 loopback (::1 could not be bound)");
    const r = await fetch(`http://[::1]:${port}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${front.token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify(INIT),
    });
    expect(r.status).toBe(200);
    await r.text();
    expect(front.status.addresses).toEqual([`127.0.0.1:${port}`, `[::1]:${port}`]);
  });

  it("is required: none or a wrong one gets 401 with WWW-Authenticate and a message saying how to get it", async () => {
    for (const authorization of [
      undefined,
      "Bearer wrong-token-wrong-token-wrong-token-wrong",
      `Basic ${front.token}`,
      `Bearer ${front.token}x`,
    ]) {
      const r = await fetch(front.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...(authorization ? { authorization } : {}),
        },
        body: JSON.stringify(INIT),
      });
      expect(r.status, String(authorization)).toBe(401);
      expect(r.headers.get("www-authenticate")).toMatch(/^Bearer/);
      const body = await r.json();
      expect(body.error.data.mcpdCode).toBe("MCPD_HTTP_UNAUTHORIZED");
      expect(body.error.message).toMatch(/mcpd http/);
    }
    const ok = await post(front, "/mcp", INIT);
    expect(ok.status).toBe(200);
    await ok.text();
  });
});

describe("Host and Origin (DNS rebinding protection)", () => {
  const port = (): string => new URL(front.url).port;
  const base = (): Record<string, string> => ({
    authorization: `Bearer ${front.token}`,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  });

  it("refuses a Host that is not a loopback name with 403, even with the token", async () => {
    for (const host of ["evil.example.com", `evil.example.com:${port()}`, "127.0.0.1.evil.com", "10.0.0.1"]) {
      const r = await rawRequest(front, { ...base(), host }, JSON.stringify(INIT));
      expect(r.status, host).toBe(403);
      expect(JSON.parse(r.body).error.data.mcpdCode).toBe("MCPD_HTTP_FORBIDDEN_HOST");
    }
  });

  it("refuses a browser Origin that is not loopback with 403", async () => {
    for (const origin of ["http://evil.example.com", "null", `http://evil.example.com:${port()}`, "file://"]) {
      const r = await rawRequest(front, { ...base(), host: `127.0.0.1:${port()}`, origin }, JSON.stringify(INIT));
      expect(r.status, origin).toBe(403);
    }
  });

  it("accepts localhost, 127.0.0.1 and [::1] in Host and Origin", async () => {
    for (const name of ["localhost", "127.0.0.1", "[::1]"]) {
      const r = await rawRequest(front, { ...base(), host: `${name}:${port()}`, origin: `http://${name}:${port()}` }, JSON.stringify(INIT));
      expect(r.status, name).toBe(200);
    }
  });
});

describe("sessions", () => {
  it("needs Mcp-Session-Id after initialize (400), and answers an unknown one with 404", async () => {
    const list = { jsonrpc: "2.0", id: 2, method: "tools/list" };
    const none = await post(front, "/mcp", list);
    expect(none.status).toBe(400);
    expect((await none.json()).error.message).toMatch(/mcp-session-id/i);
    const unknown = await post(front, "/mcp", list, { "mcp-session-id": "no-such-session" });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error.data.mcpdCode).toBe("MCPD_HTTP_SESSION_NOT_FOUND");
  });

  it("is bound to the endpoint that opened it: another view's path answers 404", async () => {
    const sid = await openSession(front, "/mcp");
    const r = await post(front, "/servers/fx/mcp", { jsonrpc: "2.0", id: 2, method: "tools/list" }, { "mcp-session-id": sid });
    expect(r.status).toBe(404);
    await r.text();
  });

  it("refuses an MCP-Protocol-Version mcpd does not speak with 400 naming the ones it does", async () => {
    const sid = await openSession(front);
    const r = await post(
      front,
      "/mcp",
      { jsonrpc: "2.0", id: 2, method: "ping" },
      { "mcp-session-id": sid, "mcp-protocol-version": "1999-01-01" },
    );
    expect(r.status).toBe(400);
    expect((await r.json()).error.message).toMatch(/2025-11-25/);
  });

  it("ends on DELETE: the router drops it and its id answers 404 from then on", async () => {
    const sid = await openSession(front);
    const ok = await post(front, "/mcp", { jsonrpc: "2.0", id: 2, method: "ping" }, { "mcp-session-id": sid });
    expect(await ok.json()).toEqual({ jsonrpc: "2.0", id: 2, result: {} });
    const del = await fetch(front.url, { method: "DELETE", headers: { authorization: `Bearer ${front.token}`, "mcp-session-id": sid } });
    expect(del.status).toBe(200);
    const after = await post(front, "/mcp", { jsonrpc: "2.0", id: 3, method: "ping" }, { "mcp-session-id": sid });
    expect(after.status).toBe(404);
    await after.text();
  });

  it("expires after mcpd.http.sessionIdleMs with nothing under way (404), and the client can initialize again", async () => {
    // A client name of its own: the sessions the tests above opened expire as well.
    const init = await post(front, "/mcp", { ...INIT, params: { ...INIT.params, clientInfo: { name: "idle-expiry", version: "1" } } });
    expect(init.status).toBe(200);
    const sid = init.headers.get("mcp-session-id") as string;
    await init.text();
    const c = await d.control();
    const listed = async (): Promise<boolean> => {
      const st = await c.request("mcpd/status");
      return st.result.clients.some((cl: any) => cl.face === "http" && cl.clientInfo?.name === "idle-expiry");
    };
    expect(await listed()).toBe(true);
    // Left idle, the session ends at a sweep after sessionIdleMs and leaves mcpd/status (asking the control
    // socket is no activity of the session's). Only then is it asked again: a ping would count as activity.
    await until(async () => !(await listed()), "the idle session to expire and leave mcpd/status", 30_000);
    const r = await post(front, "/mcp", { jsonrpc: "2.0", id: 9, method: "ping" }, { "mcp-session-id": sid });
    const status = r.status;
    await r.text();
    expect(status).toBe(404);
    const st = await c.request("mcpd/status");
    expect(st.result.http.expired).toBeGreaterThanOrEqual(1);
    c.close();
    expect(await openSession(front)).toMatch(/^[A-Za-z0-9_-]{32}$/);
  });
});
