import v8 from "node:v8";
import vm from "node:vm";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MessageTooLargeError, ParseError } from "../src/errors.js";
import { encodeLine } from "../src/jsonl-encode.js";
import { JsonLineDecoder, type LineError } from "../src/jsonl.js";

const enc = new TextEncoder();

interface Run {
  values: unknown[];
  errors: LineError[];
  /** The largest bufferedBytes seen after any push. */
  maxBuffered: number;
  linesEnded: number;
}

/** Feeds the chunks in order, then end(). */
function decode(chunks: Array<Uint8Array | string>, maxLineBytes?: number, keepResults = false): Run {
  const run: Run = { values: [], errors: [], maxBuffered: 0, linesEnded: 0 };
  const decoder = new JsonLineDecoder({
    ...(maxLineBytes === undefined ? {} : { maxLineBytes }),
    keepResults,
    onValue: (v) => run.values.push(v),
    onError: (e) => run.errors.push(e),
  });
  for (const chunk of chunks) {
    decoder.push(chunk);
    run.maxBuffered = Math.max(run.maxBuffered, decoder.bufferedBytes);
  }
  decoder.end();
  expect(decoder.bufferedBytes).toBe(0);
  run.linesEnded = decoder.linesEnded;
  return run;
}

/** Splits bytes at the given sorted offsets. */
function splitAt(bytes: Uint8Array, offsets: number[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let prev = 0;
  for (const off of offsets) {
    out.push(bytes.subarray(prev, off));
    prev = off;
  }
  out.push(bytes.subarray(prev));
  return out;
}

/** Every size 1..n chunking. */
function chunksOf(bytes: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

// 2-byte (é, ß), 3-byte (€, 中, U+2028), 4-byte (😀, 𝄞) UTF-8 characters, a CRLF line and blank lines.
const MESSAGES = [
  { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { text: "héllo ß" } } },
  { jsonrpc: "2.0", method: "notifications/message", params: { data: "€ 中文 \u2028 line-sep" } },
  { jsonrpc: "2.0", id: "x😀", result: { content: [{ type: "text", text: "😀𝄞 emoji\nnewline" }] } },
  { jsonrpc: "2.0", id: 4, error: { code: -32601, message: "Method not found: ∑" } },
];
const MULTI = enc.encode(
  encodeLine(MESSAGES[0]) +
    "\n" +
    encodeLine(MESSAGES[1]).replace("\n", "\r\n") +
    "\r\n\n" +
    encodeLine(MESSAGES[2]) +
    encodeLine(MESSAGES[3]),
);

describe("JsonLineDecoder: chunk boundaries", () => {
  it("the test buffer really contains 2-, 3- and 4-byte characters", () => {
    const text = new TextDecoder().decode(MULTI);
    expect(text).toMatch(/é/);
    expect(text).toMatch(/€/);
    expect(text).toMatch(/😀/);
    expect(MULTI.length).toBeGreaterThan(text.length);
  });

  it("delivers the same messages however the buffer is split in two (every byte offset)", () => {
    for (let i = 0; i <= MULTI.length; i++) {
      const run = decode(splitAt(MULTI, [i]));
      expect(run.errors, `split at ${i}`).toEqual([]);
      expect(run.values, `split at ${i}`).toEqual(MESSAGES);
    }
  });

  it("delivers the same messages for every chunk size from 1 byte up", () => {
    for (let size = 1; size <= 40; size++) {
      const run = decode(chunksOf(MULTI, size));
      expect(run.errors, `size ${size}`).toEqual([]);
      expect(run.values, `size ${size}`).toEqual(MESSAGES);
    }
  });

  it("delivers the same messages for every split into three pieces of a short buffer", () => {
    const short = [{ a: "é😀" }, { b: "中" }, 1, "x"];
    const bytes = enc.encode(short.map(encodeLine).join("").replace("\n", "\r\n"));
    let splits = 0;
    for (let i = 0; i <= bytes.length; i++) {
      for (let j = i; j <= bytes.length; j++) {
        const run = decode(splitAt(bytes, [i, j]));
        expect(run.errors, `split at ${i},${j}`).toEqual([]);
        expect(run.values, `split at ${i},${j}`).toEqual(short);
        splits++;
      }
    }
    expect(splits).toBeGreaterThan(300);
  });

  it("strips \\r before \\n, ignores blank lines, accepts string chunks", () => {
    const run = decode(['{"a":1}\r\n', "\n", "\r\n", "\n\n", '{"b":', "2}\r", "\n", "3\n"]);
    expect(run.errors).toEqual([]);
    expect(run.values).toEqual([{ a: 1 }, { b: 2 }, 3]);
  });

  it("delivers a final line without a newline on end()", () => {
    expect(decode(['{"a":1}\n{"b":', "2}"]).values).toEqual([{ a: 1 }, { b: 2 }]);
    expect(decode(['{"a":1}\r']).values).toEqual([{ a: 1 }]);
    expect(decode([]).values).toEqual([]);
  });
});

describe("JsonLineDecoder: bad lines", () => {
  it("reports a bad line between two good ones and delivers both good ones", () => {
    const run = decode(['{"id":1}\nnot json at all {\n{"id":2}\n']);
    expect(run.values).toEqual([{ id: 1 }, { id: 2 }]);
    expect(run.errors).toHaveLength(1);
    const [err] = run.errors;
    expect(err).toBeInstanceOf(ParseError);
    expect(err?.code).toBe("MCPD_PARSE_ERROR");
    expect(err?.message).toMatch(/^Invalid JSON line: /);
    expect(err?.preview).toBe("not json at all {");
  });

  it("skips a stray stdout banner split across chunks and goes on", () => {
    const run = decode(["Server starting on ", "stdio...\r\n", '{"jsonrpc":"2.0","id":1,"result":{}}\n']);
    expect(run.values).toEqual([{ jsonrpc: "2.0", id: 1, result: {} }]);
    expect(run.errors.map((e) => e.preview)).toEqual(["Server starting on stdio..."]);
  });

  it("bounds the preview of a long bad line to 200 bytes", () => {
    const run = decode(["x".repeat(5000) + "\n"]);
    expect(run.errors).toHaveLength(1);
    expect(run.errors[0]?.preview).toBe("x".repeat(200));
  });
});

describe("JsonLineDecoder: long lines (held in one block past 256 KiB)", () => {
  const LIMIT = 300 * 1024;
  const exact = `"${"a".repeat(LIMIT - 2)}"`;
  const over = `"${"b".repeat(LIMIT - 1)}"`;
  const long = `"${"c".repeat(280 * 1024)}"`;
  const stream = enc.encode(`${long}\n${exact}\r\n${over}\r\n1\n${exact}\n${long}`);

  it.each([1_000, 64 * 1024, 65_537, 100_003, 1024 * 1024])(
    "delivers lines of 280 KiB and of exactly the limit (LF, CRLF), reports the one over it, in %i-byte chunks",
    (size) => {
      const a = "a".repeat(LIMIT - 2);
      const c = "c".repeat(280 * 1024);
      // Views of one buffer (held as copies), and reads of their own (held as views until 256 KiB).
      for (const chunks of [chunksOf(stream, size), chunksOf(stream, size).map((b) => Buffer.from(b))]) {
        const run = decode(chunks, LIMIT);
        expect(run.values).toEqual([c, a, 1, a, c]);
        expect(run.errors.map((e) => e.message)).toEqual([`Line of ${LIMIT + 1} bytes exceeds the limit of ${LIMIT} bytes`]);
        expect(run.errors[0]?.preview.startsWith('"bbb')).toBe(true);
        expect(run.maxBuffered).toBeLessThanOrEqual(LIMIT);
      }
    },
  );

  it("takes a CR that arrives alone after a line of exactly the limit as the end of a CRLF", () => {
    const bytes = enc.encode(`${exact}\r\n2\n`);
    const run = decode(
      [bytes.subarray(0, LIMIT - 5), bytes.subarray(LIMIT - 5, LIMIT), bytes.subarray(LIMIT, LIMIT + 1), bytes.subarray(LIMIT + 1)],
      LIMIT,
    );
    expect(run.errors).toEqual([]);
    expect(run.values).toEqual(["a".repeat(LIMIT - 2), 2]);
  });
});

describe("JsonLineDecoder: size limit", () => {
  const LIMIT = 64;
  const big = JSON.stringify({ pad: "é".repeat(500) }); // 1000+ bytes
  const bigBytes = enc.encode(big).length;
  const stream = enc.encode(`{"before":1}\n${big}\n{"after":"中"}\n`);

  it.each([
    ["one chunk", [stream]],
    ["7-byte chunks", chunksOf(stream, 7)],
    ["1-byte chunks", chunksOf(stream, 1)],
    ["65-byte chunks", chunksOf(stream, LIMIT + 1)],
  ])("reports an oversized line once and delivers the lines around it (%s)", (_title, chunks) => {
    const run = decode(chunks, LIMIT);
    expect(run.values).toEqual([{ before: 1 }, { after: "中" }]);
    expect(run.errors).toHaveLength(1);
    const [err] = run.errors;
    expect(err).toBeInstanceOf(MessageTooLargeError);
    expect(err?.code).toBe("MCPD_MESSAGE_TOO_LARGE");
    expect(err?.message).toBe(`Line of ${bigBytes} bytes exceeds the limit of ${LIMIT} bytes`);
    expect((err as MessageTooLargeError).limitBytes).toBe(LIMIT);
    expect(err?.preview.length).toBeGreaterThan(0);
    expect(big.startsWith(err?.preview.replace(/\uFFFD$/, "") ?? "?")).toBe(true);
    // The oversized line is never held in memory while it streams past.
    expect(run.maxBuffered).toBeLessThanOrEqual(LIMIT);
  });

  it("accepts a line of exactly the limit, with LF or CRLF, in any chunking", () => {
    const exact = `"${"a".repeat(LIMIT - 2)}"`;
    for (const ending of ["\n", "\r\n"]) {
      const bytes = enc.encode(exact + ending + "1" + ending);
      for (let size = 1; size <= bytes.length; size++) {
        const run = decode(chunksOf(bytes, size), LIMIT);
        expect(run.errors, `size ${size}`).toEqual([]);
        expect(run.values, `size ${size}`).toEqual(["a".repeat(LIMIT - 2), 1]);
        expect(run.maxBuffered).toBeLessThanOrEqual(LIMIT);
      }
    }
  });

  it("rejects a line one byte over the limit, with LF or CRLF, in any chunking", () => {
    const over = `"${"a".repeat(LIMIT - 1)}"`;
    for (const ending of ["\n", "\r\n", "\r\r\n"]) {
      const bytes = enc.encode(over + ending + "2\n");
      for (let size = 1; size <= bytes.length; size++) {
        const run = decode(chunksOf(bytes, size), LIMIT);
        expect(run.values, `size ${size}`).toEqual([2]);
        expect(
          run.errors.map((e) => e.message),
          `size ${size} ${JSON.stringify(ending)}`,
        ).toEqual([`Line of ${ending === "\r\r\n" ? LIMIT + 2 : LIMIT + 1} bytes exceeds the limit of ${LIMIT} bytes`]);
        expect(run.maxBuffered).toBeLessThanOrEqual(LIMIT);
      }
    }
  });

  it("regression: a CR held at the limit is put back, so `\\r\\r\\n` split after the second CR reports the same as unsplit (found by the chunking property)", () => {
    const bytes = Uint8Array.from([0x0d, 0x0d, 0x0a]);
    const whole = decode([bytes], 1);
    const split = decode([bytes.subarray(0, 2), bytes.subarray(2)], 1);
    // The line is one `\r` (its second `\r` belongs to the CRLF): not JSON, reported once either way.
    expect(whole.errors.map((e) => e.code)).toEqual(["MCPD_PARSE_ERROR"]);
    expect(split.errors.map((e) => [e.code, e.message])).toEqual(whole.errors.map((e) => [e.code, e.message]));
    for (const limit of [1, 2, 3]) {
      const line = Uint8Array.from([0x31, 0x0d, 0x0a]);
      for (let cut = 0; cut <= line.length; cut++) {
        const r = decode([line.subarray(0, cut), line.subarray(cut)], limit);
        expect([limit, cut, r.values, r.errors.length]).toEqual([limit, cut, [1], 0]);
      }
    }
  });

  it("reports an oversized final line without a newline on end()", () => {
    const run = decode(chunksOf(enc.encode("1\n" + "9".repeat(200)), 10), LIMIT);
    expect(run.values).toEqual([1]);
    expect(run.errors.map((e) => e.message)).toEqual([`Line of 200 bytes exceeds the limit of ${LIMIT} bytes`]);
  });

  it("refuses a limit that is not a positive integer", () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new JsonLineDecoder({ maxLineBytes: bad, onValue: () => {} })).toThrow(/maxLineBytes must be a positive integer/);
    }
  });
});

describe("JsonLineDecoder: memory", () => {
  // A forced collection makes the heap reading deterministic: what is left is what the decoder holds.
  v8.setFlagsFromString("--expose-gc");
  const gc = vm.runInNewContext("gc") as () => void;
  const held = (): number => {
    // Twice: one collection can leave garbage on pages its concurrent sweep has not reached yet, counted
    // as used (seen as 1-2 MB of a 2 MB line "held" in one run in six).
    gc();
    gc();
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };

  it("holds a partial line sent in 1-byte chunks at about its own size (regression: each chunk was copied into an array of its own, ~350 bytes of memory per byte held)", () => {
    const N = 200_000;
    const line = enc.encode(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${"x".repeat(N)}"}}\n`);
    const chunks = chunksOf(line.subarray(0, N), 1);
    let values = 0;
    const decoder = new JsonLineDecoder({ maxLineBytes: 4 * N, onValue: () => values++ });
    const before = held();
    for (const c of chunks) decoder.push(c);
    const growth = held() - before;
    expect(decoder.bufferedBytes).toBe(N);
    // A growing buffer holds at most twice the line; 8x leaves room for the heap's own noise.
    expect(growth, `held ${growth} bytes for a ${N}-byte partial line`).toBeLessThan(8 * N);
    decoder.push(line.subarray(N));
    expect(values).toBe(1);
    expect(decoder.bufferedBytes).toBe(0);
  });

  it("inLine and linesEnded tell a line in progress (held or being skipped as oversized) from the gap between lines", () => {
    const decoder = new JsonLineDecoder({ maxLineBytes: 8, onValue: () => {}, onError: () => {} });
    expect([decoder.inLine, decoder.linesEnded]).toEqual([false, 0]);
    decoder.push("[1]\n[2");
    expect([decoder.inLine, decoder.linesEnded]).toEqual([true, 1]);
    decoder.push("]\n\n");
    expect([decoder.inLine, decoder.linesEnded]).toEqual([false, 3]);
    decoder.push("[3333333333");
    expect([decoder.inLine, decoder.bufferedBytes]).toEqual([true, 0]);
    decoder.push("3]\n");
    expect([decoder.inLine, decoder.linesEnded]).toEqual([false, 4]);
  });

  it("clear() drops the incomplete line; the next bytes start a new line", () => {
    const values: unknown[] = [];
    const decoder = new JsonLineDecoder({ onValue: (v) => values.push(v) });
    decoder.push('{"half":');
    expect(decoder.bufferedBytes).toBe(8);
    decoder.clear();
    expect(decoder.bufferedBytes).toBe(0);
    decoder.push("[1]\n");
    expect(values).toEqual([[1]]);
  });

  it("lets go of a large line's buffer once the line is delivered", () => {
    const N = 2_000_000;
    const line = enc.encode(`"${"y".repeat(N)}"\n`);
    let got = "";
    const decoder = new JsonLineDecoder({ maxLineBytes: 4 * N, onValue: (v) => (got = v as string) });
    const before = held();
    for (const c of chunksOf(line, 65_536)) decoder.push(c);
    expect(got.length).toBe(N);
    got = "";
    expect(held() - before).toBeLessThan(N / 2);
  });
});

describe("encodeLine", () => {
  it.each([
    ["\\n", "a\nb"],
    ["\\r\\n", "a\r\nb"],
    ["\\r", "a\rb"],
    ["U+2028/U+2029", "a\u2028b\u2029c"],
    ["U+0085 and other controls", "a\u0085b\u000bc\u000cd\u0000e"],
    ["emoji", "😀\n😀"],
  ])("produces exactly one line for a string with %s", (_title, text) => {
    const line = encodeLine({ jsonrpc: "2.0", method: "m", params: { text } });
    expect(line.endsWith("\n")).toBe(true);
    expect(line.indexOf("\n")).toBe(line.length - 1);
    expect(line).not.toContain("\r");
    expect(decode([line]).values).toEqual([{ jsonrpc: "2.0", method: "m", params: { text } }]);
  });

  it("refuses values with no JSON form", () => {
    expect(() => encodeLine(undefined)).toThrow(TypeError);
    expect(() => encodeLine(() => 1)).toThrow(/has no JSON form/);
    expect(() => encodeLine(10n)).toThrow(TypeError);
  });
});

describe("JsonLineDecoder: properties", () => {
  /** Sorted cut offsets into a buffer of length n. */
  const cuts = (n: number) => fc.uniqueArray(fc.integer({ min: 0, max: n }), { maxLength: 12 }).map((a) => a.sort((x, y) => x - y));

  it("any chunking of any sequence of encoded JSON values delivers all of them in order", () => {
    fc.assert(
      fc.property(
        fc.array(fc.jsonValue(), { maxLength: 8 }).chain((values) => {
          const bytes = enc.encode(values.map(encodeLine).join(""));
          return fc.tuple(fc.constant(values), fc.constant(bytes), cuts(bytes.length));
        }),
        ([values, bytes, offsets]) => {
          const run = decode(splitAt(bytes, offsets));
          expect(run.errors).toEqual([]);
          // Compare with what JSON itself round-trips (-0 becomes 0).
          expect(run.values).toEqual(values.map((v) => JSON.parse(JSON.stringify(v))));
        },
      ),
      { numRuns: 500 },
    );
  });

  it("any byte sequence, any chunking: never throws, stays bounded, and the result does not depend on the chunking", () => {
    const alphabet = fc.constantFrom(0x0a, 0x0d, 0x7b, 0x7d, 0x22, 0x31, 0x20, 0x61, 0xc3, 0xa9, 0xf0, 0x9f, 0x98, 0x80, 0xff);
    const bytesArb = fc.oneof(
      fc.uint8Array({ maxLength: 300 }),
      fc.array(alphabet, { maxLength: 300 }).map((a) => Uint8Array.from(a)),
    );
    fc.assert(
      fc.property(
        bytesArb.chain((bytes) => fc.tuple(fc.constant(bytes), cuts(bytes.length), fc.integer({ min: 1, max: 40 }))),
        ([bytes, offsets, limit]) => {
          const whole = decode([bytes], limit);
          const split = decode(splitAt(bytes, offsets), limit);
          expect(split.maxBuffered).toBeLessThanOrEqual(limit);
          expect(split.values).toEqual(whole.values);
          expect(split.errors.map((e) => [e.code, e.message])).toEqual(whole.errors.map((e) => [e.code, e.message]));
        },
      ),
      { numRuns: 1000 },
    );
  });

  /** The chunk's lines, each fed alone (`\n` included): the one-line path, the reference for a run of lines. */
  function lineByLine(bytes: Uint8Array): Uint8Array[] {
    const out: Uint8Array[] = [];
    let start = 0;
    for (let nl = bytes.indexOf(0x0a); nl !== -1; nl = bytes.indexOf(0x0a, start)) {
      out.push(bytes.subarray(start, nl + 1));
      start = nl + 1;
    }
    if (start < bytes.length) out.push(bytes.subarray(start));
    return out;
  }

  const report = (r: Run) => ({ values: r.values, errors: r.errors.map((e) => [e.code, e.message, e.preview]), ended: r.linesEnded });

  it("several lines in one chunk (decoded in one call) give exactly what each line fed alone gives: values, errors, previews", () => {
    // Lines of JSON, with a byte order mark or two in front, a CR or two behind, blank, or bad bytes.
    const BOM = [0xef, 0xbb, 0xbf];
    const line = fc.oneof(
      fc
        .tuple(fc.jsonValue(), fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 2 }))
        .map(([v, boms, crs]) => [...new Array(boms).fill(BOM).flat(), ...enc.encode(JSON.stringify(v)), ...new Array(crs).fill(0x0d)]),
      fc.array(fc.constantFrom(0x7b, 0x7d, 0x22, 0x31, 0x20, 0x0d, 0xc3, 0xa9, 0xff, 0xef, 0xbb, 0xbf), { maxLength: 40 }),
      fc.constant(BOM),
      fc.constant([]),
    );
    fc.assert(
      fc.property(
        fc.array(line, { minLength: 2, maxLength: 10 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 400 }),
        fc.boolean(),
        (lines, endsInLine, limit, keep) => {
          const text = lines.flatMap((l) => [...l, 0x0a]);
          if (endsInLine) text.pop();
          const bytes = Uint8Array.from(text);
          expect(report(decode([bytes], limit, keep))).toEqual(report(decode(lineByLine(bytes), limit, keep)));
          expect(report(decode([bytes], undefined, keep))).toEqual(report(decode(lineByLine(bytes), undefined, keep)));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("a run of lines keeps what one line gives: a leading byte order mark dropped, a second one kept (a parse error), a BOM-only line an error", () => {
    const bom = "\uFEFF";
    const chunk = `${bom}{"a":1}\n${bom}{"b":2}\r\n${bom}${bom}{"c":3}\n${bom}\n\n{"d":4}\n`;
    const together = decode([chunk]);
    expect(together.values).toEqual([{ a: 1 }, { b: 2 }, { d: 4 }]);
    expect(together.errors.map((e) => e.preview)).toEqual([`${bom}{"c":3}`, ""]);
    expect(report(together)).toEqual(report(decode(lineByLine(enc.encode(chunk)))));
  });

  it("a run of many bad lines reports each with its own preview, finding each line's bytes once (regression: each preview searched the run from its start, quadratic in the lines of a read)", () => {
    // Counts the byte searches the decoder makes (subarray() of it is one of it too).
    let searches = 0;
    class CountingBytes extends Uint8Array {
      override indexOf(value: number, from?: number): number {
        searches++;
        return super.indexOf(value, from);
      }
    }
    const n = 3_000;
    const text = Array.from({ length: n }, (_, i) => `bad ${i}\n`).join("");
    const r = decode([CountingBytes.from(enc.encode(text))]);
    expect(r.values).toEqual([]);
    expect(r.errors.map((e) => e.preview)).toEqual(Array.from({ length: n }, (_, i) => `bad ${i}`));
    // Linear: a few searches a line (quadratic was ~n * n / 2, 4.5 million here).
    expect(searches).toBeGreaterThan(n);
    expect(searches).toBeLessThan(4 * n);
  });

  it("a callback that pushes into the decoder in the middle of a run gets what it would line by line (regression: the run went on as if nothing was held)", () => {
    const chunk = '{"a":1}\n2}\n{"c":3}\n';
    const feed = (chunks: string[]): unknown[] => {
      const values: unknown[] = [];
      const errors: string[] = [];
      const decoder: JsonLineDecoder = new JsonLineDecoder({
        onValue: (v) => {
          values.push(v);
          if ((v as { a?: number }).a === 1) decoder.push('{"x":');
        },
        onError: (e) => errors.push(e.message),
      });
      for (const c of chunks) decoder.push(c);
      decoder.end();
      expect(errors).toEqual([]);
      return values;
    };
    expect(feed([chunk])).toEqual([{ a: 1 }, { x: 2 }, { c: 3 }]);
    expect(feed(['{"a":1}\n', "2}\n", '{"c":3}\n'])).toEqual([{ a: 1 }, { x: 2 }, { c: 3 }]);
  });

  it("a long line in a run keeps its result's text for the relay, as alone", async () => {
    const { keptResultText } = await import("../src/raw-results.js");
    const long = { jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "y".repeat(2000) }] } };
    const results: object[] = [];
    const decoder = new JsonLineDecoder({ keepResults: true, onValue: (v) => results.push((v as { result: object }).result) });
    decoder.push(`{"jsonrpc":"2.0","id":1,"result":{}}\n${JSON.stringify(long)}\n{"jsonrpc":"2.0","id":3,"result":{}}\n`);
    expect(results.length).toBe(3);
    expect(keptResultText(results[1] as object)).toBe(JSON.stringify(long.result));
  });
});
