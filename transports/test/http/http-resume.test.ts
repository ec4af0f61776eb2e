import { describe, expect, it } from "vitest";
import { HttpError, NoResponseError, RequestTimeoutError } from "@mcpd/protocol";
import { fixture, initialized, rejection } from "./http-helpers.js";

const PROGRESS = { name: "progress", arguments: { steps: 3 }, _meta: { progressToken: "p" } };

describe("HttpTransport: resuming a dropped SSE reply", () => {
  it.each(["end", "reset"] as const)("resumes with Last-Event-ID and delivers the response (drop by %s)", async (dropMode) => {
    const f = await fixture({ mode: "sse", eventIds: true, retryMs: 50 });
    const t = await initialized({ url: f.url });
    const progress: unknown[] = [];
    t.onNotification = (_m, params) => progress.push(params?.progress);
    f.set({ drop: { afterEvents: 1, mode: dropMode, times: 1 } });

    const result = await t.request("tools/call", PROGRESS);
    expect(result).toEqual({ content: [{ type: "text", text: "done 3 steps" }] });
    expect(f.drops).toBe(1);
    // Every notification exactly once: the replay starts after the last event received.
    expect(progress).toEqual([1, 2, 3]);
    const gets = f.received("GET");
    expect(gets).toHaveLength(1);
    expect(gets[0]!.headers["last-event-id"]).toMatch(/^s\d+_1$/);
    expect(gets[0]!.headers.accept).toBe("text/event-stream");
    expect(gets[0]!.headers["mcp-session-id"]).toBe(t.info().sessionId);
  });

  it("waits the server's retry: before resuming", async () => {
    const f = await fixture({ mode: "sse", eventIds: true, retryMs: 400 });
    const t = await initialized({ url: f.url });
    f.set({ drop: { afterEvents: 0, times: 1 } });
    await expect(t.request("tools/call", { name: "echo", arguments: { text: "late" } })).resolves.toBeDefined();
    const post = f.received("POST", "tools/call")[0]!;
    const get = f.received("GET")[0]!;
    // Only a lower bound: the stream dropped after the POST arrived, so the GET came >= retry later.
    expect(get.at - post.at).toBeGreaterThanOrEqual(400);
    // The priming event (id, empty data) is a valid resumption point.
    expect(get.headers["last-event-id"]).toMatch(/^s\d+_0$/);
  });

  it("fails with NoResponseError after sseResumeAttempts resumptions without progress", async () => {
    const f = await fixture({ mode: "sse", eventIds: true, retryMs: 20 });
    const t = await initialized({ url: f.url }, { sseResumeAttempts: 2 });
    f.set({ drop: { afterEvents: 0, times: 100 } });
    let id: unknown;
    const err = await rejection(t.request("tools/call", { name: "slow", arguments: { ms: 30_000 } }, { onRequestId: (x) => (id = x) }));
    expect(err).toBeInstanceOf(NoResponseError);
    expect(err.message).toBe(`No response received for request ID ${id}`);
    expect(f.received("GET")).toHaveLength(2);
  });

  it("fails with NoResponseError when a stream without event ids drops (reset)", async () => {
    const f = await fixture({ mode: "sse", eventIds: false });
    const t = await initialized({ url: f.url });
    f.set({ drop: { afterEvents: 1, mode: "reset", times: 1 } });
    const err = await rejection(t.request("tools/call", PROGRESS));
    expect(err).toBeInstanceOf(NoResponseError);
    expect(f.received("GET")).toHaveLength(0);
  });

  it("fails with NoResponseError (cause: the HTTP error) when the server refuses the resumption", async () => {
    const f = await fixture({ mode: "sse", eventIds: true, retryMs: 20 });
    const t = await initialized({ url: f.url });
    f.set({ drop: { afterEvents: 0, times: 1 }, resumeStatus: 404 });
    const err = await rejection(t.request("tools/call", { name: "slow", arguments: { ms: 30_000 } }));
    expect(err).toBeInstanceOf(NoResponseError);
    expect(err.cause).toBeInstanceOf(HttpError);
    expect((err.cause as HttpError).status).toBe(404);
  });

  it("keeps the request's deadline across resumptions: kind sse", async () => {
    const f = await fixture({ mode: "sse", eventIds: true, retryMs: 10_000 });
    const t = await initialized({ url: f.url });
    f.set({ drop: { afterEvents: 0, times: 1 } });
    const err = await rejection(t.request("tools/call", { name: "echo", arguments: { text: "x" } }, { timeout: 300 }));
    expect(err).toBeInstanceOf(RequestTimeoutError);
    expect(err.message).toBe("SSE response timeout after 300ms");
    expect(f.received("GET")).toHaveLength(0);
  });
});
