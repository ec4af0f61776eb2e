/**
 * A request body's reads as the HTTP front end keeps them (daemon/src/http/body-chunks.ts): a body in one
 * read as it came; once it has a second read, every read copied into pooled blocks and let go at once (kept
 * as they came, 100 bodies of 4 MiB refused over the budget left their reads as garbage, peak +211 MiB, and
 * the small ones kept +21 to +34 MiB in the brk heap); what they take from the allocator charged, not their
 * length; the blocks given back when the body is let go, unless it was handed out in one of them.
 */
import { describe, expect, it } from "vitest";
import { BodyBlocks } from "../../src/http/body-blocks.js";
import { BodyChunks } from "../../src/http/body-chunks.js";
import { allocationBytes } from "../../src/infra/allocator-env.js";

const KiB = 1024;
const bytes = (n: number, fill: number): Buffer => Buffer.alloc(n, fill);

function pool(blockBytes = 256 * KiB): { blocks: BodyBlocks; released: () => number } {
  let released = 0;
  const blocks = new BodyBlocks({ blockBytes, maxIdle: 8, idleMs: 60_000, released: (n) => void (released += n) });
  return { blocks, released: () => released };
}

describe("allocationBytes", () => {
  it("a block of the mmap threshold or more takes whole pages (only those written), a smaller one its header besides", () => {
    // A 64 KiB socket read: its header passes a page, so it takes 17 of them.
    expect(allocationBytes(64 * KiB)).toBe(68 * KiB);
    expect(allocationBytes(100)).toBe(116);
    expect(allocationBytes(256 * KiB, 10 * KiB)).toBe(12 * KiB);
  });
});

describe("BodyChunks", () => {
  it("keeps a body in one read as it came: not copied, nothing let go, its allocation charged", () => {
    const { blocks } = pool();
    const b = new BodyChunks(blocks);
    const only = bytes(100, 1);
    expect(b.push(only)).toBe(0);
    expect([b.size, b.cost]).toEqual([100, allocationBytes(100)]);
    expect(b.toBuffer()).toBe(only);
    // Handed out: nothing left to the collector here, nothing given to the pool.
    expect(b.clear()).toBe(0);
    expect(blocks.idleCount).toBe(0);
  });

  it("regression: a refused body's reads were old garbage until a full collection (peak +211 MiB): they are copied into blocks, let go at once, the blocks reused", () => {
    const { blocks } = pool();
    const b = new BodyChunks(blocks);
    const reads = [bytes(64 * KiB, 1), bytes(20 * KiB, 2), bytes(64 * KiB, 3)];
    expect(b.push(reads[0] as Buffer)).toBe(0);
    // The second read copies the first one too: both are let go at once.
    expect(b.push(reads[1] as Buffer)).toBe(84 * KiB);
    expect(b.push(reads[2] as Buffer)).toBe(64 * KiB);
    expect([b.size, b.cost]).toEqual([148 * KiB, allocationBytes(256 * KiB, 148 * KiB)]);
    const body = b.toBuffer();
    expect(body).toEqual(Buffer.concat(reads as Buffer[]));
    for (const r of reads) expect(body.buffer).not.toBe(r.buffer);
    // Refused: the block goes back to the pool, none of it garbage; the next body writes into it.
    const b2 = new BodyChunks(blocks);
    const refused = new BodyChunks(blocks);
    refused.push(bytes(10, 0));
    refused.push(bytes(10, 0));
    expect(refused.clear()).toBe(0);
    expect(blocks.idleCount).toBe(1);
    b2.push(bytes(10, 5));
    b2.push(bytes(10, 6));
    expect(blocks.idleCount).toBe(0);
    expect(b2.toBuffer()).toEqual(Buffer.concat([bytes(10, 5), bytes(10, 6)]));
  });

  it("a refused body in one read is left to the collector (and told), a body read in one block keeps its block", () => {
    const { blocks } = pool();
    const one = new BodyChunks(blocks);
    one.push(bytes(300, 1));
    expect(one.clear()).toBe(300);
    const inBlock = new BodyChunks(blocks);
    inBlock.push(bytes(10, 1));
    inBlock.push(bytes(10, 2));
    const body = inBlock.toBuffer();
    expect(inBlock.clear()).toBe(0);
    // Still the body's: not given to the pool to be written over.
    expect(blocks.idleCount).toBe(0);
    expect(body).toEqual(Buffer.concat([bytes(10, 1), bytes(10, 2)]));
  });

  it("fills one block after another and gives them all back", () => {
    const { blocks } = pool(64 * KiB);
    const b = new BodyChunks(blocks);
    const reads = Array.from({ length: 5 }, (_, i) => bytes(30 * KiB, i));
    for (const r of reads) b.push(r);
    expect(b.toBuffer()).toEqual(Buffer.concat(reads));
    // 150 KiB over blocks of 64 KiB: two full ones and 22 KiB of a third.
    expect(b.cost).toBe(2 * allocationBytes(64 * KiB) + allocationBytes(64 * KiB, 22 * KiB));
    expect(b.clear()).toBe(0);
    expect(blocks.idleCount).toBe(3);
    expect([b.size, b.cost]).toEqual([0, 0]);
  });
});
