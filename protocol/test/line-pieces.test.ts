/**
 * What the JSONL decoder's held line really costs (`retainedBytes`, line-pieces.ts), and that a long
 * line's memory goes back to the system the moment the line is dropped or delivered. A budget of memory
 * held for clients counted only the line's length (`bufferedBytes`) before, and the pieces stayed until V8
 * next collected.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { JsonLineDecoder } from "../src/jsonl.js";
import { growBytes, maxBytesOf, releasableBytes, releaseBytes } from "../src/releasable-bytes.js";

const KiB = 1024;
const MiB = 1024 * KiB;

/** Resident memory of this process (VmRSS), in bytes; Linux. */
function rss(): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync("/proc/self/status", "utf8"));
  return Number(m?.[1]) * KiB;
}

function decoder(maxLineBytes = 4 * MiB): JsonLineDecoder {
  return new JsonLineDecoder({ maxLineBytes, onValue: () => {}, onError: () => {} });
}

describe("JsonLineDecoder.retainedBytes", () => {
  it("regression: a held line kept as a view of a read counts the read's whole buffer, not only the line's bytes", () => {
    const d = decoder();
    // A read of 1,000 bytes whose last 600 start a line: the piece is a view, which keeps all 1,000 alive.
    const read = Buffer.alloc(1_000, 0x20);
    read.write("[1]\n", 396);
    d.push(read.subarray(0, 400));
    d.push(read.subarray(400));
    expect(d.bufferedBytes).toBe(600);
    expect(d.retainedBytes).toBe(1_000);
  });

  it("copies a short tail of a large read instead of keeping the whole read alive for it", () => {
    const d = decoder();
    const read = Buffer.alloc(64 * KiB, 0x20);
    read.write("[1]\n[2,", 64 * KiB - 7);
    d.push(read);
    expect(d.bufferedBytes).toBe(3);
    expect(d.retainedBytes).toBe(3);
  });

  it("counts the room its pieces hold beyond the line, which a line arriving in small reads leaves", () => {
    const d = decoder();
    for (let i = 0; i < 300; i++) d.push(Uint8Array.of(0x20));
    expect(d.bufferedBytes).toBe(300);
    expect(d.retainedBytes).toBeGreaterThan(300);
    // Pieces double up to 64 KiB: at most about twice the line, plus one piece.
    expect(d.retainedBytes).toBeLessThanOrEqual(2 * 300 + 64 * KiB);
    d.push("\n");
    expect([d.bufferedBytes, d.retainedBytes]).toEqual([0, 0]);
  });

  it("stays at most about twice the line plus 64 KiB however a 1 MiB line arrives", () => {
    for (const size of [1, 100, 4 * KiB, 40 * KiB, 64 * KiB, 100 * KiB]) {
      const d = decoder();
      let sent = 0;
      // A fresh buffer per push, as every socket read is.
      for (; sent + size <= MiB; sent += size) d.push(Buffer.alloc(size, 0x20));
      expect(d.bufferedBytes, `${size}-byte reads`).toBe(sent);
      expect(d.retainedBytes, `${size}-byte reads`).toBeGreaterThanOrEqual(sent);
      expect(d.retainedBytes, `${size}-byte reads`).toBeLessThanOrEqual(2 * sent + 64 * KiB);
      d.clear();
      expect(d.retainedBytes).toBe(0);
    }
  });
});

describe("JsonLineDecoder: how a held line's reads are kept", () => {
  /**
   * A line `[`, whitespace, `]` of `reads` full 64 KiB reads (each its own buffer, as socket reads are);
   * once all are pushed, the reads from `changed` on are overwritten with "x" before the line ends. A read
   * kept as a view then makes the line no JSON; one kept as a copy does not.
   */
  function line(reads: number, changed: number): { delivered: unknown[]; errors: number } {
    const delivered: unknown[] = [];
    let errors = 0;
    const d = new JsonLineDecoder({ maxLineBytes: 4 * MiB, onValue: (v) => delivered.push(v), onError: () => errors++ });
    const buffers = Array.from({ length: reads }, () => Buffer.alloc(64 * KiB, 0x20));
    (buffers[0] as Buffer)[0] = 0x5b; // [
    for (const b of buffers) d.push(b);
    for (const b of buffers.slice(changed)) b.fill(0x78);
    d.push("]\n");
    return { delivered, errors };
  }

  it("regression: a line of a few full reads keeps views of them, not copies (each 64 KiB piece was a releasable copy: ~30 µs of system calls, 100 KiB answers decoded at half the speed)", () => {
    expect(line(3, 1)).toEqual({ delivered: [], errors: 1 });
  });

  it("a line past 256 KiB is copied into one block of its own (given back the moment the line is done), its first reads too", () => {
    expect(line(4, 1)).toEqual({ delivered: [], errors: 1 }); // 256 KiB: views still
    expect(line(5, 0)).toEqual({ delivered: [[]], errors: 0 });
    expect(line(40, 0)).toEqual({ delivered: [[]], errors: 0 });
  });
});

describe.skipIf(process.platform !== "linux")("JsonLineDecoder: a long line's memory (reads /proc, Linux only)", () => {
  it("regression: a long line dropped gives its memory back at once, without waiting for a collection (it stayed until V8 next collected)", () => {
    const d = decoder(128 * MiB);
    // The same 16 KiB read over and over: nothing but the decoder's pieces grows.
    const read = Buffer.alloc(16 * KiB, 0x20);
    d.push("[");
    const before = rss();
    for (let i = 0; i < 4_096; i++) d.push(read);
    expect(d.bufferedBytes).toBe(64 * MiB + 1);
    const held = rss();
    expect(held - before, "64 MiB held").toBeGreaterThan(48 * MiB);
    d.clear();
    expect(held - rss(), "given back by clear()").toBeGreaterThan(48 * MiB);
  });

  it("regression: a long line delivered gives back its pieces and its joined copy once its value is handed over (both stayed until V8 next collected)", () => {
    let atDelivery = 0;
    let got: unknown;
    const d = new JsonLineDecoder({
      maxLineBytes: 128 * MiB,
      onValue: (v) => {
        got = v;
        atDelivery = rss();
      },
    });
    // 32 MiB of whitespace inside an array: the value is small; the line's bytes and its text are large.
    const read = Buffer.alloc(16 * KiB, 0x20);
    d.push("[1");
    const before = rss();
    for (let i = 0; i < 2_048; i++) d.push(read);
    const held = rss();
    expect(held - before, "32 MiB held").toBeGreaterThan(24 * MiB);
    d.push("]\n");
    const after = rss();
    expect(got).toEqual([1]);
    // While the value is handed over, the joined copy is alive; once it is, the copy is gone too. The line's
    // text (V8's, collected later) takes the place of its pieces: nothing of the 64 MiB of bytes is left.
    expect(atDelivery - after, "the joined copy given back").toBeGreaterThan(24 * MiB);
    expect(after - held, "left after delivery").toBeLessThan(16 * MiB);
  });
});

describe("releasableBytes", () => {
  it("gives zeroed bytes whose memory releaseBytes takes back (every view then reads as empty)", () => {
    const b = releasableBytes(100_000);
    expect(b.length).toBe(100_000);
    expect(b.every((x) => x === 0)).toBe(true);
    b.fill(7);
    const view = b.subarray(10, 20);
    releaseBytes(b);
    expect([b.length, view.length, b.buffer.byteLength]).toEqual([0, 0, 0]);
  });

  it("grows in place up to its maxBytes, keeping its bytes (maxBytesOf tells how far)", () => {
    const b = releasableBytes(4, 64);
    b.set([1, 2, 3, 4]);
    expect(maxBytesOf(b)).toBe(64);
    const grown = growBytes(b, 10);
    expect([...grown]).toEqual([1, 2, 3, 4, 0, 0, 0, 0, 0, 0]);
    expect(() => growBytes(grown, 65)).toThrow(RangeError);
    expect(maxBytesOf(new Uint8Array(7))).toBe(7);
  });

  it("leaves any other array alone", () => {
    const plain = new Uint8Array(10);
    releaseBytes(plain);
    releaseBytes(Buffer.from("abc"));
    expect(plain.length).toBe(10);
  });
});
