import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it } from "vitest";
import { MessageTooLargeError, QueueFullError, TransportClosedError, type JsonObject } from "@mcpd/protocol";
import type { StdioTransport } from "../../src/stdio/stdio-transport.js";
import { fixturePath } from "../../../tests/helpers/process.js";
import { Harness, NODE, isAlive, waitFor } from "./stdio-helpers.js";

const h = new Harness();
afterEach(() => h.cleanup());

// A real gc() for heap measurements, without restarting the worker with --expose-gc.
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const MiB = 1024 * 1024;

/** Lets pending I/O callbacks (drain, pipe writes) run, then tells whether `p` has already failed. */
async function failedAtOnce(p: Promise<unknown>): Promise<unknown> {
  let error: unknown;
  p.catch((e: unknown) => (error = e));
  await new Promise((resolve) => setImmediate(resolve));
  return error;
}

/** Sends 32 KiB requests into a server that does not read, until one is refused. */
async function fillUntilRefused(t: StdioTransport): Promise<{ accepted: Array<Promise<JsonObject>>; refused: unknown }> {
  const accepted: Array<Promise<JsonObject>> = [];
  const data = "p".repeat(32 * 1024);
  for (let i = 0; i < 2_000; i++) {
    const p = t.request("echo", { i, data }, { timeout: 0 });
    const error = await failedAtOnce(p);
    if (error !== undefined) return { accepted, refused: error };
    accepted.push(p);
  }
  return { accepted, refused: undefined };
}

describe("StdioTransport: backpressure", () => {
  it("moves 50 MiB each way at once without deadlock, with bounded buffers and heap", async () => {
    const t = h.make({ command: NODE, args: [fixturePath("flood-stdout.mjs"), "--mb", "50"] });
    let messages = 0;
    let done: JsonObject | undefined;
    t.onNotification = (method, params) => {
      if (method === "notifications/message") messages++;
      else if (method === "notifications/flood_done") done = params;
    };
    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    let maxRead = 0;
    let maxWrite = 0;
    const sample = (): void => {
      maxRead = Math.max(maxRead, t.readBufferedBytes);
      maxWrite = Math.max(maxWrite, t.pendingWriteBytes);
    };
    const sampler = setInterval(sample, 2);
    try {
      await t.connect();
      const data = "c".repeat(64 * 1024);
      const total = 50 * MiB;
      // notify() resolves once its bytes are handed to the stream, so this loop follows the child's pace.
      for (let sent = 0; sent < total; sent += data.length) {
        await t.notify("notifications/blob", { data });
        sample();
      }
      await waitFor(() => done, { timeoutMs: 120_000, message: "flood_done" });
      const stats = await t.request<{ receivedBytes: number; receivedMessages: number; floodDone: boolean }>("stats");
      expect(stats.receivedBytes).toBeGreaterThanOrEqual(total);
      expect(stats.receivedMessages).toBeGreaterThanOrEqual(total / data.length);
      expect(messages).toBe(done?.sentMessages);
      expect(t.info().droppedMessages).toBe(0);
    } finally {
      clearInterval(sampler);
    }
    // One partial line (a 64 KiB notification) at most is held on the read side; a few writes on the other.
    expect(maxRead).toBeLessThan(256 * 1024);
    expect(maxWrite).toBeLessThan(1 * MiB);
    gc();
    // 100 MiB went through; keeping any sizeable part of it would show here.
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(40 * MiB);
  });

  it("refuses requests with QueueFullError when stdin is not read, and recovers when it is", async () => {
    const t = h.make({ command: NODE, args: [fixturePath("stalled-stdin.mjs")] }, { maxPendingWriteBytes: 256 * 1024 });
    await t.connect();
    await waitFor(() => t.stderrTail().includes("stalled ready"), { message: "stalled ready" });
    const { accepted, refused } = await fillUntilRefused(t);
    expect(refused).toBeInstanceOf(QueueFullError);
    expect((refused as QueueFullError).code).toBe("MCPD_QUEUE_FULL");
    expect((refused as Error).message).toContain("maxPendingWriteBytes");
    expect(accepted.length).toBeGreaterThan(0);
    expect(t.pendingWriteBytes).toBeLessThanOrEqual(256 * 1024);
    // A refused request leaves nothing behind; the accepted ones still wait.
    expect(t.pendingCount).toBe(accepted.length);
    await expect(t.notify("notifications/x", { data: "n".repeat(64 * 1024) })).rejects.toBeInstanceOf(QueueFullError);
    expect(t.connected).toBe(true);

    // The server starts reading: everything queued is delivered and answered, and the transport works.
    process.kill(t.pid as number, "SIGUSR2");
    const answers = await Promise.all(accepted);
    for (const [i, a] of answers.entries()) expect((a as { echo: { i: number } }).echo.i).toBe(i);
    expect(await t.request("ping")).toEqual({ method: "ping", echo: null });
    expect(t.pendingCount).toBe(0);
  });

  it("stays closable while stdin is stuck: pending requests fail with TransportClosedError", async () => {
    const t = h.make({ command: NODE, args: [fixturePath("stalled-stdin.mjs")] }, { maxPendingWriteBytes: 128 * 1024, closeGraceMs: 300 });
    await t.connect();
    await waitFor(() => t.stderrTail().includes("stalled ready"), { message: "stalled ready" });
    const { accepted, refused } = await fillUntilRefused(t);
    expect(refused).toBeInstanceOf(QueueFullError);
    const pid = t.pid as number;
    await t.close();
    for (const p of accepted) await expect(p).rejects.toBeInstanceOf(TransportClosedError);
    expect(isAlive(pid)).toBe(false);
  });

  it("refuses a single message larger than maxPendingWriteBytes with MessageTooLargeError", async () => {
    const t = h.make({ command: NODE, args: [fixturePath("stalled-stdin.mjs")] }, { maxPendingWriteBytes: 64 * 1024 });
    await t.connect();
    const err = await t.request("echo", { data: "x".repeat(100 * 1024) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MessageTooLargeError);
    expect(t.pendingCount).toBe(0);
    expect(t.pendingWriteBytes).toBe(0);
  });
});
