/**
 * The pool of blocks request bodies are kept in (daemon/src/http/body-blocks.ts): blocks given back are
 * taken again by the next bodies; at most `maxIdle` wait, and those no body took within `idleMs` are let go
 * and the garbage pacer told, so an idle daemon keeps none. Its clock is vitest's.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { BodyBlocks } from "../../src/http/body-blocks.js";

const BLOCK = 64 * 1024;

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

function pool(maxIdle = 4): { blocks: BodyBlocks; released: () => number } {
  let released = 0;
  const blocks = new BodyBlocks({ blockBytes: BLOCK, maxIdle, idleMs: 1_000, released: (n) => void (released += n) });
  return { blocks, released: () => released };
}

describe("BodyBlocks", () => {
  it("gives the blocks given back to the next bodies, the last given first", () => {
    const { blocks } = pool();
    const a = blocks.take();
    const b = blocks.take();
    expect(a.length).toBe(BLOCK);
    blocks.give(a);
    blocks.give(b);
    expect(blocks.take()).toBe(b);
    expect(blocks.take()).toBe(a);
    expect(blocks.take()).not.toBe(a);
  });

  it("keeps at most maxIdle blocks: one more is let go and told", () => {
    const { blocks, released } = pool(2);
    const taken = [blocks.take(), blocks.take(), blocks.take()];
    for (const t of taken) blocks.give(t);
    expect([blocks.idleCount, released()]).toEqual([2, BLOCK]);
  });

  it("regression: blocks no body took are let go within two idle periods (the pacer told), those in use are kept", () => {
    const { blocks, released } = pool();
    const taken = [blocks.take(), blocks.take(), blocks.take()];
    for (const t of taken) blocks.give(t);
    // Bodies keep taking one and giving it back: that one is in use, the two others are not.
    for (let i = 0; i < 5; i++) {
      vi.advanceTimersByTime(400);
      blocks.give(blocks.take());
    }
    expect([blocks.idleCount, released()]).toEqual([1, 2 * BLOCK]);
    vi.advanceTimersByTime(2_000);
    expect([blocks.idleCount, released()]).toEqual([0, 3 * BLOCK]);
  });

  it("clear lets go of every idle block", () => {
    const { blocks, released } = pool();
    blocks.give(blocks.take());
    blocks.clear();
    expect([blocks.idleCount, released()]).toEqual([0, BLOCK]);
    vi.advanceTimersByTime(10_000);
    expect(released()).toBe(BLOCK);
  });
});
