import { afterEach, describe, expect, it } from "vitest";
import { createTransport } from "@mcpd/transports";
import { UpstreamClient } from "../../src/supervision/upstream-client.js";
import { fixturePath, waitFor } from "../../../tests/helpers/process.js";

const clients: UpstreamClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
});

function connectTo(script: string, args: string[] = []): UpstreamClient {
  const c = new UpstreamClient(createTransport({ command: process.execPath, args: [fixturePath(script), ...args] }), {
    listRefreshMinIntervalMs: 500,
  });
  clients.push(c);
  return c;
}

const text = (r: any): string => (r.content ?? []).map((x: any) => x.text ?? "").join("");

describe("UpstreamClient list refresh", () => {
  it("regression: list_changed after every response (even tools/list) costs one re-read per interval, never a loop; connect returns after one listing", async () => {
    const c = connectTo("list-changed-storm.mjs");
    const relayed: string[] = [];
    c.on("notification", (method: string) => relayed.push(method));
    let unsettled = 0;
    c.on("listUnsettled", () => unsettled++);
    await c.connect();
    expect(c.tools.map((t) => t.name)).toEqual(["echo", "list_count"]);
    const t0 = Date.now();
    const start = Number(text(await c.callTool("list_count")));
    await waitFor(() => Date.now() - t0 >= 2_000, { timeoutMs: 10_000, intervalMs: 50 });
    const lists = Number(text(await c.callTool("list_count"))) - start;
    const elapsed = Date.now() - t0;
    // One re-read per 500 ms at most (plus the one in progress); before the fix, thousands.
    expect(lists, `${lists} tools/list in ${elapsed} ms`).toBeLessThanOrEqual(Math.ceil(elapsed / 500) + 2);
    expect(lists).toBeGreaterThanOrEqual(1);
    expect(unsettled).toBe(1);
    // One list_changed relayed per re-read, not one per notification received.
    expect(relayed.filter((m) => m === "notifications/tools/list_changed").length).toBeLessThanOrEqual(lists + 2);
  });

  it("coalesces re-reads: ten asked at once cost one running and at most one queued, not ten", async () => {
    const c = connectTo("list-changed-storm.mjs");
    await c.connect();
    const start = Number(text(await c.callTool("list_count")));
    await Promise.all(Array.from({ length: 10 }, () => c.refresh("tools")));
    const lists = Number(text(await c.callTool("list_count"))) - start;
    // One re-read may already be running (the storm asks after every answer) and one more is queued behind
    // it; the storm's own list_changed may queue one more once that has started. Never one per call.
    expect(lists).toBeGreaterThanOrEqual(1);
    expect(lists).toBeLessThanOrEqual(3);
  });

  it("marks a list unsettled while list_changed keeps asking for re-reads, and settled once it stops", async () => {
    const c = connectTo("mcp-fixture.mjs");
    const events: string[] = [];
    c.on("listUnsettled", (kind: string) => events.push(`unsettled ${kind}`));
    c.on("listSettled", (kind: string) => events.push(`settled ${kind}`));
    await c.connect();
    for (let i = 1; i <= 4; i++) {
      const reread = new Promise((resolve) => c.once("listChanged", resolve));
      await c.callTool("change_tools");
      await reread;
    }
    expect(events).toContain("unsettled tools");
    await waitFor(() => events.includes("settled tools"), { timeoutMs: 10_000, message: "settled" });
    expect(events).toEqual(["unsettled tools", "settled tools"]);
    expect(c.tools.filter((t) => t.name.startsWith("added_")).length).toBe(4);
  });
});
