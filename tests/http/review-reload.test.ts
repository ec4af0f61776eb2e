/**
 * Regressions found reviewing how the HTTP front end follows `mcpd.http` on reload: a reload always
 * completes whatever clients hold open, and a setting that narrows who may connect takes effect.
 */
import { writeFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { type TestDaemon, fixture, startTestDaemon } from "../e2e/harness.js";
import { authHeaders, httpFront, openSession, sseReader } from "./http-harness.js";

let d: TestDaemon | undefined;
afterEach(async () => {
  await d?.stop();
  d = undefined;
});

/** Rewrites the config's `mcpd.http` and reloads; resolves with the reload's answer. */
async function reloadWith(daemon: TestDaemon, http: object): Promise<any> {
  writeFileSync(daemon.configFile, JSON.stringify({ mcpd: { http }, mcpServers: { fx: fixture("fx") } }));
  const c = await daemon.control();
  try {
    return await c.request("mcpd/reload");
  } finally {
    c.close();
  }
}

describe("reloading mcpd.http with a client's SSE stream open", () => {
  for (const [what, http] of [
    ["turning the front end off", { enabled: false }],
    ["moving it to another address", { host: "localhost" }],
  ] as const) {
    it(`regression: ${what} never completed while a GET stream was open (the old server waited for it)`, async () => {
      d = await startTestDaemon({ fx: fixture("fx") });
      const front = await httpFront(d);
      const sid = await openSession(front, "/servers/fx/mcp");
      const get = await fetch(new URL("/servers/fx/mcp", front.origin), {
        headers: { ...authHeaders(front), accept: "text/event-stream", "mcp-session-id": sid },
      });
      expect(get.status).toBe(200);
      const events = sseReader(get);
      expect((await events.next()).data).toBe("");
      const r = await reloadWith(d, http);
      expect(r.result).toBeDefined();
      // The stream of a session on the address that went away ends.
      await expect(events.next(20_000)).rejects.toThrow(/ended/);
    });
  }
});

describe("narrowing who may connect", () => {
  it('regression: "allowRemote": false on reload left the front end serving on a non-loopback address', async () => {
    d = await startTestDaemon({ fx: fixture("fx") }, { settings: { http: { host: "0.0.0.0", allowRemote: true } } });
    const before = await httpFront(d);
    expect(before.status.listening).toBe(true);
    await reloadWith(d, { host: "0.0.0.0", allowRemote: false });
    const c = await d.control();
    const st = (await c.request("mcpd/status")).result.http;
    c.close();
    expect(st.listening).toBe(false);
    expect(st.error).toMatch(/allowRemote/);
    await expect(fetch(before.url, { method: "POST" })).rejects.toThrow();
  });
});
