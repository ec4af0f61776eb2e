/**
 * Output waiting for a client is counted as the bytes it really holds (daemon/src/socket/socket-client.ts),
 * against the 16 MiB one connection may hold and the daemon-wide budget: counted as characters, text that
 * is not ASCII held up to three times what was counted. Real daemon, raw socket clients.
 */
import { afterEach, describe, expect, it } from "vitest";
import { fixture, startTestDaemon, until, type RawClient, type TestDaemon } from "../e2e/harness.js";
import { PidLedger, answers, openClients, sendCall, serverPid, status, textOf } from "./faults-harness.js";

let daemon: TestDaemon | undefined;
const ledger = new PidLedger();

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  ledger.killAll();
});

function closeFlag(c: RawClient): () => boolean {
  let closed = c.socket.destroyed;
  c.socket.once("close", () => (closed = true));
  return () => closed;
}

describe("limits: output held for a client that never reads", () => {
  it("regression: a client that never reads is closed once the bytes really held for it pass its 16 MiB bound (2,000 notifications of 6,000 '€' held 36 MB of UTF-8 for it, counted as 12 million characters, and it stayed)", {
    timeout: 120_000,
  }, async () => {
    const d = (daemon = await startTestDaemon({ fl: fixture("fl") }));
    const [sleeper] = await openClients(d, 1);
    sleeper!.socket.pause();
    const sleeperClosed = closeFlag(sleeper!);
    // A control connection: the daemon's counters are in the full status only.
    const caller = await d.control();
    await caller.initialize();
    expect((await caller.request("logging/setLevel", { level: "error" })).result).toEqual({});
    ledger.add(d.proc.pid as number, await serverPid(caller, "fl"));
    sendCall(caller, "flood", "fl__flood", { count: 2_000, size: 6_000, char: "€" });
    expect(textOf((await answers(caller, ["flood"], 90_000)).get("flood"))).toBe("flooded 2000");
    const st = await until(
      async () => {
        const s = await status(caller);
        return s.daemon.connections === 1 ? s : undefined;
      },
      "the sleeper disconnected",
      30_000,
    );
    // Its own bound closed it, not the daemon-wide budget (128 MiB): 36 MB is far from that.
    expect(st.daemon.dropped).toMatchObject({ notReading: 1, overBudget: 0 });
    expect(st.daemon.bufferedBytes).toBe(0);
    // Resumed, the sleeper reads what the kernel held for it, then finds its connection closed.
    sleeper!.socket.resume();
    await until(() => sleeperClosed(), "the sleeper's connection closed");
    const log = d.stderr();
    expect(log).toMatch(/client is not reading; disconnecting it/);
  });
});
