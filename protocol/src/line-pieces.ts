import { EMPTY } from "./line-bytes.js";
import { releasableBytes, releaseBytes } from "./releasable-bytes.js";

/** The smallest piece allocated after the first to hold part of a line. */
const MIN_PIECE_BYTES = 256;
/**
 * Pieces stop doubling at this size (a socket read's size): past it the per-piece overhead is noise, and
 * larger blocks only cost fresh pages from the allocator (measured: ~8% slower on 1 MiB lines).
 */
const MAX_PIECE_BYTES = 64 * 1024;
/** A line joined from its pieces is given memory that is handed back at once (releasable-bytes.ts) from this size on. */
const RELEASABLE_JOIN_BYTES = 1024 * 1024;

/**
 * The bytes of one incomplete line, in pieces: every piece full but the last, which holds `lastFill`
 * bytes. A new piece is as large as everything held so far (up to 64 KiB), or the bytes to store if more,
 * so a line costs at most about its size plus 64 KiB in few pieces however finely it arrives, and each
 * byte is copied once until the line is joined. (One copied array per chunk cost ~350 bytes of memory per
 * byte when a client wrote one byte at a time.)
 *
 * Full-size pieces (64 KiB: every piece of a long line) are given back to the system the moment the line
 * is done with them (releasable-bytes.ts), not when V8 next collects: a long line dropped or delivered
 * leaves no garbage behind (measured: 100 connections' 4 MiB lines, dropped over the budget, left tens of
 * MiB of garbage that kept the daemon's peak 60 MiB higher, and fragmented the C heap after). A smaller
 * piece of exactly the bytes to store is taken with `slice()`: a copy for a plain Uint8Array, a view for a
 * Node Buffer, which is safe because Node never reuses a read's buffer and such a piece is full, so nothing
 * is ever written into it. A view keeps its chunk's whole buffer alive, so it is taken only when it uses at
 * least half of that buffer; {@link retainedBytes} counts what the pieces keep alive.
 */
export class LinePieces {
  private parts: Uint8Array[] = [];
  private lastFill = 0;
  private held = 0;
  private retained = 0;

  /** Bytes of the line held. */
  get bytes(): number {
    return this.held;
  }

  /**
   * Bytes of memory the pieces keep alive: their buffers' whole size (a piece's unused room, and all of a
   * chunk a view was taken of), at least {@link bytes}.
   */
  get retainedBytes(): number {
    return this.retained;
  }

  /** Lets go of every piece (giving back the memory of those that can, except `keep`). */
  clear(keep?: Uint8Array): void {
    for (const p of this.parts) if (p !== keep) releaseBytes(p);
    this.parts = [];
    this.lastFill = 0;
    this.held = 0;
    this.retained = 0;
  }

  /** Appends `bytes` (the caller keeps the line within its limit: `limit` is the most the pieces may grow to). */
  store(bytes: Uint8Array, limit: number): void {
    const n = bytes.length;
    if (n === 0) return;
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
      if (size !== MAX_PIECE_BYTES && size === rest && 2 * rest >= bytes.buffer.byteLength)
        piece = k === 0 ? bytes.slice() : bytes.slice(k);
      else {
        piece = size === MAX_PIECE_BYTES ? releasableBytes(size) : new Uint8Array(size);
        piece.set(k === 0 ? bytes : bytes.subarray(k));
      }
      const last = this.parts[this.parts.length - 1];
      if (last === undefined || last.buffer !== piece.buffer) this.retained += piece.buffer.byteLength;
      this.parts.push(piece);
      this.lastFill = rest;
    }
    this.held += n;
  }

  /** A copy of the first `n` (at most) bytes held. */
  head(n: number): Uint8Array {
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
    const parts = this.parts;
    let out: Uint8Array;
    let keep: Uint8Array | undefined;
    if (parts.length === 0) out = last;
    else if (parts.length === 1 && last.length === 0) {
      keep = parts[0] as Uint8Array;
      out = this.lastFill === keep.length ? keep : keep.subarray(0, this.lastFill);
    } else {
      const n = this.held + last.length;
      out = n >= RELEASABLE_JOIN_BYTES ? releasableBytes(n) : new Uint8Array(n);
      let off = 0;
      const end = parts.length - 1;
      for (let i = 0; i < end; i++) {
        const p = parts[i] as Uint8Array;
        out.set(p, off);
        off += p.length;
      }
      const p = parts[end] as Uint8Array;
      out.set(this.lastFill === p.length ? p : p.subarray(0, this.lastFill), off);
      off += this.lastFill;
      if (last.length > 0) out.set(last, off);
    }
    this.clear(keep);
    return out;
  }
}
