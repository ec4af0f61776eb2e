import { describe, expect, it } from "vitest";
import { HttpError } from "@mcpd/protocol";
import { INIT_PARAMS, fixture, initialized, rejection, waitFor } from "./http-helpers.js";

describe("HttpTransport: session expiry (404)", () => {
  it.each(["json", "sse"] as const)("re-initializes once and retries the request transparently (%s)", async (mode) => {
    const f = await fixture({ mode });
    const t = await initialized({ url: f.url });
    const oldSession = t.info().sessionId;
    f.set({ expireOn: { method: "tools/list", times: 1 } });

    const result = await t.request<{ tools: unknown[] }>("tools/list");
    expect(result.tools.length).toBeGreaterThan(0);

    const newSession = t.info().sessionId;
    expect(newSession).toBeDefined();
    expect(newSession).not.toBe(oldSession);
    // initialize again with the same params, then initialized, then the retry, all on the new session.
    const after = f.requests.slice(f.requests.findIndex((r) => r.body?.method === "tools/list"));
    expect(after.map((r) => `${r.method} ${r.body?.method}`)).toEqual([
      "POST tools/list",
      "POST initialize",
      "POST notifications/initialized",
      "POST tools/list",
    ]);
    expect(after[0]!.headers["mcp-session-id"]).toBe(oldSession);
    expect(after[1]!.body.params).toEqual(INIT_PARAMS);
    expect(after[1]!.headers["mcp-session-id"]).toBeUndefined();
    expect(after[2]!.headers["mcp-session-id"]).toBe(newSession);
    expect(after[3]!.headers["mcp-session-id"]).toBe(newSession);
    expect(after[3]!.headers["mcp-protocol-version"]).toBe("2025-06-18");
    // The retry keeps the request's id.
    expect(after[3]!.body.id).toBe(after[0]!.body.id);
    await expect(t.request("ping")).resolves.toEqual({});
  });

  it("fails the request on a second 404", async () => {
    const f = await fixture();
    const t = await initialized({ url: f.url });
    f.set({ expireOn: { method: "tools/list", times: 2 } });
    const err = await rejection(t.request("tools/list"));
    expect(err).toBeInstanceOf(HttpError);
    expect(err).toMatchObject({ status: 404 });
    expect(err.message).toBe("HTTP 404: Session expired");
    // Exactly one re-initialization was tried.
    expect(f.received("POST", "initialize")).toHaveLength(2);
    expect(f.received("POST", "tools/list")).toHaveLength(2);
  });

  it("shares one re-initialization between concurrent requests", async () => {
    const f = await fixture({ mode: "sse" });
    const t = await initialized({ url: f.url });
    f.expireSessions();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => t.request("tools/call", { name: "echo", arguments: { text: `n${i}` } })),
    );
    expect(results.map((r) => (r as { content: Array<{ text: string }> }).content[0]!.text)).toEqual(
      Array.from({ length: 8 }, (_, i) => `n${i}`),
    );
    expect(f.received("POST", "initialize")).toHaveLength(2);
    expect(f.received("POST", "notifications/initialized")).toHaveLength(2);
    expect(f.sessions.size).toBe(1);
    expect(t.info().sessionId).toBe([...f.sessions][0]);
  });

  it("holds new requests while the new session is being opened", async () => {
    const f = await fixture();
    const t = await initialized({ url: f.url });
    f.expireSessions();
    f.set({ slow: { method: "initialize", ms: 300 } });
    const first = t.request("tools/list");
    await waitFor(() => f.received("POST", "initialize").length === 2, { message: "re-initialize under way" });
    // Sent mid-way through the re-initialization: it must wait for the new session, not go without one.
    const second = t.request("ping");
    await expect(Promise.all([first, second])).resolves.toBeDefined();
    const ping = f.received("POST", "ping")[0]!;
    expect(ping.headers["mcp-session-id"]).toBe(t.info().sessionId);
    expect(f.received("POST", "ping")).toHaveLength(1);
  });

  it("does not heal a 404 to a request sent without a session", async () => {
    const f = await fixture({ sessions: false, status: { code: 404, body: "no such endpoint", method: "tools/list" } });
    const t = await initialized({ url: f.url });
    const err = await rejection(t.request("tools/list"));
    expect(err.message).toBe("HTTP 404: no such endpoint");
    expect(f.received("POST", "initialize")).toHaveLength(1);
  });
});
