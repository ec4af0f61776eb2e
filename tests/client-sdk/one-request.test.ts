/**
 * requestControl and requestOnce (one request on a connection of its own) against the real daemon and
 * the stdio fixture server: the daemon answers a control request with no `initialize` before it, grants
 * a control connection only when asked, serves a pipelined handshake and call in order, relays progress
 * and cancellation, and forgets each connection once its answer is in.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpdReload, McpdStatus, requestControl, requestOnce } from "@mcpd/client";
import { waitFor } from "../helpers/process.js";
import { failure, fixture, readLog, TestDaemon } from "./test-daemon.js";

let d: TestDaemon;
let fxLog: string;

beforeAll(async () => {
  d = await TestDaemon.start((home) => {
    fxLog = join(home, "fx.log");
    return { fx: fixture("fx", ["--log", fxLog]) };
  });
});
afterAll(async () => {
  await d?.cleanup();
});

const text = (r: { content?: unknown }): string => (r.content as Array<{ text?: string }>).map((c) => c.text).join("");

describe("requestControl against the real daemon", () => {
  it("answers the full status on a control connection, a restricted one on an agent's, and leaves no connection behind", async () => {
    const full = await requestControl(McpdStatus, undefined, { env: d.env, control: true });
    if (full.restricted) throw new Error("a control connection got a restricted status");
    expect(full.daemon.socketPath).toBe(d.socketPath);
    expect(full.servers.map((s) => s.name)).toEqual(["fx"]);

    const restricted = await requestControl(McpdStatus, undefined, { env: d.env });
    expect(restricted.restricted).toBe(true);

    // Each connection closed with its answer: the daemon counts none but the asking one (never listed).
    await waitFor(async () => (await requestControl(McpdStatus, undefined, { env: d.env, control: true })).clients.length === 0, {
      message: "the earlier one-request connections to be gone",
    });
  });

  it("refuses a privileged method on an agent's connection with MCPD_FORBIDDEN", async () => {
    const err = await failure(requestControl(McpdReload, undefined, { env: d.env }));
    expect(err.code).toBe("MCPD_FORBIDDEN");
  });
});

describe("requestOnce against the real daemon", () => {
  it("calls a tool routed to its server, with the handshake in the same write", async () => {
    await waitFor(async () => (await requestControl(McpdStatus, undefined, { env: d.env, control: true })).servers[0]?.state === "ready", {
      message: "fx ready",
    });
    const result = await requestOnce("tools/call", { name: "echo", arguments: { text: "once" } }, { env: d.env, server: "fx" });
    expect(text(result)).toBe("once");
  });

  it("relays the server's progress to onProgress", async () => {
    const seen: number[] = [];
    const result = await requestOnce(
      "tools/call",
      { name: "progress", arguments: { steps: 3, intervalMs: 1 } },
      { env: d.env, server: "fx", onProgress: (p) => seen.push(p.progress) },
    );
    expect(text(result)).toBe("done");
    expect(seen).toEqual([1, 2, 3]);
  });

  it("aborting cancels the call on the server (notifications/cancelled reaches it)", async () => {
    const ac = new AbortController();
    const call = requestOnce(
      "tools/call",
      { name: "slow", arguments: { ms: 30_000, text: "once-abort" } },
      { env: d.env, server: "fx", signal: ac.signal },
    );
    const upstream = await waitFor(
      () => readLog(fxLog).find((m) => m.method === "tools/call" && m.params.arguments?.text === "once-abort"),
      { message: "the slow call upstream" },
    );
    ac.abort(new Error("stop"));
    expect((await failure(call)).code).toBe("MCPD_ABORTED");
    await waitFor(() => readLog(fxLog).some((m) => m.method === "notifications/cancelled" && m.params.requestId === upstream.id), {
      message: "cancelled upstream",
    });
  });

  it("an unknown server is the call's error, naming the configured ones", async () => {
    const err = await failure(requestOnce("tools/call", { name: "echo", arguments: {} }, { env: d.env, server: "zzz" }));
    expect(err.code).toBe("MCPD_UNKNOWN_SERVER");
    expect(err.message).toContain("fx");
  });
});
