import { EMPTY } from "./line-bytes.js";
import { growBytes, maxBytesOf, releasableBytes, releaseBytes } from "./releasable-bytes.js";

/** The smallest piece allocated after the first to hold part of a line. */
const MIN_PIECE_BYTES = 256;
/**
 * Pieces stop doubling at this size (a socket read's size): past it the per-piece overhead is noise, and
 * larger blocks only cost fresh pages from the allocator (measured: ~8% slower on 1 MiB lines).
 */
const MAX_PIECE_BYTES = 64 * 1024;
/**
 * A line is held in pieces up to this size, past it in one block of its own (see {@link LinePieces}). Most
 * answers end within a few reads: pieces (views of the reads, mostly) cost no copy and no system call.
 */
const LONG_LINE_BYTES = 256 * 1024;
/** A line joined from its pieces is given memory that is handed back at once (releasable-bytes.ts) from this size on. */
const RELEASABLE_JOIN_BYTES = 1024 * 1024;

/**
 * The bytes of one incomplete line.
 *
 * Up to 256 KiB, in pieces: every piece full but the last, which holds `lastFill` bytes. A new piece is as
 * large as everything held so far (up to 64 KiB), or the bytes to store if more, so a line costs at most
 * about its size plus 64 KiB in few pieces however finely it arrives, and each byte is copied once until
 * the line is joined. (One copied array per chunk cost ~350 bytes of memory per byte when a client wrote
 * one byte at a time.) A piece of exactly the bytes to store is taken with `slice()`: a copy for a plain
 * Uint8Array, a view for a Node Buffer, which is safe because Node never reuses a read's buffer and such a
 * piece is full, so nothing is ever written into it. A view keeps its chunk's whole buffer alive, so it is
 * taken only when it uses at least half of that buffer; {@link retainedBytes} counts what the pieces keep
 * alive.
 *
 * Past 256 KiB, in one block (releasable-bytes.ts) that grows in place up to the line's limit:
 * the line is given back to the system the moment it is dropped or delivered, not when V8 next collects
 * (measured: 100 connections' 4 MiB lines, dropped over the budget, left tens of MiB of garbage that kept
 * the daemon's peak 60 MiB higher, and fragmented the C heap after), and it is never joined: the block is
 * the line. (Measured: a releasable block costs tens of µs of system calls; one per 64 KiB piece decoded
 * 100 KiB lines at half the speed, and 1 MiB lines 15% slower than plain pieces.) Room the block has not
 * used yet is address space, not memory: it is not counted.
 */
export class LinePieces {
  private parts: Uint8Array[] = [];
  private lastFill = 0;
  private held = 0;
  private retained = 0;
  /** A long line's block, once it passed 256 KiB (its first `held` bytes are the line). */
  private block: Uint8Array | undefined;

  /** Bytes of the line held. */
  get bytes(): number {
    return this.held;
  }

  /**
   * Bytes of memory the line keeps alive, at least {@link bytes}: its pieces' buffers' whole size (a piece's
   * unused room, and all of a chunk a view was taken of); a long line's block, the bytes it holds.
   */
  get retainedBytes(): number {
    return this.retained;
  }

  /** Lets go of the line (giving back a long line's block at once, unless it is `keep`'s memory). */
  clear(keep?: Uint8Array): void {
    if (this.block !== undefined && this.block.buffer !== keep?.buffer) releaseBytes(this.block);
    this.block = undefined;
    this.parts = [];
    this.lastFill = 0;
    this.held = 0;
    this.retained = 0;
  }

  /** Appends `bytes` (the caller keeps the line within its limit: `limit` is the most the pieces may grow to). */
  store(bytes: Uint8Array, limit: number): void {
    const n = bytes.length;
    if (n === 0) return;
    if (this.block !== undefined || this.held + n > LONG_LINE_BYTES) {
      this.storeLong(bytes, limit);
      return;
    }
    let k = 0;
    const tail = this.parts[this.parts.length - 1];
    if (tail !== undefined && this.lastFill < tail.length) {
      k = Math.min(n, tail.length - this.lastFill);
      tail.set(k === n ? bytes : bytes.subarray(0, k), this.lastFill);
      this.lastFill += k;
    }
    if (k < n) {
      const rest = n - k;
      const held = this.held + k;
      // The first piece is the exact tail of a read (usually completed by the next one): no slack.
      const size = held === 0 ? rest : Math.min(Math.max(rest, Math.min(held, MAX_PIECE_BYTES), MIN_PIECE_BYTES), limit - held);
      let piece: Uint8Array;
      if (size === rest && 2 * rest >= bytes.buffer.byteLength) piece = k === 0 ? bytes.slice() : bytes.slice(k);
      else {
        piece = new Uint8Array(size);
        piece.set(k === 0 ? bytes : bytes.subarray(k));
      }
      const last = this.parts[this.parts.length - 1];
      if (last === undefined || last.buffer !== piece.buffer) this.retained += piece.buffer.byteLength;
      this.parts.push(piece);
      this.lastFill = rest;
    }
    this.held += n;
  }

  /**
   * Appends `bytes` to the long line's block: made when the line passes 256 KiB (the pieces copied into it)
   * with room for twice that, grown in place by half when full (its memory is zeroed when committed, at a
   * cost that grows with its size: doubling cost 1 MiB lines 15%); never past `limit` + 1 (a CR may follow
   * a line of exactly `limit` bytes).
   */
  private storeLong(bytes: Uint8Array, limit: number): void {
    const need = this.held + bytes.length;
    let block = this.block;
    if (block === undefined) {
      block = releasableBytes(Math.min(limit + 1, Math.max(need, 2 * LONG_LINE_BYTES)), limit + 1);
      this.copyTo(block);
      this.parts = [];
      this.lastFill = 0;
    } else if (need > block.length) {
      block = growBytes(block, Math.min(maxBytesOf(block), Math.max(need, block.length + (block.length >> 1))));
    }
    block.set(bytes, this.held);
    this.block = block;
    this.held = need;
    this.retained = need;
  }

  /** Copies the pieces' bytes to the start of `out`; returns how many. */
  private copyTo(out: Uint8Array): number {
    let off = 0;
    const end = this.parts.length - 1;
    for (let i = 0; i <= end; i++) {
      const p = this.parts[i] as Uint8Array;
      const bytes = i === end && this.lastFill !== p.length ? p.subarray(0, this.lastFill) : p;
      out.set(bytes, off);
      off += bytes.length;
    }
    return off;
  }

  /** A copy of the first `n` (at most) bytes held. */
  head(n: number): Uint8Array {
    if (this.block !== undefined) return this.block.slice(0, Math.min(n, this.held));
    const out = new Uint8Array(Math.min(n, this.held));
    let off = 0;
    for (const p of this.parts) {
      if (off >= out.length) break;
      const k = Math.min(p.length, out.length - off);
      out.set(p.subarray(0, k), off);
      off += k;
    }
    return out;
  }

  /**
   * The bytes held followed by `last`, in one array (without a copy when they are one piece); then empty.
   * The caller hands a large one to `releaseBytes` once done with it.
   */
  take(last: Uint8Array = EMPTY): Uint8Array {
    const n = this.held + last.length;
    let out: Uint8Array;
    const block = this.block;
    if (block !== undefined) {
      // The block is the line: `last` goes after it (in room it has, or grows to), nothing is joined.
      out = n <= block.length ? block : n <= maxBytesOf(block) ? growBytes(block, n) : releasableBytes(n);
      if (out !== block && out.buffer !== block.buffer) out.set(block.subarray(0, this.held));
      out.set(last, this.held);
      out = out.subarray(0, n);
    } else if (this.parts.length === 0) out = last;
    else if (this.parts.length === 1 && last.length === 0) {
      const only = this.parts[0] as Uint8Array;
      out = this.lastFill === only.length ? only : only.subarray(0, this.lastFill);
    } else {
      out = n >= RELEASABLE_JOIN_BYTES ? releasableBytes(n) : new Uint8Array(n);
      out.set(last, this.copyTo(out));
    }
    this.clear(out);
    return out;
  }
}
