/**
 * The socket face tells its garbage pacer (daemon/src/infra/garbage-pacer.ts) of the client buffers it
 * lets go, and of nothing else: a connection that held a long line and went away is collected after;
 * whole lines relayed, the daemon's usual traffic, never ask for a collection. Real Unix socket, real
 * Router; the pacer's collector counts its calls.
 */
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { GarbagePacer } from "../../src/infra/garbage-pacer.js";
import { waitFor } from "../../../tests/helpers/process.js";
import { type Cleanups, startManager, startSocketFace, tempDir } from "../helpers/daemon-parts.js";

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A socket face whose pacer collects once 256 KiB were let go, with no interval. */
async function face(): Promise<{ socketPath: string; collections: () => number }> {
  const dir = tempDir(cleanups, "mcpd-sg-");
  const manager = await startManager(cleanups, dir);
  let n = 0;
  const pacer = new GarbagePacer({ minIntervalMs: 0, minReleasedBytes: 256 * 1024, collect: () => n++ });
  const { socketPath } = await startSocketFace(cleanups, dir, manager, { maxInFlightPerConnection: 64, maxOutgoingBytes: 1 << 20, pacer });
  return { socketPath, collections: () => n };
}

function open(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(path, () => resolve(s));
    s.once("error", reject);
    cleanups.push(() => {
      s.destroy();
    });
  });
}

describe("socket face and garbage pacer", () => {
  it("regression: the buffers of a long line let go are collected soon after (V8 left them for seconds), while whole lines relayed ask for no collection", async () => {
    const { socketPath, collections } = await face();
    const s = await open(socketPath);
    let text = "";
    s.setEncoding("utf8");
    s.on("data", (d: string) => (text += d));
    const lines: string[] = [];
    for (let i = 0; i < 2_000; i++) lines.push(JSON.stringify({ jsonrpc: "2.0", id: i, method: "ping", params: { pad: "y".repeat(500) } }));
    s.write(`${lines.join("\n")}\n`);
    await waitFor(() => text.split("\n").length > 2_000, { message: "every ping answered" });
    expect(collections()).toBe(0);
    const long = await open(socketPath);
    long.write(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${"x".repeat(600 * 1024)}`);
    long.end('"}}\n');
    await waitFor(() => collections() > 0, { message: "a collection after the line was let go" });
  });
});
