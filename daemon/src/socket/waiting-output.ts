import { growBytes, maxBytesOf, releasableBytes, releaseBytes } from "@mcpd/protocol";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** A block starts with this many bytes (a page) and doubles in place as lines come... */
const FIRST_BYTES = 4 * 1024;
/** ...up to this many; then the next lines go to a new one (a longer line gets one of its own). */
const BLOCK_BYTES = 256 * 1024;
/** The most bytes a character takes in UTF-8 (a UTF-16 code unit: 3; a surrogate pair: 4 for 2 units). */
const MAX_UTF8_PER_CHAR = 3;
/** A line of more characters than this could not share a block: it gets a buffer of its own (see addOwn). */
const OWN_BLOCK_CHARS = Math.floor(BLOCK_BYTES / MAX_UTF8_PER_CHAR);

/**
 * A tick's output for a client whose earlier output still waits (it reads slower than it is sent to):
 * each line encoded as UTF-8 as it is sent, into blocks of memory of their own (@mcpd/protocol's
 * releasableBytes), written at the end of the tick and given back the moment each is written or dropped.
 *
 * Held as bytes, it is counted as what it costs. And no string outlives its message: a tick's lines
 * joined into one string lived long enough for V8 to move it to its old generation, so 60 clients that
 * never read a flood of notifications made tens of MiB of garbage between collections (measured: the
 * daemon's peak 20-50 MiB higher).
 */
export class WaitingOutput {
  private blocks: Uint8Array[] = [];
  private used: number[] = [];
  private total = 0;
  private readonly flushLater: () => void;

  /**
   * @param writeBlock writes one block's bytes to the stream; `done` gives the block back (call it once written or dropped)
   * @param defer runs its callback at the end of the current tick (`process.nextTick`)
   */
  constructor(
    private readonly writeBlock: (bytes: Uint8Array, done: () => void) => void,
    private readonly defer: (run: () => void) => void,
  ) {
    this.flushLater = () => this.flush();
  }

  /** Bytes waiting for the end of the tick. */
  get bytes(): number {
    return this.total;
  }

  /** Adds one line (with its newline). */
  add(line: string): void {
    if (this.total === 0) this.defer(this.flushLater);
    if (line.length > OWN_BLOCK_CHARS) return this.addOwn(line);
    const at = this.blocks.length - 1;
    let block: Uint8Array | undefined = this.blocks[at];
    let used = this.used[at] ?? 0;
    const need = line.length * MAX_UTF8_PER_CHAR;
    if (block !== undefined && used + need > block.length) {
      const max = maxBytesOf(block);
      if (used + need <= max) block = this.blocks[at] = growBytes(block, Math.min(max, Math.max(2 * block.length, used + need)));
      else block = undefined;
    }
    if (block === undefined) {
      block = releasableBytes(Math.max(FIRST_BYTES, need), Math.max(BLOCK_BYTES, need));
      used = 0;
      this.blocks.push(block);
      this.used.push(0);
    }
    const { written } = encoder.encodeInto(line, block.subarray(used));
    this.used[this.blocks.length - 1] = used + written;
    this.total += written;
  }

  /**
   * A line long enough to need a block of its own goes as a plain buffer of its exact size: a releasable
   * block sized for its worst case costs system calls and page faults (a 100 KB answer: ~150 µs more of the
   * daemon's CPU), and its memory goes back when the garbage pacer next collects (its bytes are reported
   * released once written or dropped, as every output's).
   */
  private addOwn(line: string): void {
    const bytes = Buffer.from(line);
    this.blocks.push(bytes);
    this.used.push(bytes.length);
    this.total += bytes.length;
  }

  /** Writes what waits (a no-op when nothing does). */
  flush(): void {
    const { blocks, used } = this.take();
    for (let i = 0; i < blocks.length; i++) {
      const block = blocks[i] as Uint8Array;
      this.writeBlock(block.subarray(0, used[i]), () => releaseBytes(block));
    }
  }

  /** Takes what waits as text, unwritten (the caller writes it), and gives its blocks back. */
  takeText(): string {
    const { blocks, used } = this.take();
    let text = "";
    for (let i = 0; i < blocks.length; i++) {
      const block = blocks[i] as Uint8Array;
      text += decoder.decode(block.subarray(0, used[i]));
      releaseBytes(block);
    }
    return text;
  }

  private take(): { blocks: Uint8Array[]; used: number[] } {
    const out = { blocks: this.blocks, used: this.used };
    this.blocks = [];
    this.used = [];
    this.total = 0;
    return out;
  }
}
