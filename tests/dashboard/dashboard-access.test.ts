/**
 * The dashboard's own kind of access over plain HTTP (issue 36): a one-time login link turns into an
 * HttpOnly, SameSite=Strict cookie; actions need that cookie, the CSRF token and the dashboard's exact
 * Origin; the agents' bearer token never opens the dashboard, and the cookie never opens /mcp.
 */
import { request as httpRequest } from "node:http";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { fixture, startTestDaemon, until, type TestDaemon } from "../e2e/harness.js";
import { httpFront, openSession } from "../http/http-harness.js";
import { logIn, loginLink } from "./dashboard-harness.js";

let d: TestDaemon | undefined;
afterEach(async () => {
  await d?.stop();
  d = undefined;
});

/** A GET with exactly these headers (fetch will not send a Host of our choosing): its status. */
function get(origin: string, path: string, headers: Record<string, string>): Promise<number> {
  const u = new URL(path, origin);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, path: `${u.pathname}${u.search}`, headers }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("the dashboard's access", () => {
  it("answers only loopback Host names and, when a request has an Origin, only its own exact one (scheme, host and port)", async () => {
    d = await startTestDaemon({ fx: fixture("fx") });
    const front = await httpFront(d);
    const { cookie } = await logIn(d, front);
    const host = new URL(front.origin).host;
    const port = Number(new URL(front.origin).port);
    const otherPort = `http://127.0.0.1:${port === 65535 ? port - 1 : port + 1}`;
    const link = await loginLink(d);
    const path = `${new URL(link).pathname}${new URL(link).search}`;
    // A rebound name is refused before the link is looked at: the link still works afterwards.
    expect(await get(front.origin, path, { host: `evil.example:${port}` }), "a foreign Host").toBe(403);
    expect(await get(front.origin, "/", { host: `evil.example:${port}`, cookie }), "a foreign Host").toBe(403);
    for (const p of ["/", "/dashboard/api/server?name=fx", "/dashboard/app.js"]) {
      expect(await get(front.origin, p, { host, cookie, origin: otherPort }), `another port: ${p}`).toBe(403);
      expect(await get(front.origin, p, { host, cookie, origin: `https://${host}` }), `another scheme: ${p}`).toBe(403);
      expect(await get(front.origin, p, { host, cookie, origin: `http://localhost:${port}` }), `another name: ${p}`).toBe(403);
      expect(await get(front.origin, p, { host, cookie, origin: front.origin }), `its own: ${p}`).toBe(200);
      expect(await get(front.origin, p, { host, cookie }), `no Origin: ${p}`).toBe(200);
    }
    expect(await get(front.origin, path, { host, origin: otherPort }), "the link from another port").toBe(403);
    expect(await get(front.origin, path, { host }), "the link, unused so far").toBe(303);
  });

  it("the login link works once, within its minute, and sets an HttpOnly SameSite=Strict session cookie", async () => {
    d = await startTestDaemon({ fx: fixture("fx") });
    const front = await httpFront(d);
    const link = await loginLink(d);
    expect(link.startsWith(`${front.origin}/dashboard/login?ticket=`)).toBe(true);
    const first = await fetch(link, { redirect: "manual" });
    expect(first.status).toBe(303);
    expect(first.headers.get("location")).toBe("/");
    const setCookie = first.headers.get("set-cookie") ?? "";
    expect(setCookie).toMatch(/; HttpOnly/);
    expect(setCookie).toMatch(/; SameSite=Strict/);
    expect(setCookie).toMatch(/; Path=\//);
    const again = await fetch(link, { redirect: "manual" });
    expect(again.status).toBe(401);
    expect(again.headers.get("set-cookie")).toBeNull();
    const page = await fetch(`${front.origin}/`, { headers: { cookie: setCookie.split(";")[0] as string } });
    expect(page.status).toBe(200);
    const csp = page.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
  });

  it("the whole page (its HTML, script and style, as served) is at most 150 KB compressed, and nothing of it comes from elsewhere", async () => {
    d = await startTestDaemon({ fx: fixture("fx") });
    const front = await httpFront(d);
    const { cookie } = await logIn(d, front);
    const page = await (await fetch(`${front.origin}/`, { headers: { cookie } })).text();
    const refs = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
    expect(refs.sort()).toEqual(["/dashboard/app.css", "/dashboard/app.js"]);
    let compressed = gzipSync(page).length;
    for (const ref of refs) {
      const r = await fetch(`${front.origin}${ref}`, { headers: { cookie } });
      expect(r.status).toBe(200);
      const body = Buffer.from(await r.arrayBuffer());
      expect(body.toString("utf8")).not.toMatch(/https?:\/\/(?!www\.w3\.org\/)/);
      compressed += gzipSync(body, { level: 9 }).length;
    }
    expect(compressed).toBeLessThanOrEqual(150 * 1024);
  });

  it("the bearer token (main or scoped) opens neither the dashboard nor its actions, and the cookie does not open /mcp", async () => {
    d = await startTestDaemon({ fx: fixture("fx") });
    const front = await httpFront(d);
    const bearer = { authorization: `Bearer ${front.token}` };
    expect((await fetch(`${front.origin}/`, { headers: bearer })).status).toBe(401);
    expect((await fetch(`${front.origin}/dashboard/events`, { headers: bearer })).status).toBe(401);
    const act = await fetch(`${front.origin}/dashboard/api/action`, {
      method: "POST",
      headers: { ...bearer, "content-type": "application/json", origin: front.origin },
      body: JSON.stringify({ action: "reload" }),
    });
    expect(act.status).toBe(401);
    const c = await d.control();
    const scoped = (await c.request("mcpd/httpTokenIssue", { server: "fx" })).result.token as string;
    c.close();
    expect((await fetch(`${front.origin}/`, { headers: { authorization: `Bearer ${scoped}` } })).status).toBe(401);
    const { cookie } = await logIn(d, front);
    const mcp = await fetch(front.url, {
      method: "POST",
      headers: { cookie, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    expect(mcp.status).toBe(401);
    // The agents' front end is unchanged: the token still opens /mcp.
    expect(await openSession(front)).toBeTruthy();
  });

  it("an action and a try-a-tool call each need the CSRF token, the dashboard's own exact Origin (another loopback port is refused) and the cookie", async () => {
    d = await startTestDaemon({ fx: fixture("fx") });
    const front = await httpFront(d);
    const { cookie, csrf } = await logIn(d, front);
    const port = Number(new URL(front.origin).port);
    const otherPort = `http://127.0.0.1:${port === 65535 ? port - 1 : port + 1}`;
    // Both kinds of action: the control actions, and "try a tool" (a call through mcpd).
    const bodies = {
      "/dashboard/api/action": { action: "reload" },
      "/dashboard/api/call": { server: "fx", tool: "echo", arguments: { text: "csrf" } },
    };
    for (const [path, body] of Object.entries(bodies)) {
      const action = (headers: Record<string, string>, type = "application/json") =>
        fetch(`${front.origin}${path}`, {
          method: "POST",
          headers: { cookie, "content-type": type, ...headers },
          body: JSON.stringify(body),
        });
      expect((await action({ origin: front.origin })).status, `${path}: no CSRF token`).toBe(403);
      expect((await action({ origin: otherPort, "x-mcpd-csrf": csrf })).status, `${path}: another port`).toBe(403);
      expect((await action({ "x-mcpd-csrf": csrf })).status, `${path}: no Origin`).toBe(403);
      expect((await action({ origin: front.origin, "x-mcpd-csrf": "x".repeat(43) })).status, `${path}: a wrong token`).toBe(403);
      expect((await action({ origin: front.origin, "x-mcpd-csrf": csrf }, "text/plain")).status, `${path}: not JSON`).toBe(403);
      const bearer = { origin: front.origin, "x-mcpd-csrf": csrf, cookie: "", authorization: `Bearer ${front.token}` };
      expect((await action(bearer)).status, `${path}: the bearer token in place of the cookie`).toBe(401);
      const ok = await action({ origin: front.origin, "x-mcpd-csrf": csrf });
      expect(ok.status, path).toBe(200);
      expect(await ok.json()).toMatchObject({ ok: true });
    }
    const reload = await fetch(`${front.origin}/dashboard/api/action`, {
      method: "POST",
      headers: { cookie, "content-type": "application/json", origin: front.origin, "x-mcpd-csrf": csrf },
      body: JSON.stringify({ action: "reload" }),
    });
    expect(await reload.json()).toMatchObject({ ok: true, result: { added: [], removed: [] } });
  });

  it("a server's page lists its tools with the profiles that select each, its prompts, resources and stderr", async () => {
    const profiles = {
      coding: { tools: { include: ["fx__echo", "fx__add"] } },
      ops: { tools: { include: ["fx__echo"] } },
      other: { tools: { include: ["none__here"] } },
    };
    d = await startTestDaemon({ fx: fixture("fx") }, { settings: { profiles } });
    const front = await httpFront(d);
    const { cookie } = await logIn(d, front);
    const c = await d.control();
    await until(async () => (await c.request("mcpd/servers")).result?.servers?.[0]?.state === "ready", "fx ready");
    c.close();
    const detail = await (await fetch(`${front.origin}/dashboard/api/server?name=fx`, { headers: { cookie } })).json();
    const byName = new Map((detail.tools.result.tools as any[]).map((t) => [t.name, t.profiles]));
    expect(byName.get("echo")).toEqual(["coding", "ops"]);
    expect(byName.get("add")).toEqual(["coding"]);
    expect(byName.get("slow")).toEqual([]);
    expect(detail.prompts.result.prompts.map((p: any) => p.name)).toContain("greet");
    expect(detail.resources.ok).toBe(true);
    expect(detail.stderr.result.lines.join("\n")).toContain("fixture fx ready");
  });
});
