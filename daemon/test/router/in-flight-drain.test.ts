/**
 * The shutdown's drain: InFlightDrain on its own, and Router.whenIdle over a real socket face, manager and
 * stdio fixture server (the daemon's shutdown awaits it instead of polling the in-flight count).
 */
import { connect, type Socket } from "node:net";
import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { InFlightDrain } from "../../src/router/in-flight-drain.js";
import type { Router } from "../../src/router/router.js";
import { type Cleanups, startManager, startSocketFace, tempDir } from "../helpers/daemon-parts.js";

const STDIO_FIXTURE = resolve(import.meta.dirname, "../../../tests/fixtures/servers/mcp-fixture.mjs");
const cleanups: Cleanups = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe("InFlightDrain", () => {
  it("resolves at once when nothing is in flight, else when a check finds nothing left; a check with requests left wakes no one", async () => {
    let count = 0;
    const drain = new InFlightDrain(() => count);
    expect(await drain.wait(60_000)).toBe(true);
    count = 2;
    let woken = 0;
    const waits = [drain.wait(60_000), drain.wait(60_000)].map((p) =>
      p.then((idle) => {
        woken++;
        return idle;
      }),
    );
    count = 1;
    drain.check();
    await new Promise((r) => setImmediate(r));
    expect(woken).toBe(0);
    count = 0;
    drain.check();
    expect(await Promise.all(waits)).toEqual([true, true]);
  });

  it("resolves false after its timeout when requests stay in flight, and forgets that waiter", async () => {
    let count = 1;
    const drain = new InFlightDrain(() => count);
    expect(await drain.wait(1)).toBe(false);
    count = 0;
    drain.check();
    expect(await drain.wait(60_000)).toBe(true);
  });
});

/** A socket client of a real Router whose server `fx` is the stdio fixture; answers are collected by id. */
async function start(): Promise<{ router: Router; socket: Socket; answers: Map<number, unknown> }> {
  const dir = tempDir(cleanups, "mcpd-drain-");
  const manager = await startManager(cleanups, dir, { fx: { command: process.execPath, args: [STDIO_FIXTURE] } });
  const { router, socketPath } = await startSocketFace(cleanups, dir, manager, { maxInFlightPerConnection: 16, maxOutgoingBytes: 1 << 20 });
  const socket = connect(socketPath);
  await new Promise((ok, fail) => socket.once("connect", ok).once("error", fail));
  cleanups.push(() => socket.destroy());
  const answers = new Map<number, unknown>();
  let text = "";
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    text += chunk;
    for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n")) {
      const m = JSON.parse(text.slice(0, nl)) as { id?: number };
      text = text.slice(nl + 1);
      if (typeof m.id === "number") answers.set(m.id, m);
    }
  });
  const ask = async (id: number, method: string, params: object): Promise<void> => {
    socket.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    await expect.poll(() => answers.has(id), { timeout: 20_000 }).toBe(true);
  };
  await ask(-1, "mcpd/select", { server: "fx" });
  await ask(-2, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "drain-test", version: "1" } });
  answers.clear();
  return { router, socket, answers };
}

function slowCall(socket: Socket, id: number, ms: number): void {
  socket.write(`${JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "slow", arguments: { ms } } })}\n`);
}

async function inFlight(router: Router, n: number): Promise<void> {
  await expect.poll(() => router.tables().inFlight, { timeout: 20_000 }).toBe(n);
}

describe("Router.whenIdle", () => {
  it("resolves once the last call in flight is answered, and not before", async () => {
    const { router, socket, answers } = await start();
    slowCall(socket, 1, 100);
    slowCall(socket, 2, 300);
    await inFlight(router, 2);
    expect(await router.whenIdle(60_000)).toBe(true);
    expect(router.tables().inFlight).toBe(0);
    // Each answer was written before its entry ended.
    await expect.poll(() => answers.size, { timeout: 10_000 }).toBe(2);
  });

  it("gives up after its timeout while a call stays in flight; a client that disconnects with one ends the wait", async () => {
    const { router, socket } = await start();
    slowCall(socket, 1, 600_000);
    await inFlight(router, 1);
    expect(await router.whenIdle(1)).toBe(false);
    const idle = router.whenIdle(60_000);
    socket.destroy();
    expect(await idle).toBe(true);
  });
});
