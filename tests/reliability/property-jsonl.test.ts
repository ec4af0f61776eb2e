/**
 * Property: the JSONL decoder never loses a valid line, whatever surrounds it and however the bytes are
 * chunked. protocol/test/jsonl.test.ts covers streams of only valid values and chunking invariance of
 * arbitrary bytes; this adds the mix: valid lines between garbage lines (bad UTF-8, control bytes,
 * truncated JSON, oversized lines, CRLF, blank lines), checked against a line-by-line reference model.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { JsonLineDecoder, encodeLine } from "@mcpd/protocol";

const enc = new TextEncoder();
const lenient = new TextDecoder("utf-8", { fatal: false });

type Segment = { kind: "valid"; value: unknown; crlf: boolean } | { kind: "garbage"; bytes: Uint8Array } | { kind: "blank" };

/** Bytes with no 0x0A: anything else, biased towards JSON punctuation and broken UTF-8. */
const garbageByte = fc.oneof(
  fc.integer({ min: 0, max: 255 }).filter((b) => b !== 0x0a),
  fc.constantFrom(0x7b, 0x7d, 0x5b, 0x5d, 0x22, 0x3a, 0x2c, 0x0d, 0x5c, 0xc3, 0xa9, 0xe2, 0x82, 0xf0, 0x9f, 0xff, 0xfe, 0x00),
);

const segment: fc.Arbitrary<Segment> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("valid" as const), value: fc.jsonValue({ maxDepth: 4 }), crlf: fc.boolean() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("garbage" as const),
      bytes: fc.array(garbageByte, { maxLength: 120 }).map((a) => Uint8Array.from(a)),
    }),
  },
  // A truncated valid line: the classic partial write of a dying peer.
  {
    weight: 1,
    arbitrary: fc.tuple(fc.jsonValue({ maxDepth: 3 }), fc.nat()).map(([v, n]) => {
      const b = enc.encode(JSON.stringify(v));
      return { kind: "garbage" as const, bytes: b.subarray(0, b.length > 1 ? n % (b.length - 1) : 0) };
    }),
  },
  // An oversized line (a few KB, always past the limits below) that must not take its neighbours with it.
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 1000, max: 6000 })
      .map((n) => ({ kind: "garbage" as const, bytes: enc.encode(`{"pad":"${"x".repeat(n)}"}`) })),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "blank" as const }) },
);

function bytesOf(s: Segment): Uint8Array {
  if (s.kind === "valid") return enc.encode(JSON.stringify(s.value) + (s.crlf ? "\r" : ""));
  if (s.kind === "garbage") return s.bytes;
  return new Uint8Array(0);
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/** What a line-by-line reader must report for one line: a value, an error code, or nothing (blank). */
function reference(line: Uint8Array, limit: number): { value: unknown } | { error: string } | undefined {
  const body = line.length > 0 && line[line.length - 1] === 0x0d ? line.subarray(0, line.length - 1) : line;
  if (body.length === 0) return undefined;
  if (body.length > limit) return { error: "MCPD_MESSAGE_TOO_LARGE" };
  try {
    return { value: JSON.parse(lenient.decode(body)) };
  } catch {
    return { error: "MCPD_PARSE_ERROR" };
  }
}

describe("JsonLineDecoder property: valid lines among garbage", () => {
  it("delivers every valid line within the limit, in order, whatever garbage surrounds it and however it is chunked; never throws", () => {
    fc.assert(
      fc.property(
        fc.array(segment, { minLength: 1, maxLength: 25 }),
        fc.integer({ min: 64, max: 900 }),
        fc.boolean(),
        fc.array(fc.integer({ min: 1, max: 97 }), { minLength: 1, maxLength: 20 }),
        (segments, limit, trailingNewline, sizes) => {
          const lines = segments.map(bytesOf);
          const parts: Uint8Array[] = [];
          for (const [i, l] of lines.entries()) parts.push(l, ...(i < lines.length - 1 || trailingNewline ? [enc.encode("\n")] : []));
          const stream = concat(parts);

          const expected = lines.map((l) => reference(l, limit)).filter((r) => r !== undefined);
          const values: unknown[] = [];
          const errors: string[] = [];
          const decoder = new JsonLineDecoder({ maxLineBytes: limit, onValue: (v) => values.push(v), onError: (e) => errors.push(e.code) });
          // Chunk sizes cycle through the generated list: splits land inside characters, CRLFs and long lines.
          let off = 0;
          for (let i = 0; off < stream.length; i++) {
            const n = sizes[i % sizes.length] as number;
            decoder.push(stream.subarray(off, off + n)); // a throw fails the property
            if (decoder.bufferedBytes > limit) throw new Error(`buffered ${decoder.bufferedBytes} bytes > limit ${limit}`);
            off += n;
          }
          decoder.end();
          expect(decoder.bufferedBytes).toBe(0);

          expect(values).toEqual(expected.flatMap((r) => ("value" in r ? [r.value] : [])));
          expect(errors).toEqual(expected.flatMap((r) => ("error" in r ? [r.error] : [])));
          // The point of it all, stated directly: every generated valid line that fits was delivered, in order.
          const valid = segments.flatMap((s, i) =>
            s.kind === "valid" && (lines[i] as Uint8Array).length - (s.crlf ? 1 : 0) <= limit ? [JSON.parse(JSON.stringify(s.value))] : [],
          );
          let at = 0;
          for (const v of values) if (at < valid.length && JSON.stringify(v) === JSON.stringify(valid[at])) at++;
          expect(at, "valid lines delivered in order").toBe(valid.length);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("a line that follows an oversized line, in the same chunk or split anywhere, is delivered", () => {
    const good = encodeLine({ jsonrpc: "2.0", id: 1, method: "ping" });
    const stream = enc.encode(`{"pad":"${"y".repeat(5000)}"}\n${good}`);
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: stream.length - 1 }), { maxLength: 6 }), (cuts) => {
        const values: unknown[] = [];
        const errors: string[] = [];
        const d = new JsonLineDecoder({ maxLineBytes: 1024, onValue: (v) => values.push(v), onError: (e) => errors.push(e.code) });
        let prev = 0;
        for (const c of [...cuts.sort((a, b) => a - b), stream.length]) {
          d.push(stream.subarray(prev, c));
          prev = c;
        }
        d.end();
        expect(errors).toEqual(["MCPD_MESSAGE_TOO_LARGE"]);
        expect(values).toEqual([{ jsonrpc: "2.0", id: 1, method: "ping" }]);
      }),
      { numRuns: 300 },
    );
  });
});
