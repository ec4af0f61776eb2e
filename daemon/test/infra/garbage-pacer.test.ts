/**
 * The garbage pacer (daemon/src/infra/garbage-pacer.ts): a forced collection once enough buffers were let
 * go, at most once per interval, from a timer, never inside the caller. Its clock is vitest's; the
 * collector counts its calls (node's `global.gc` in the daemon).
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

  it("uses node's global.gc by default, when the process has it", () => {
    const p = new GarbagePacer({ minIntervalMs: 1, minReleasedBytes: 1 });
    expect(p.enabled).toBe(typeof (globalThis as { gc?: unknown }).gc === "function");
  });
});
