// The fixture servers other tests lean on: a fixture that misbehaves makes those tests hang or lie.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { fixturePath, isAlive, waitFor } from "./helpers/process.js";

const children: ChildProcessWithoutNullStreams[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.pid !== undefined && isAlive(child.pid)) child.kill("SIGKILL");
    await waitFor(() => !isAlive(child.pid), { message: `fixture pid ${child.pid} gone` });
  }
});

describe("flood-stdout", () => {
  it("regression (a reply took the flood's place waiting for drain): answers stats during the flood and still finishes it", async () => {
    // 1 MiB lines: each write leaves far more than the 16 KiB high-water mark queued, so the flood waits
    // for "drain" from its first line on, and the stats reply, written meanwhile, has to wait too.
    const child = spawn(process.execPath, [fixturePath("flood-stdout.mjs"), "--mb", "4", "--chunk", String(1024 * 1024)], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    children.push(child);
    const messages: Array<{ id?: number; method?: string; result?: { floodDone?: boolean } }> = [];
    let partial = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (text: string) => {
      const lines = (partial + text).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) if (line !== "") messages.push(JSON.parse(line));
    });
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "stats" })}\n`);

    await waitFor(() => messages.find((m) => m.id === 1), { timeoutMs: 30_000, message: "the stats reply" });
    const done = await waitFor(() => messages.find((m) => m.method === "notifications/flood_done"), {
      timeoutMs: 30_000,
      message: "notifications/flood_done after the stats reply",
    });
    expect(done).toMatchObject({ params: { sentMessages: 4 } });
    expect(messages.filter((m) => m.method === "notifications/message")).toHaveLength(4);
    child.stdin.end();
  });
});
