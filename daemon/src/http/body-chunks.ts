import { allocationBytes } from "../infra/allocator-env.js";
import type { BodyBlocks } from "./body-blocks.js";

/**
 * A request body's bytes as they arrive, kept so that what they take is what is charged, and so that they
 * cost no garbage but the parser's own copies once they are let go.
 *
 * Node's HTTP parser hands a body over as a copy of each socket read (up to 64 KiB, each its own block).
 * A body in one read is kept as it came. Once a body has a second read, its reads are copied into blocks
 * from the front end's {@link BodyBlocks} and let go at once: young garbage, freed by V8's next scavenge.
 * Kept as they came, they would be old by the time the body is refused or read, garbage until the next full
 * collection (under a flood of refused bodies: tens of MiB over the budget), and the reads under the
 * allocator's mmap threshold (a quarter of them) would sit in the brk heap among longer-lived blocks and
 * keep it from shrinking after the bodies are gone. The blocks go back to the pool when the body is let go.
 *
 * {@link cost} is what its memory takes from the allocator ({@link allocationBytes}), not its length: a
 * 64 KiB read takes 68 KiB.
 */
export class BodyChunks {
  /** Body bytes arrived. */
  size = 0;
  /** Memory they take, in bytes: what is charged to the budget. */
  cost = 0;
  private parts: Buffer[] = [];
  /** The blocks taken from the pool, the last one being filled. */
  private blocks: Buffer[] = [];
  private fill = 0;
  private blockCost = 0;
  /** A block is part of the body handed out by {@link toBuffer}: it is not given back. */
  private handedOut = false;

  constructor(private readonly pool: BodyBlocks) {}

  /** Adds the next read; returns how many bytes were let go at once (reads copied), for the garbage pacer. */
  push(chunk: Buffer): number {
    this.size += chunk.length;
    if (this.size === chunk.length) {
      this.parts.push(chunk);
      this.cost = allocationBytes(chunk.length);
      return 0;
    }
    let released = chunk.length;
    if (this.blocks.length === 0) {
      // The body is not in one read after all: its first read is copied like the others.
      const first = this.parts[0] as Buffer;
      this.parts = [];
      this.cost = 0;
      this.copyIn(first);
      released += first.length;
    }
    this.copyIn(chunk);
    return released;
  }

  /** The whole body: its one read as it came, or its parts joined (a body in one block is handed out as is). */
  toBuffer(): Buffer {
    if (this.parts.length !== 1) return Buffer.concat(this.parts, this.size);
    this.handedOut = true;
    return this.parts[0] as Buffer;
  }

  /**
   * Lets go of every byte (the body was read, refused, or its client went away): its blocks go back to the
   * pool, unless {@link toBuffer} handed one out. Returns the bytes left to the garbage collector: a read
   * kept as it came and not handed out.
   */
  clear(): number {
    const left = this.handedOut || this.blocks.length > 0 ? 0 : this.size;
    if (!this.handedOut) for (const b of this.blocks) this.pool.give(b);
    this.handedOut = false;
    this.parts = [];
    this.blocks = [];
    this.size = this.cost = this.fill = this.blockCost = 0;
    return left;
  }

  private copyIn(chunk: Buffer): void {
    for (let at = 0; at < chunk.length; ) {
      let block = this.blocks[this.blocks.length - 1];
      if (block === undefined || this.fill === block.length) {
        block = this.pool.take();
        this.blocks.push(block);
        this.fill = this.blockCost = 0;
      }
      const start = this.fill;
      const n = chunk.copy(block, start, at);
      at += n;
      this.fill += n;
      // Reads copied one after another into a block are one part.
      if (start === 0) this.parts.push(block.subarray(0, this.fill));
      else this.parts[this.parts.length - 1] = block.subarray(0, this.fill);
      const cost = allocationBytes(block.length, this.fill);
      this.cost += cost - this.blockCost;
      this.blockCost = cost;
    }
  }
}
