import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MessageTooLargeError, ParseError } from "../src/errors.js";
import { SseReader, parseSSE, parseSseText, sseJson, type SseEvent, type SseReaderOptions } from "../src/sse.js";

const enc = new TextEncoder();

interface Read {
  events: SseEvent[];
  retries: number[];
  comments: string[];
  errors: MessageTooLargeError[];
  reader: SseReader;
}

/** Feeds the chunks in order; calls end() unless told not to. */
function read(chunks: Array<string | Uint8Array>, options: Partial<SseReaderOptions> & { noEnd?: boolean } = {}): Read {
  const out: Omit<Read, "reader"> = { events: [], retries: [], comments: [], errors: [] };
  const { noEnd, ...rest } = options;
  const reader = new SseReader({
    ...rest,
    onEvent: (e) => out.events.push(e),
    onRetry: (ms) => out.retries.push(ms),
    onComment: (c) => out.comments.push(c),
    onError: (e) => out.errors.push(e),
  });
  for (const c of chunks) reader.push(c);
  if (!noEnd) reader.end();
  return { ...out, reader };
}

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

describe("SseReader: fields", () => {
  it("joins multi-line data with \\n and strips exactly one leading space", () => {
    const { events } = read(["data: a\ndata:b\ndata:  c\ndata\ndata:\n\n"]);
    expect(events).toEqual([{ data: "a\nb\n c\n\n" }]);
  });

  it("reads event names; an event without one has none", () => {
    const { events } = read(["event: endpoint\ndata: /messages?s=1\n\ndata: x\n\nevent:\ndata: y\n\n"]);
    expect(events).toEqual([{ event: "endpoint", data: "/messages?s=1" }, { data: "x" }, { data: "y" }]);
  });

  it("reads ids: lastEventId persists across events without an id", () => {
    const r = read(["id: 1\ndata: a\n\n", "data: b\n\n"], { noEnd: true });
    expect(r.events).toEqual([{ id: "1", data: "a" }, { data: "b" }]);
    expect(r.reader.lastEventId).toBe("1");
  });

  it("updates lastEventId from an id-only event (no data), which is not delivered (regression: eventsource-parser, used before, dropped such ids)", () => {
    const r = read(["id: 41\ndata: a\n\n", "id: 42\n\n"], { noEnd: true });
    expect(r.events).toEqual([{ id: "41", data: "a" }]);
    expect(r.reader.lastEventId).toBe("42");
  });

  it("delivers a priming event with an id and empty data", () => {
    const r = read(["id: p-1\ndata:\n\n"]);
    expect(r.events).toEqual([{ id: "p-1", data: "" }]);
    expect(r.reader.lastEventId).toBe("p-1");
  });

  it("ignores an id containing NUL, and an empty id resets lastEventId to an empty string", () => {
    const r = read(["id: 7\ndata: a\n\n", "id: 8\u0000\ndata: b\n\n"], { noEnd: true });
    expect(r.events).toEqual([{ id: "7", data: "a" }, { data: "b" }]);
    expect(r.reader.lastEventId).toBe("7");
    const reset = read(["id: 7\ndata: a\n\nid\ndata: b\n\n"], { noEnd: true });
    expect(reset.events[1]).toEqual({ id: "", data: "b" });
    expect(reset.reader.lastEventId).toBe("");
  });

  it("does not set lastEventId from an event cut off by the end of a stream that never completed it", () => {
    const r = read(["id: 1\ndata: a\n\nid: 2\ndata: partial"], { noEnd: true });
    expect(r.reader.lastEventId).toBe("1");
  });

  it("applies retry immediately: onRetry fires and later events carry the latest value", () => {
    const r = read(["data: a\n\nretry: 3000\n\ndata: b\n\nretry: 3s\nretry: -1\nretry:\n\nretry: 1500\ndata: c\n\n"]);
    expect(r.retries).toEqual([3000, 1500]);
    expect(r.events).toEqual([{ data: "a" }, { data: "b", retry: 3000 }, { data: "c", retry: 1500 }]);
    expect(r.reader.retryMs).toBe(1500);
  });

  it("ignores a retry too large to be a delay", () => {
    const r = read(["retry: 99999999999999999999\ndata: a\n\n"]);
    expect(r.retries).toEqual([]);
    expect(r.reader.retryMs).toBeUndefined();
  });

  it("reports comments and never makes events of them", () => {
    const r = read([": keepalive\n\n:\n:no-space\ndata: x\n\n"]);
    expect(r.comments).toEqual(["keepalive", "", "no-space"]);
    expect(r.events).toEqual([{ data: "x" }]);
  });

  it("ignores unknown fields", () => {
    expect(read(["foo: bar\nDATA: no\ndata : no\ndata: yes\n\n"]).events).toEqual([{ data: "yes" }]);
  });

  it("strips a byte order mark at the start of the stream only (regression: eventsource-parser, used before, kept a decoded U+FEFF)", () => {
    expect(read(["\uFEFFdata: a\n\n"]).events).toEqual([{ data: "a" }]);
    const bom = enc.encode("\uFEFFdata: a\n\n");
    expect(read([bom.subarray(0, 1), bom.subarray(1, 2), bom.subarray(2)]).events).toEqual([{ data: "a" }]);
    // Not at the start: "\uFEFFdata" is an unknown field.
    expect(read(["data: a\n\n\uFEFFdata: b\n\n"]).events).toEqual([{ data: "a" }]);
  });

  it("treats a first line that is only a byte order mark as a blank line, and still reads the next event's id", () => {
    const r = read(["\uFEFF\nid: 5\n\ndata: a\n\n"], { noEnd: true });
    expect(r.events).toEqual([{ data: "a" }]);
    expect(r.reader.lastEventId).toBe("5");
    const bytes = enc.encode("\uFEFF\r\nid: 5\r\n\r\ndata: a\r\n\r\n");
    for (let i = 0; i <= bytes.length; i++) {
      const s = read(splitAt(bytes, [i]), { noEnd: true });
      expect(s.events, `split at ${i}`).toEqual([{ data: "a" }]);
      expect(s.reader.lastEventId, `split at ${i}`).toBe("5");
    }
  });

  it("flushes a final event without a blank line on end()", () => {
    expect(read(["data: a\n\ndata: b"]).events).toEqual([{ data: "a" }, { data: "b" }]);
    expect(read(["data: a\n\ndata: b\r"]).events).toEqual([{ data: "a" }, { data: "b" }]);
    expect(read(["data: a\n\ndata: b"], { noEnd: true }).events).toEqual([{ data: "a" }]);
  });
});

describe("SseReader: line endings and chunking", () => {
  const body = (eol: string) =>
    [
      ": hi",
      "retry: 250",
      "id: 1",
      "event: message",
      'data: {"a":"é中😀"}',
      "data: second",
      "",
      "data: 2",
      "",
      "id: 3",
      "",
      "data: 😀",
      "",
      "",
    ].join(eol);
  const expected: SseEvent[] = [
    { id: "1", event: "message", data: '{"a":"é中😀"}\nsecond', retry: 250 },
    { data: "2", retry: 250 },
    { data: "😀", retry: 250 },
  ];

  it.each([
    ["LF", "\n"],
    ["CRLF", "\r\n"],
    ["CR", "\r"],
  ])("reads %s line endings", (_name, eol) => {
    const r = read([body(eol)], { noEnd: true });
    expect(r.events).toEqual(expected);
    expect(r.reader.lastEventId).toBe("3");
    expect(r.comments).toEqual(["hi"]);
  });

  it.each([
    ["LF", "\n"],
    ["CRLF", "\r\n"],
    ["CR", "\r"],
  ])("gives the same events for a split at every byte offset (%s)", (_name, eol) => {
    const bytes = enc.encode(body(eol));
    for (let i = 0; i <= bytes.length; i++) {
      const r = read(splitAt(bytes, [i]), { noEnd: true });
      expect(r.events, `split at ${i}`).toEqual(expected);
      expect(r.reader.lastEventId, `split at ${i}`).toBe("3");
    }
  });

  it("regression: a chunk that is only the LF of a CRLF begun in the chunk before ends that line alone (the LF that came next was taken for it too, and two events became one)", () => {
    expect(read(["data: a\r", "\n", "\ndata: b\n\n"]).events).toEqual([{ data: "a" }, { data: "b" }]);
    expect(read(["data: a\r", "\n", "\n", "data: b\r\n\r\n"]).events).toEqual([{ data: "a" }, { data: "b" }]);
  });

  it("gives the same events with 1-byte chunks, including a CRLF split between chunks", () => {
    const bytes = enc.encode(body("\r\n"));
    const r = read(
      splitAt(
        bytes,
        Array.from({ length: bytes.length }, (_, i) => i),
      ),
      { noEnd: true },
    );
    expect(r.events).toEqual(expected);
  });

  it("delivers an event ended by a CR at the very end of a chunk without waiting for more input (regression: eventsource-parser, used before, held a final CR back)", () => {
    expect(read(["data: a\r\r"], { noEnd: true }).events).toEqual([{ data: "a" }]);
    expect(read(["data: a\r", "\r"], { noEnd: true }).events).toEqual([{ data: "a" }]);
    expect(read(["id: 3\r\r"], { noEnd: true }).reader.lastEventId).toBe("3");
  });

  it("treats CR then LF in the next chunk as one line ending, not a blank line", () => {
    const r = read(["data: a\r", "\ndata: b\r", "\n\r", "\n"], { noEnd: true });
    expect(r.events).toEqual([{ data: "a\nb" }]);
  });

  it("any event list, any line ending, any chunking: the same events", () => {
    // Text without CR/LF (they would end the line); may contain ':' and multi-byte characters.
    const text = fc.string({ unit: fc.constantFrom("a", "b", ":", " ", "é", "中", "😀", "{", "}", '"'), maxLength: 12 });
    const eventArb = fc.record(
      {
        id: fc.option(fc.string({ unit: fc.constantFrom("1", "x", "é"), maxLength: 4 }), { nil: undefined }),
        event: fc.option(fc.constantFrom("message", "ping"), { nil: undefined }),
        comment: fc.option(text, { nil: undefined }),
        // No data lines: an event that is not delivered but whose id still counts.
        lines: fc.array(text, { minLength: 0, maxLength: 3 }),
      },
      { requiredKeys: ["lines"] },
    );
    fc.assert(
      fc.property(
        fc.array(eventArb, { maxLength: 5 }),
        fc.constantFrom("\n", "\r\n", "\r"),
        fc.array(fc.nat(), { maxLength: 10 }),
        (list, eol, rawCuts) => {
          let s = "";
          for (const e of list) {
            if (e.id !== undefined) s += `id: ${e.id}${eol}`;
            if (e.event !== undefined) s += `event: ${e.event}${eol}`;
            if (e.comment !== undefined) s += `:${e.comment}${eol}`;
            for (const l of e.lines) s += `data: ${l}${eol}`;
            s += eol;
          }
          const bytes = enc.encode(s);
          const offsets = [...new Set(rawCuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
          const r = read(splitAt(bytes, offsets), { noEnd: true });
          expect(r.events).toEqual(
            list
              .filter((e) => e.lines.length > 0)
              .map((e) => ({
                ...(e.id !== undefined ? { id: e.id } : {}),
                ...(e.event !== undefined ? { event: e.event } : {}),
                data: e.lines.join("\n"),
              })),
          );
          // One space after the colon is removed (WHATWG), like after a field name.
          expect(r.comments).toEqual(list.flatMap((e) => (e.comment !== undefined ? [e.comment.replace(/^ /, "")] : [])));
          expect(r.reader.lastEventId).toBe(list.findLast((e) => e.id !== undefined)?.id);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("never throws on arbitrary bytes, whatever the chunking", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.array(fc.nat(), { maxLength: 8 }), (bytes, rawCuts) => {
        const offsets = [...new Set(rawCuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const whole = read([bytes], { maxEventBytes: 32 });
        const split = read(splitAt(bytes, offsets), { maxEventBytes: 32 });
        expect(split.events).toEqual(whole.events);
        expect(split.retries).toEqual(whole.retries);
        expect(split.comments).toEqual(whole.comments);
        expect(split.reader.lastEventId).toBe(whole.reader.lastEventId);
        // Which events are too large does not depend on chunking; the size in the message does (it is how
        // much had been read when the limit was passed, reported at once rather than after the event ends).
        expect(split.errors.map((e) => e.code)).toEqual(whole.errors.map((e) => e.code));
      }),
      { numRuns: 500 },
    );
  });
});

describe("SseReader: size limit", () => {
  it.each([
    ["LF", "\n"],
    ["CRLF", "\r\n"],
    ["CR", "\r"],
  ])("skips an oversized event up to its blank line, reports it once, and goes on (%s)", (_name, eol) => {
    const big = "x".repeat(300);
    const stream = enc.encode(["data: small", "", "id: 9", `data: ${big}`, "data: more", "", "data: after", "", ""].join(eol));
    for (const size of [1, 2, 7, 64, stream.length]) {
      const chunks = splitAt(
        stream,
        Array.from({ length: Math.ceil(stream.length / size) - 1 }, (_, i) => (i + 1) * size),
      );
      const r = read(chunks, { maxEventBytes: 100 });
      expect(r.events, `chunk size ${size}`).toEqual([{ data: "small" }, { data: "after" }]);
      expect(r.errors, `chunk size ${size}`).toHaveLength(1);
      expect(r.errors[0]).toBeInstanceOf(MessageTooLargeError);
      expect(r.errors[0]?.code).toBe("MCPD_MESSAGE_TOO_LARGE");
      expect(r.errors[0]?.message).toMatch(/^SSE event of \d+ bytes exceeds the limit of 100 bytes$/);
    }
  });

  it("reports an oversized event as soon as it passes the limit, before the event ends", () => {
    const r = read(["id: 1\ndata: a\n\n", `id: 2\ndata: ${"z".repeat(60)}`, "z".repeat(60)], { maxEventBytes: 100, noEnd: true });
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]?.message).toBe("SSE event of 131 bytes exceeds the limit of 100 bytes");
    expect(r.errors[0]?.limitBytes).toBe(100);
    // The rest of the event is skipped without a second report; its id is dropped with it.
    r.reader.push(`${"z".repeat(10_000)}\ndata: more\n`);
    r.reader.push("\ndata: next\n\n");
    expect(r.errors).toHaveLength(1);
    expect(r.events).toEqual([{ id: "1", data: "a" }, { data: "next" }]);
    expect(r.reader.lastEventId).toBe("1");
  });

  it("keeps the comments and retry read before an event grew too large, whatever the chunking", () => {
    const stream = enc.encode(`: before\nretry: 700\ndata: ${"q".repeat(200)}\n: inside\n\ndata: ok\n\n`);
    for (let i = 0; i <= stream.length; i++) {
      const r = read(splitAt(stream, [i]), { maxEventBytes: 100 });
      expect(r.comments, `split at ${i}`).toEqual(["before"]);
      expect(r.retries, `split at ${i}`).toEqual([700]);
      expect(r.events, `split at ${i}`).toEqual([{ data: "ok", retry: 700 }]);
      expect(r.errors, `split at ${i}`).toHaveLength(1);
    }
  });

  it("does not let a partial character of a skipped event corrupt the next event", () => {
    const e = enc.encode("é");
    const head = Uint8Array.of(...enc.encode("data: "), e[0]!);
    const rest = Uint8Array.of(e[1]!, ...enc.encode(`${"x".repeat(30)}\n\ndata: after\n\n`));
    const r = read([head, rest], { maxEventBytes: 16, noEnd: true });
    expect(r.errors).toHaveLength(1);
    expect(r.events).toEqual([{ data: "after" }]);
  });

  it("counts every line of an event, comments included (the parser buffers an unfinished line of any kind)", () => {
    const r = read([`: ${"c".repeat(150)}\ndata: x\n\ndata: y\n\n`], { maxEventBytes: 100 });
    expect(r.comments).toEqual([]);
    expect(r.events).toEqual([{ data: "y" }]);
    expect(r.errors).toHaveLength(1);
  });

  it("counts data across lines of one event", () => {
    const line = `data: ${"y".repeat(40)}\n`;
    const r = read([line.repeat(5) + "\ndata: ok\n\n"], { maxEventBytes: 150 });
    expect(r.events).toEqual([{ data: "ok" }]);
    expect(r.errors).toHaveLength(1);
  });

  it("accepts an event right at the limit", () => {
    const r = read([`data: ${"z".repeat(94)}\n\n`], { maxEventBytes: 100 });
    expect(r.errors).toEqual([]);
    expect(r.events).toEqual([{ data: "z".repeat(94) }]);
  });

  it("reports an oversized event cut off by end()", () => {
    const r = read([`data: ${"z".repeat(200)}`], { maxEventBytes: 100 });
    expect(r.events).toEqual([]);
    expect(r.errors).toHaveLength(1);
  });

  it("refuses a limit that is not a positive integer", () => {
    expect(() => new SseReader({ onEvent: () => {}, maxEventBytes: 0 })).toThrow(/maxEventBytes must be a positive integer/);
  });
});

describe("sseJson", () => {
  it("parses an event's data", () => {
    expect(sseJson({ data: '{"jsonrpc":"2.0","id":1,"result":{}}' })).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
  });

  it("throws ParseError naming the event on bad data", () => {
    expect(() => sseJson({ id: "e7", data: "{nope" })).toThrow(ParseError);
    expect(() => sseJson({ id: "e7", data: "{nope" })).toThrow(/^Invalid JSON in SSE event e7: /);
    expect(() => sseJson({ data: "" })).toThrow(expect.objectContaining({ code: "MCPD_PARSE_ERROR", cause: expect.any(SyntaxError) }));
  });
});

describe("parseSseText", () => {
  it("reads every event of a complete body", () => {
    expect(parseSseText("event: message\ndata: 1\n\ndata: 2\r\n\r\n: c\n\ndata: 3")).toEqual([
      { event: "message", data: "1" },
      { data: "2" },
      { data: "3" },
    ]);
    expect(parseSseText("")).toEqual([]);
  });
});

describe("parseSSE (the one-shot reader of a whole reply body)", () => {
  const envelope = { jsonrpc: "2.0", id: 1, result: { tools: [] } };

  it("returns the first data event, skipping a priming event with empty data", () => {
    const body = `id: p\ndata:\n\nevent: message\ndata: ${JSON.stringify(envelope)}\n\ndata: {"other":true}\n\n`;
    expect(parseSSE(body)).toEqual(envelope);
  });

  it("falls back to plain JSON, single-line or pretty-printed", () => {
    expect(parseSSE(JSON.stringify(envelope))).toEqual(envelope);
    expect(parseSSE(JSON.stringify(envelope, null, 2))).toEqual(envelope);
  });

  it("throws ParseError when the first data event is not JSON", () => {
    expect(() => parseSSE("data: not json\n\n")).toThrow(ParseError);
  });

  it("throws ParseError when the body is neither SSE nor JSON", () => {
    expect(() => parseSSE("<html>502 Bad Gateway</html>")).toThrow(/^Response is neither SSE nor JSON: <html>502 Bad Gateway<\/html>$/);
    expect(() => parseSSE("")).toThrow(ParseError);
  });
});
