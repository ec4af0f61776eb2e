/**
 * Scoped HTTP tokens (trust findings: before them the one token opened every endpoint, so a profile was
 * no access boundary over HTTP). A token issued for a profile or a server opens that endpoint alone, in
 * both its Streamable HTTP and legacy SSE forms, and gets 403 anywhere else; the main token still opens
 * everything; tokens are listed without secrets, kept as SHA-256 digests, revoked at once (sessions
 * opened with one end), refused to agents, bounded, and open nothing while their name is out of the config.
 */
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { dirname, join } from "node:path";
import { McpdHttpTokenIssue, McpdHttpTokenList, McpdHttpTokenRevoke, McpdReload } from "@mcpd/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RawClient, type TestDaemon, fixture, startTestDaemon } from "../e2e/harness.js";
import { type HttpFrontInfo, authHeaders, httpFront, openSession, post, sdkClient, sseReader } from "./http-harness.js";

const servers = { fx: fixture("fx"), other: fixture("other") };
const profiles = { coding: { servers: ["fx"] }, ops: { servers: ["other"] } };
let d: TestDaemon;
let front: HttpFrontInfo;
let control: RawClient;

beforeAll(async () => {
  d = await startTestDaemon(servers, { settings: { profiles } });
  front = await httpFront(d);
  control = await d.control();
});
afterAll(async () => {
  await d?.stop();
});

const INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "scoped", version: "1" } },
};

/** The front end as a client holding `token` sees it. */
const holding = (token: string): HttpFrontInfo => ({ ...front, token });

async function issue(params: { profile?: string; server?: string }): Promise<{ id: string; token: string }> {
  const r = await control.request(McpdHttpTokenIssue.method, params);
  if (!r.result) throw new Error(`issue ${JSON.stringify(params)}: ${JSON.stringify(r.error)}`);
  return r.result;
}

/** The tool names an official SDK client holding `token` lists at `path` over `kind`. */
async function toolsAt(token: string, kind: "streamable" | "sse", path: string): Promise<string[]> {
  const { client } = await sdkClient(holding(token), kind, path);
  try {
    return (await client.listTools()).tools.map((t) => t.name).sort();
  } finally {
    await client.close();
  }
}

/** What a POSTed initialize at `path` with `token` is answered: the status and `data.mcpdCode`, and the message. */
async function tryPath(token: string, path: string): Promise<{ status: number; code?: string; message?: string }> {
  const r = await post(holding(token), path, INIT);
  const text = await r.text();
  if (r.status === 200) return { status: 200 };
  const body = JSON.parse(text);
  return { status: r.status, code: body.error?.data?.mcpdCode, message: body.error?.message };
}

/**
 * Every path a scoped token must not open: other views, non-endpoints, and paths that may come later. The
 * dashboard's paths (`/`, `/dashboard/...`) are not here: they take no token at all, only the dashboard's
 * own session cookie, and answer any token 401 (tests/dashboard/dashboard-access.test.ts).
 */
const EVERYWHERE = [
  "/mcp",
  "/sse",
  "/messages?sessionId=x",
  "/profiles/coding/mcp",
  "/profiles/coding/sse",
  "/profiles/ops/mcp",
  "/profiles/ops/sse",
  "/profiles/ops/messages?sessionId=x",
  "/servers/fx/mcp",
  "/servers/fx/sse",
  "/servers/other/mcp",
  "/servers/other/sse",
  "/profiles/coding%2Fx/mcp",
  "/profiles/nope/mcp",
  "/status",
  "/metrics",
  "/control",
];

describe("a scoped token opens its own endpoint only", () => {
  it("a profile token lists the profile's tools over Streamable HTTP and SSE, and gets 403 on /mcp, another profile, a server, and any other path", async () => {
    const { token } = await issue({ profile: "coding" });
    for (const kind of ["streamable", "sse"] as const) {
      const tools = await toolsAt(token, kind, "/profiles/coding/mcp");
      expect(tools.length).toBeGreaterThan(0);
      expect(
        tools.every((t) => t.startsWith("fx__")),
        tools.join(),
      ).toBe(true);
    }
    for (const path of EVERYWHERE.filter((p) => !p.startsWith("/profiles/coding/"))) {
      const r = await tryPath(token, path);
      expect(r, path).toMatchObject({ status: 403, code: "MCPD_HTTP_TOKEN_SCOPE" });
      expect(r.message).toContain("/profiles/coding/mcp");
    }
  });

  it("a server token lists the server's own tools over Streamable HTTP and SSE, and gets 403 on /mcp, another server, a profile, and any other path", async () => {
    const { token } = await issue({ server: "fx" });
    for (const kind of ["streamable", "sse"] as const) {
      const tools = await toolsAt(token, kind, "/servers/fx/mcp");
      expect(tools).toContain("echo");
      expect(tools.some((t) => t.includes("__"))).toBe(false);
    }
    for (const path of EVERYWHERE.filter((p) => !p.startsWith("/servers/fx/"))) {
      expect(await tryPath(token, path), path).toMatchObject({ status: 403, code: "MCPD_HTTP_TOKEN_SCOPE" });
    }
  });

  it("the main token still opens every endpoint; a token nobody issued opens none (401)", async () => {
    expect(await toolsAt(front.token, "streamable", "/mcp")).toEqual(expect.arrayContaining(["fx__echo", "other__echo"]));
    expect(await toolsAt(front.token, "streamable", "/servers/other/mcp")).toContain("echo");
    expect(await toolsAt(front.token, "sse", "/profiles/ops/mcp")).toContain("other__echo");
    expect(await toolsAt(front.token, "streamable", "/profiles/coding/mcp")).toContain("fx__echo");
    const forged = Buffer.alloc(32, 7).toString("base64url");
    expect(await tryPath(forged, "/profiles/coding/mcp")).toMatchObject({ status: 401, code: "MCPD_HTTP_UNAUTHORIZED" });
  });
});

/** One JSON-RPC request on session `sid` at `path` with `token`, answered as JSON: the answer's body. */
async function rpc(token: string, path: string, sid: string, method: string, params?: object): Promise<any> {
  const r = await post(
    holding(token),
    path,
    { jsonrpc: "2.0", id: 5, method, ...(params ? { params } : {}) },
    {
      "mcp-session-id": sid,
      accept: "application/json",
    },
  );
  expect(r.status, `${method}: ${r.status}`).toBe(200);
  return r.json();
}

const routedTo = (server: string, params: object = {}): object => ({ ...params, _meta: { "mcpd/server": server } });

describe("a session opened with a scoped token stays inside its scope", () => {
  it("a server token's session cannot route a request to another server (_meta mcpd/server) nor list or see other servers", async () => {
    const { token } = await issue({ server: "fx" });
    const path = "/servers/fx/mcp";
    const sid = await openSession(holding(token), path);
    const echo = { name: "echo", arguments: { text: "hi" } };
    expect((await rpc(token, path, sid, "tools/call", echo)).result.content[0].text).toBe("hi");
    for (const [method, params] of [
      ["tools/call", routedTo("other", echo)],
      ["tools/list", routedTo("other")],
      ["logging/setLevel", routedTo("other", { level: "info" })],
      ["fixture/anything", routedTo("other")],
    ] as const) {
      const r = await rpc(token, path, sid, method, params);
      expect(r.error?.code, `${method}: ${JSON.stringify(r)}`).toBe(-32071);
      expect(r.error.data.mcpdCode).toBe("MCPD_HTTP_TOKEN_SCOPE");
      expect(r.error.message).toContain('only server "fx"');
    }
    const tools = (await rpc(token, path, sid, "mcpd/tools")).result.tools;
    expect(tools.length).toBeGreaterThan(0);
    expect(tools.every((t: any) => t.server === "fx")).toBe(true);
    expect((await rpc(token, path, sid, "mcpd/tools", { server: "other" })).result.tools).toEqual([]);
    expect((await rpc(token, path, sid, "mcpd/servers")).result.servers.map((x: any) => x.name)).toEqual(["fx"]);
    const status = (await rpc(token, path, sid, "mcpd/status")).result;
    expect(status.restricted).toBe(true);
    expect(status.servers.map((x: any) => x.name)).toEqual(["fx"]);
    // The main token's sessions keep per-request routing to any server.
    const mainSid = await openSession(front, path);
    expect((await rpc(front.token, path, mainSid, "tools/call", routedTo("other", echo))).result.content[0].text).toBe("hi");
  });

  it("regression: a session is its token's: a scoped token presenting the id of a session the main token or another token opened gets 404, in both transports (the main token's session served it unconfined)", async () => {
    const { token } = await issue({ server: "fx" });
    const other = await issue({ server: "fx" });
    const path = "/servers/fx/mcp";
    const ping = { jsonrpc: "2.0", id: 7, method: "ping" };
    for (const foreign of [await openSession(front, path), await openSession(holding(other.token), path)]) {
      const r = await post(holding(token), path, ping, { "mcp-session-id": foreign });
      const body = await r.json();
      expect(r.status).toBe(404);
      expect(body.error.data.mcpdCode).toBe("MCPD_HTTP_SESSION_NOT_FOUND");
    }
    // Its own session, and the main token on any session, still work.
    const own = await openSession(holding(token), path);
    expect((await rpc(token, path, own, "ping")).result).toEqual({});
    expect((await rpc(front.token, path, own, "ping")).result).toEqual({});
    // Legacy SSE: the main token's session id, posted to with the scoped token.
    const stream = await fetch(new URL("/servers/fx/sse", front.origin), {
      headers: { ...authHeaders(front), accept: "text/event-stream" },
    });
    const events = sseReader(stream);
    try {
      const endpoint = (await events.next()).data;
      expect(endpoint).toContain("sessionId=");
      const r = await post(holding(token), endpoint, ping);
      expect(r.status).toBe(404);
      await r.text();
      const mine = await post(front, endpoint, ping);
      expect(mine.status).toBe(202);
      await mine.text();
    } finally {
      await events.cancel();
    }
  });

  it("regression: a scoped token routing to a server that does not exist is refused as out of reach, naming no configured server (the unknown-server error listed them all)", async () => {
    const { token } = await issue({ server: "fx" });
    const path = "/servers/fx/mcp";
    const sid = await openSession(holding(token), path);
    const answers = [];
    for (const server of ["other", "nosuch"]) {
      const r = await rpc(token, path, sid, "tools/call", { name: "echo", arguments: {}, _meta: { "mcpd/server": server } });
      expect(r.error?.data?.mcpdCode, JSON.stringify(r)).toBe("MCPD_HTTP_TOKEN_SCOPE");
      answers.push(r.error.message.replace(server, "X"));
    }
    expect(answers[0]).toBe(answers[1]);
    expect(answers[1]).not.toContain("other");
  });

  it("a profile token's session cannot route any method to a server outside the profile, and sees only the profile's servers", async () => {
    const { token } = await issue({ profile: "coding" });
    const path = "/profiles/coding/mcp";
    const sid = await openSession(holding(token), path);
    for (const [method, params] of [
      ["tools/call", routedTo("other", { name: "echo", arguments: { text: "x" } })],
      ["logging/setLevel", routedTo("other", { level: "info" })],
      ["fixture/anything", routedTo("other")],
    ] as const) {
      const r = await rpc(token, path, sid, method, params);
      expect(r.error?.code, `${method}: ${JSON.stringify(r)}`).toBe(-32071);
      expect(r.error.data.mcpdCode).toBe("MCPD_HTTP_TOKEN_SCOPE");
    }
    expect((await rpc(token, path, sid, "mcpd/servers")).result.servers.map((x: any) => x.name)).toEqual(["fx"]);
    expect((await rpc(token, path, sid, "mcpd/status")).result.servers.map((x: any) => x.name)).toEqual(["fx"]);
  });
});

describe("listing and keeping tokens", () => {
  it("lists id, scope and time of issue, never a secret; the state file holds SHA-256 digests only, mode 0600", async () => {
    const a = await issue({ profile: "ops" });
    const b = await issue({ server: "other" });
    const r = (await control.request(McpdHttpTokenList.method)).result;
    expect(r.max).toBe(64);
    const listed = r.tokens.filter((t: any) => t.id === a.id || t.id === b.id);
    expect(listed).toEqual([
      { id: a.id, scope: { kind: "profile", name: "ops" }, createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), configured: true },
      { id: b.id, scope: { kind: "server", name: "other" }, createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), configured: true },
    ]);
    const listing = JSON.stringify(r);
    const file = join(dirname(front.tokenFile), "http-tokens.json");
    const stored = readFileSync(file, "utf8");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    for (const t of [a, b]) {
      const digest = createHash("sha256").update(t.token).digest("hex");
      expect(listing).not.toContain(t.token);
      expect(listing).not.toContain(digest);
      expect(stored).not.toContain(t.token);
      expect(stored).toContain(digest);
    }
  });

  it("issuing names exactly one configured profile or server (-32602 naming the configured ones otherwise)", async () => {
    const unknown = await control.request(McpdHttpTokenIssue.method, { profile: "nope" });
    expect(unknown.error.code).toBe(-32602);
    expect(unknown.error.data.mcpdCode).toBe("MCPD_UNKNOWN_PROFILE");
    expect(unknown.error.message).toContain("coding");
    const server = await control.request(McpdHttpTokenIssue.method, { server: "nope" });
    expect(server.error.data.mcpdCode).toBe("MCPD_UNKNOWN_SERVER");
    for (const params of [{}, { profile: "coding", server: "fx" }, { profile: 3 }]) {
      const r = await control.request(McpdHttpTokenIssue.method, params);
      expect(r.error?.code, JSON.stringify(params)).toBe(-32602);
    }
  });
});

describe("revocation", () => {
  it("takes effect at once: the sessions and streams opened with the token end, its next requests get 401, other tokens go on", async () => {
    const revoked = await issue({ profile: "coding" });
    const kept = await issue({ profile: "coding" });
    const holder = holding(revoked.token);
    const { client } = await sdkClient(holder, "streamable", "/profiles/coding/mcp");
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    // A raw session with its GET stream open, and a legacy SSE session with its stream open.
    const sid = await openSession(holder, "/profiles/coding/mcp");
    const get = await fetch(new URL("/profiles/coding/mcp", front.origin), {
      headers: { ...authHeaders(holder), accept: "text/event-stream", "mcp-session-id": sid },
    });
    expect(get.status).toBe(200);
    const getStream = sseReader(get);
    await getStream.next();
    const legacy = await fetch(new URL("/profiles/coding/sse", front.origin), {
      headers: { ...authHeaders(holder), accept: "text/event-stream" },
    });
    expect(legacy.status).toBe(200);
    const legacyStream = sseReader(legacy);
    expect((await legacyStream.next()).event).toBe("endpoint");

    const r = await control.request(McpdHttpTokenRevoke.method, { id: revoked.id });
    expect(r.result).toMatchObject({ id: revoked.id, scope: { kind: "profile", name: "coding" } });
    expect(r.result.closed).toBeGreaterThanOrEqual(3);
    await expect(getStream.next()).rejects.toThrow();
    await expect(legacyStream.next()).rejects.toThrow();
    // The session itself is gone (not just refused to this token): the main token finds no such session.
    const onSession = await post(front, "/profiles/coding/mcp", { jsonrpc: "2.0", id: 2, method: "ping" }, { "mcp-session-id": sid });
    expect(onSession.status).toBe(404);
    expect((await onSession.json()).error.data.mcpdCode).toBe("MCPD_HTTP_SESSION_NOT_FOUND");
    const again = await post(holder, "/profiles/coding/mcp", { jsonrpc: "2.0", id: 3, method: "ping" }, { "mcp-session-id": sid });
    expect(again.status).toBe(401);
    expect(await tryPath(revoked.token, "/profiles/coding/mcp")).toMatchObject({ status: 401, code: "MCPD_HTTP_UNAUTHORIZED" });
    await expect(client.listTools()).rejects.toThrow();
    await client.close();

    expect(await toolsAt(kept.token, "streamable", "/profiles/coding/mcp")).toContain("fx__echo");
    const listed = (await control.request(McpdHttpTokenList.method)).result.tokens.map((t: any) => t.id);
    expect(listed).not.toContain(revoked.id);
    expect(listed).toContain(kept.id);
    const twice = await control.request(McpdHttpTokenRevoke.method, { id: revoked.id });
    expect(twice.error.data.mcpdCode).toBe("MCPD_UNKNOWN_HTTP_TOKEN");
  });
});

describe("a token whose profile or server a reload removed", () => {
  it("opens nothing (403 naming it, and no other name) while it is gone, and opens again when it is back", async () => {
    const profileToken = await issue({ profile: "ops" });
    const serverToken = await issue({ server: "other" });
    const write = (doc: object): void => writeFileSync(d.configFile, JSON.stringify(doc));
    write({ mcpd: { profiles: { coding: profiles.coding } }, mcpServers: { fx: servers.fx } });
    expect((await control.request(McpdReload.method)).error).toBeUndefined();
    const p = await tryPath(profileToken.token, "/profiles/ops/mcp");
    expect(p).toMatchObject({ status: 403, code: "MCPD_HTTP_TOKEN_SCOPE_GONE" });
    expect(p.message).toContain('profile "ops"');
    expect(p.message).not.toContain("coding");
    const s = await tryPath(serverToken.token, "/servers/other/mcp");
    expect(s).toMatchObject({ status: 403, code: "MCPD_HTTP_TOKEN_SCOPE_GONE" });
    expect(s.message).not.toContain("fx");
    const listed = (await control.request(McpdHttpTokenList.method)).result.tokens;
    expect(listed.find((t: any) => t.id === profileToken.id).configured).toBe(false);

    write({ mcpd: { profiles }, mcpServers: servers });
    expect((await control.request(McpdReload.method)).error).toBeUndefined();
    expect(await toolsAt(profileToken.token, "streamable", "/profiles/ops/mcp")).toContain("other__echo");
    expect(await toolsAt(serverToken.token, "sse", "/servers/other/mcp")).toContain("echo");
  });
});

describe("who may manage tokens, and how many", () => {
  it("an agent's MCP session (socket or HTTP) gets -32071 MCPD_FORBIDDEN for every token method", async () => {
    const agent = await d.raw();
    await agent.initialize();
    const calls: Array<[string, object | undefined]> = [
      [McpdHttpTokenIssue.method, { profile: "coding" }],
      [McpdHttpTokenList.method, undefined],
      [McpdHttpTokenRevoke.method, { id: "000000000000" }],
    ];
    for (const [method, params] of calls) {
      const r = await agent.request(method, params);
      expect(r.error?.code, method).toBe(-32071);
      expect(r.error.data.mcpdCode).toBe("MCPD_FORBIDDEN");
    }
    const sid = await openSession(front, "/mcp");
    for (const [i, [method, params]] of calls.entries()) {
      const r = await post(front, "/mcp", { jsonrpc: "2.0", id: 10 + i, method, ...(params ? { params } : {}) }, { "mcp-session-id": sid });
      const body = await r.json();
      expect(body.error?.code, method).toBe(-32071);
    }
    agent.close();
  });

  it("at most 64 exist at once: the next is refused with MCPD_HTTP_TOKEN_LIMIT until one is revoked", async () => {
    const existing = (await control.request(McpdHttpTokenList.method)).result.tokens.length;
    const ids: string[] = [];
    for (let i = existing; i < 64; i++) ids.push((await issue({ server: "fx" })).id);
    const over = await control.request(McpdHttpTokenIssue.method, { server: "fx" });
    expect(over.error?.code).toBe(-32602);
    expect(over.error.data.mcpdCode).toBe("MCPD_HTTP_TOKEN_LIMIT");
    expect(over.error.message).toContain("64");
    expect((await control.request(McpdHttpTokenRevoke.method, { id: ids[0] })).error).toBeUndefined();
    const next = await issue({ server: "fx" });
    expect(await toolsAt(next.token, "streamable", "/servers/fx/mcp")).toContain("echo");
  });
});
