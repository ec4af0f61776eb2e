/** How a {@link BodyBlocks} pool is sized; the daemon's are in RUNTIME_DEFAULTS (`httpBodyBlock*`). */
export interface BodyBlocksOptions {
  /** Size of each block, in bytes (at least the allocator's mmap threshold, so each is a mapping of its own). */
  blockBytes: number;
  /** Most blocks kept idle for the next bodies. */
  maxIdle: number;
  /** Idle blocks no body took within this many ms are let go, in ms. */
  idleMs: number;
  /** Told of the bytes of blocks let go (a garbage pacer's `release`). */
  released: (bytes: number) => void;
}

/**
 * The blocks the HTTP front end keeps request bodies in (body-chunks.ts), reused: a body refused over the
 * budget, read, or left by its client gives its blocks back, and the next body writes into them instead of
 * new ones, so a front end refusing bodies as fast as loopback delivers them (100 of 4 MiB in half a second)
 * does not leave each refused body's bytes as garbage until V8 next collects. At most `maxIdle` blocks
 * wait; those no body took for `idleMs` are let go, and the pacer told, so an idle daemon keeps none.
 */
export class BodyBlocks {
  private readonly opts: BodyBlocksOptions;
  private readonly idle: Buffer[] = [];
  /** The fewest blocks idle since the last trim: that many were not needed. */
  private lowWater = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: BodyBlocksOptions) {
    this.opts = { ...options };
  }

  /** Size of each block, in bytes. */
  get blockBytes(): number {
    return this.opts.blockBytes;
  }

  /** Blocks waiting for a body. */
  get idleCount(): number {
    return this.idle.length;
  }

  /** A block to write into: an idle one, or a new one (its contents are not cleared). */
  take(): Buffer {
    const block = this.idle.pop();
    this.lowWater = Math.min(this.lowWater, this.idle.length);
    return block ?? Buffer.allocUnsafeSlow(this.opts.blockBytes);
  }

  /** `block` (from {@link take}) is no longer used by anyone: it waits for the next body, or is let go. */
  give(block: Buffer): void {
    if (this.idle.length >= this.opts.maxIdle) {
      this.opts.released(block.length);
      return;
    }
    this.idle.push(block);
    if (this.timer === undefined) {
      this.lowWater = this.idle.length;
      this.timer = setTimeout(() => this.trim(), this.opts.idleMs);
      this.timer.unref();
    }
  }

  /** Lets go of every idle block (the front end closes). */
  clear(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.drop(this.idle.length);
  }

  private trim(): void {
    this.timer = undefined;
    this.drop(this.lowWater);
    this.lowWater = this.idle.length;
    if (this.idle.length > 0) {
      this.timer = setTimeout(() => this.trim(), this.opts.idleMs);
      this.timer.unref();
    }
  }

  private drop(n: number): void {
    if (n <= 0) return;
    // The oldest first: those at the bottom waited longest.
    this.idle.splice(0, n);
    this.opts.released(n * this.opts.blockBytes);
  }
}
