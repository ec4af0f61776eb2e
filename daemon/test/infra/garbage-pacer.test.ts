/**
 * The garbage pacer (daemon/src/infra/garbage-pacer.ts): a forced collection once enough buffers were let
 * go, at most once per interval, from a timer, never inside the caller. Its clock is vitest's; the
 * collector counts its calls (node's `global.gc` in the daemon), as does the compacting one, and V8's heap
 * is given.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { GarbagePacer } from "../../src/infra/garbage-pacer.js";

const MiB = 1024 * 1024;

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

function pacer(intervalMs = 250, releasedBytes = 16 * MiB): { pacer: GarbagePacer; runs: () => number } {
  let n = 0;
  return { pacer: new GarbagePacer({ minIntervalMs: intervalMs, minReleasedBytes: releasedBytes, collect: () => n++ }), runs: () => n };
}

describe("GarbagePacer", () => {
  it("collects once the released bytes reach the threshold, from a timer (the caller still holds what it let go)", () => {
    const { pacer: p, runs } = pacer();
    p.release(16 * MiB - 1);
    vi.advanceTimersByTime(10_000);
    expect(runs()).toBe(0);
    p.release(1);
    expect(runs()).toBe(0);
    vi.advanceTimersByTime(0);
    expect([runs(), p.collections]).toEqual([1, 1]);
  });

  it("collects once for a burst of releases", () => {
    const { pacer: p, runs } = pacer();
    for (let i = 0; i < 1_000; i++) p.release(MiB);
    vi.advanceTimersByTime(0);
    expect(runs()).toBe(1);
  });

  it("collects at most once per interval: releases within it are collected when it ends", () => {
    const { pacer: p, runs } = pacer(250);
    p.release(16 * MiB);
    vi.advanceTimersByTime(0);
    expect(runs()).toBe(1);
    p.release(64 * MiB);
    vi.advanceTimersByTime(249);
    expect(runs()).toBe(1);
    vi.advanceTimersByTime(1);
    expect(runs()).toBe(2);
    // Counting starts again after each collection.
    p.release(MiB);
    vi.advanceTimersByTime(10_000);
    expect(runs()).toBe(2);
  });

  it("ignores nothing let go, and stop() cancels a collection not yet run", () => {
    const { pacer: p, runs } = pacer();
    p.release(0);
    p.release(-5);
    p.release(16 * MiB);
    p.stop();
    vi.advanceTimersByTime(10_000);
    expect(runs()).toBe(0);
  });

  it("does nothing without a collector (node without --expose-gc)", () => {
    const p = new GarbagePacer({ minIntervalMs: 1, minReleasedBytes: 1, collect: undefined });
    expect(p.enabled).toBe(false);
    p.release(64 * MiB);
    vi.advanceTimersByTime(10_000);
    expect(p.collections).toBe(0);
  });

  it("regression: 10 never-read GET streams under a flood left 20 MiB in use in 150 MiB of V8's heap after the pacer's collections: once the load is over, a compacting one", () => {
    const heap = { used: 20 * MiB, total: 150 * MiB };
    let compacted = 0;
    let collected = 0;
    const p = new GarbagePacer({
      minIntervalMs: 250,
      minReleasedBytes: 16 * MiB,
      minRoomBytes: 32 * MiB,
      quietMs: 1_000,
      collect: () => collected++,
      compact: () => compacted++,
      heap: () => heap,
    });
    p.release(16 * MiB);
    vi.advanceTimersByTime(0);
    expect([collected, compacted]).toEqual([1, 0]);
    // The load goes on (releases keep coming): no compaction under it (it would raise the peak).
    for (let i = 0; i < 8; i++) {
      vi.advanceTimersByTime(900);
      p.release(MiB);
    }
    expect(compacted).toBe(0);
    // Quiet for a second since the last release: compacted once.
    vi.advanceTimersByTime(2_000);
    expect([collected, compacted, p.compactions]).toEqual([1, 1, 1]);
    vi.advanceTimersByTime(10_000);
    expect(compacted).toBe(1);
  });

  it("compacts only a heap left mostly room: not one mostly in use, nor one with little room", () => {
    let heap = { used: 100 * MiB, total: 150 * MiB };
    let compacted = 0;
    const p = new GarbagePacer({
      minIntervalMs: 1,
      minReleasedBytes: 1,
      minRoomBytes: 32 * MiB,
      quietMs: 100,
      collect: () => {},
      compact: () => compacted++,
      heap: () => heap,
    });
    p.release(MiB);
    vi.advanceTimersByTime(1_000);
    heap = { used: 10 * MiB, total: 30 * MiB };
    p.release(MiB);
    vi.advanceTimersByTime(1_000);
    expect([p.collections, compacted]).toEqual([2, 0]);
  });

  it("never compacts without minRoomBytes, nor without a compacting collection", () => {
    let compacted = 0;
    const heap = () => ({ used: MiB, total: 500 * MiB });
    const p = new GarbagePacer({ minIntervalMs: 1, minReleasedBytes: 1, collect: () => {}, compact: () => compacted++, heap });
    const q = new GarbagePacer({ minIntervalMs: 1, minReleasedBytes: 1, minRoomBytes: MiB, collect: () => {}, compact: undefined, heap });
    p.release(MiB);
    q.release(MiB);
    vi.advanceTimersByTime(10_000);
    expect([p.collections, q.collections, compacted, q.compactions]).toEqual([1, 1, 0, 0]);
  });

  it("uses node's global.gc by default, when the process has it", () => {
    const p = new GarbagePacer({ minIntervalMs: 1, minReleasedBytes: 1 });
    expect(p.enabled).toBe(typeof (globalThis as { gc?: unknown }).gc === "function");
  });
});
