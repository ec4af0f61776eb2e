import { describe, expect, it } from "vitest";
import { ConcurrencyGate } from "../../src/supervision/concurrency-gate.js";

/** Resolves after every pending microtask and the current macrotask's promise jobs have run. */
const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

describe("a server's concurrency gate", () => {
  it("hands out free slots synchronously, and only while nobody waits", async () => {
    const gate = new ConcurrencyGate(2);
    expect(gate.tryAcquire()).toBe(true);
    expect(gate.tryAcquire()).toBe(true);
    expect(gate.tryAcquire()).toBe(false);
    expect(gate.running).toBe(2);
    const waiter = gate.acquire();
    expect(gate.waiting).toBe(1);
    gate.release();
    await waiter;
    // The freed slot went to the waiter, not to whoever asks next.
    expect(gate.running).toBe(2);
    expect(gate.waiting).toBe(0);
    expect(gate.tryAcquire()).toBe(false);
  });

  it("lets waiters in in arrival order, one per released slot", async () => {
    const gate = new ConcurrencyGate(1);
    expect(gate.tryAcquire()).toBe(true);
    const order: number[] = [];
    const waiters = [1, 2, 3].map((n) => gate.acquire().then(() => order.push(n)));
    expect(gate.waiting).toBe(3);
    gate.release();
    await settle();
    expect(order).toEqual([1]);
    gate.release();
    gate.release();
    await Promise.all(waiters);
    expect(order).toEqual([1, 2, 3]);
    expect(gate.running).toBe(1);
  });

  it("an aborted waiter leaves the line with its signal's reason and holds no slot; the next one gets the slot", async () => {
    const gate = new ConcurrencyGate(1);
    gate.tryAcquire();
    const ac = new AbortController();
    const first = gate.acquire(ac.signal);
    const second = gate.acquire();
    const reason = new Error("client cancelled");
    ac.abort(reason);
    await expect(first).rejects.toBe(reason);
    expect(gate.waiting).toBe(1);
    gate.release();
    await second;
    expect(gate.running).toBe(1);
    expect(gate.waiting).toBe(0);
  });

  it("refuses at once with the reason when the signal has already aborted", async () => {
    const gate = new ConcurrencyGate(1);
    const reason = new Error("gone already");
    await expect(gate.acquire(AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(gate.running).toBe(0);
    expect(gate.waiting).toBe(0);
  });

  it("raising the concurrency lets waiters in at once; lowering it takes effect as slots are released", async () => {
    const gate = new ConcurrencyGate(1);
    gate.tryAcquire();
    const a = gate.acquire();
    const b = gate.acquire();
    gate.concurrency = 3;
    await Promise.all([a, b]);
    expect(gate.running).toBe(3);
    gate.concurrency = 1;
    gate.release();
    gate.release();
    expect(gate.running).toBe(1);
    expect(gate.tryAcquire()).toBe(false);
  });

  it("stays bounded while waiters keep giving up on a server whose slots stay taken", async () => {
    const gate = new ConcurrencyGate(1);
    gate.tryAcquire();
    const kept = gate.acquire();
    let gaveUp = 0;
    for (let i = 0; i < 10_000; i++) {
      const ac = new AbortController();
      const p = gate.acquire(ac.signal).then(
        () => {},
        () => gaveUp++,
      );
      ac.abort();
      await p;
    }
    expect(gaveUp).toBe(10_000);
    expect(gate.waiting).toBe(1);
    // What the gate holds for its line: the one live waiter plus a bounded number of given-up ones.
    expect((gate as unknown as { line: unknown[]; head: number }).line.length).toBeLessThan(200);
    gate.release();
    await kept;
    expect(gate.running).toBe(1);
  });
});
