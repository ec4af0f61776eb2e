/**
 * The daemon's memory comes back after a load of held bytes ends: many connections each hold an unfinished
 * line of nearly 4 MiB (the per-line limit). The daemon-wide budget (`mcpd.maxBufferedBytesTotal`) closes
 * the connections holding the most once it is spent, and the allocator settings every daemon mcpd launches
 * runs with (`DAEMON_ALLOCATOR_ENV`, set by `mcpd start` and the service files: tests/cli/cli-daemon-env)
 * let the freed memory return. RSS is read after forced full collections (through the daemon's inspector).
 */
import { connect, type Socket } from "node:net";
import { DAEMON_ALLOCATOR_ENV } from "@mcpd/daemon";
import { afterEach, describe, expect, it } from "vitest";
import { LineClient } from "../soak/line-client.mjs";
import { SoakDaemon, fixture, until } from "../soak/soak-daemon.mjs";

const MiB = 2 ** 20;
let daemon: SoakDaemon | undefined;
const sockets: Socket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await daemon?.stop();
  daemon = undefined;
});

function rawSocket(path: string): Promise<Socket & { closedByPeer: boolean }> {
  return new Promise((resolve, reject) => {
    const s = connect(path) as Socket & { closedByPeer: boolean };
    s.closedByPeer = false;
    s.once("connect", () => resolve(s));
    s.once("error", reject);
    s.on("error", () => {});
    s.on("close", () => (s.closedByPeer = true));
    s.on("data", () => {});
    sockets.push(s);
  });
}

function writeAll(s: Socket, data: string | Buffer): Promise<void> {
  return new Promise((resolve) => (s.destroyed ? resolve() : s.write(data, () => resolve())));
}

describe.skipIf(process.platform !== "linux")("memory after a load of held lines (reads /proc, Linux only)", () => {
  it("regression: after 60 connections each held a line of nearly 4 MiB, RSS returns near its baseline (it stayed at the 240 MiB held, and 3.4x the baseline with the budget alone)", {
    timeout: 180_000,
  }, async () => {
    const d = (daemon = new SoakDaemon({ a: fixture("a", { healthCheckIntervalMs: 0 }) }, { ...DAEMON_ALLOCATOR_ENV }));
    await d.ready();
    const checker = await LineClient.open(d.socketPath);
    try {
      // A control connection: the daemon's counters are in the full status only.
      await checker.call("mcpd/select", { control: true });
      const status = (): Promise<any> => checker.call("mcpd/status");
      await until(async () => (await status()).servers.every((x: { state: string }) => x.state === "ready"), "servers ready", 60_000);
      for (let i = 0; i < 200; i++) await checker.call("ping");
      const base = (await d.settledMemory()).rss;

      const size = 4 * MiB - 1024;
      const chunk = Buffer.alloc(64 * 1024, "x");
      const socks = [];
      for (let i = 0; i < 60; i++) socks.push(await rawSocket(d.socketPath));
      await Promise.all(
        socks.map(async (s) => {
          await writeAll(s, '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"');
          for (let sent = 0; sent < size && !s.closedByPeer; sent += chunk.length) {
            // Under the 4 MiB line limit: an oversized line is skipped, not held.
            await writeAll(s, chunk.subarray(0, Math.min(chunk.length, size - sent)));
          }
        }),
      );
      for (const s of socks) s.destroy();
      await until(async () => (await status()).daemon.connections === 1, "the load connections gone", 60_000);
      const after = (await d.settledMemory()).rss;
      // The budget did its part: 240 MiB of lines against 128 MiB, the largest holders closed first.
      expect((await status()).daemon.dropped.overBudget).toBeGreaterThan(0);
      expect((after - base) / MiB, `RSS ${(base / MiB).toFixed(0)} MiB before, ${(after / MiB).toFixed(0)} MiB after`).toBeLessThan(48);
    } finally {
      checker.close();
    }
  });
});
