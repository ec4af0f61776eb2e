/**
 * Relaying an answer as its sender wrote it: `memberText` finds a member's value in a JSON object's text,
 * a decoder with `keepResults` keeps each answer's result text, and `encodeRelayedLine` writes it back
 * with the other members encoded afresh (for lines of at least PROTOCOL_DEFAULTS.keepResultMinChars). The property: whatever the text looked like, the relayed line
 * parses to exactly what encoding the parsed message again would give, and is one line.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  JsonLineDecoder,
  PROTOCOL_DEFAULTS,
  deliverKept,
  encodeLine,
  encodeRelayed,
  encodeRelayedLine,
  keepMadeText,
  keepResultText,
  keptResultText,
  resultTextOf,
  withMembersFirst,
} from "../src/index.js";
import { memberText } from "../src/json-members.js";

/** A member that makes a line long enough for its result to be kept. */
const PAD = `"pad":"${"p".repeat(PROTOCOL_DEFAULTS.keepResultMinChars)}"`;

/** Decodes one line with a keepResults decoder; returns the value. */
function decodeKept(line: string): Record<string, unknown> {
  let value: unknown;
  const d = new JsonLineDecoder({ keepResults: true, onValue: (v) => (value = v) });
  d.push(Buffer.from(`${line}\n`));
  return value as Record<string, unknown>;
}

describe("memberText", () => {
  it("finds a member's value as written, skipping strings with brackets, quotes and escapes", () => {
    const text = ' { "a" : "x}\\"]{" , "result" : { "s": "\\\\", "n": [1.0, {"b": "\\""}] } , "z": null } ';
    expect(memberText(text, "result")).toBe('{ "s": "\\\\", "n": [1.0, {"b": "\\""}] }');
    expect(memberText(text, "a")).toBe('"x}\\"]{"');
    expect(memberText(text, "z")).toBe("null");
    expect(memberText(text, "missing")).toBeUndefined();
  });

  it("takes the last of duplicate members, as JSON.parse does", () => {
    expect(memberText('{"result":{"a":1},"id":1,"result":{"a":2}}', "result")).toBe('{"a":2}');
  });

  it("gives up on a member name written with an escape (it may spell the name)", () => {
    expect(memberText('{"res\\u0075lt":{"a":1}}', "result")).toBeUndefined();
  });

  it("answers undefined for what is not an object", () => {
    expect(memberText("[1,2]", "result")).toBeUndefined();
    expect(memberText('"result"', "result")).toBeUndefined();
    expect(memberText("{}", "result")).toBeUndefined();
  });

  it("property: for any object written compactly or spaced, with strings full of quotes, backslashes and brackets, each member's text means that member's value", () => {
    const tricky = fc.string({
      unit: fc.constantFrom('"', "\\", "a", "{", "}", "[", "]", ",", ":", " ", "é", "\u2028", "\u0000"),
      maxLength: 12,
    });
    const value = fc.letrec((tie) => ({
      v: fc.oneof(
        { depthSize: "small" },
        tricky,
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie("v"), { maxLength: 4 }),
        fc.dictionary(tricky, tie("v"), { maxKeys: 4 }),
      ),
    })).v;
    // Top-level names with no character JSON escapes (a name with one makes it give up; tested above).
    const name = fc.string({ unit: fc.constantFrom("a", "b", "é", "{", "}", "[", ",", ":", " ", "\u2028"), maxLength: 8 });
    let checked = 0;
    fc.assert(
      fc.property(fc.dictionary(name, value, { minKeys: 1, maxKeys: 6 }), fc.boolean(), (object, spaced) => {
        const text = spaced ? JSON.stringify(object, null, 1).replace(/\n/g, " ") : JSON.stringify(object);
        const parsed = JSON.parse(text) as Record<string, unknown>;
        for (const key of Object.keys(parsed)) {
          const member = memberText(text, key);
          expect(member, key).toBeDefined();
          expect(JSON.parse(member as string)).toEqual(parsed[key]);
          checked++;
        }
      }),
      { numRuns: 500 },
    );
    expect(checked).toBeGreaterThan(500);
  });

  it("numbers, true, false and null end at their delimiter", () => {
    expect(memberText('{"a":-1.5e+3,"b":true,"c":false}', "a")).toBe("-1.5e+3");
    expect(memberText('{"a":-1.5e+3 ,"b":true}', "b")).toBe("true");
  });
});

describe("encodeRelayedLine", () => {
  it("writes a kept result as its sender wrote it, with the message's own id (regression: every answer was encoded again)", () => {
    const result = `{"text":"caf\\u00e9","n":1.0,"big":12345678901234567890,${PAD}}`;
    const server = decodeKept(`{"result":${result},"jsonrpc":"2.0","id":41}`);
    const line = encodeRelayedLine({ jsonrpc: "2.0", id: "client-7", result: server.result });
    expect(line).toBe(`{"jsonrpc":"2.0","id":"client-7","result":${result}}\n`);
    // Another shape of message gets the same text, its members in their order.
    expect(encodeRelayedLine({ id: 3, result: server.result, jsonrpc: "2.0", x: [1] })).toBe(
      `{"id":3,"result":${result},"jsonrpc":"2.0","x":[1]}\n`,
    );
    // Encoded again, the same answer reads differently: é, 1 and a rounded number.
    expect(encodeLine({ jsonrpc: "2.0", id: "client-7", result: server.result })).toContain('"text":"café","n":1,');
  });

  it("encodes a result again when no text was kept for it: a decoder without keepResults, a new object, a short line", () => {
    let plain: Record<string, unknown> = {};
    new JsonLineDecoder({ onValue: (v) => (plain = v as Record<string, unknown>) }).push(
      Buffer.from(`{"id":1,"result":{"n":1.0,${PAD}}}\n`),
    );
    expect(encodeRelayedLine({ jsonrpc: "2.0", id: 2, result: plain.result })).toBe(`{"jsonrpc":"2.0","id":2,"result":{"n":1,${PAD}}}\n`);
    const kept = decodeKept(`{"id":1,"result":{"n":1.0,${PAD}}}`);
    expect(keptResultText(kept.result as object)).toBe(`{"n":1.0,${PAD}}`);
    expect(encodeRelayedLine({ jsonrpc: "2.0", id: 2, result: { ...(kept.result as object) } })).toBe(
      `{"jsonrpc":"2.0","id":2,"result":{"n":1,${PAD}}}\n`,
    );
    // Below the threshold encoding again is as cheap as finding the text: nothing is kept.
    const short = decodeKept('{"id":1,"result":{"n":1.0}}');
    expect(keptResultText(short.result as object)).toBeUndefined();
    expect(encodeRelayedLine({ jsonrpc: "2.0", id: 2, result: short.result })).toBe('{"jsonrpc":"2.0","id":2,"result":{"n":1}}\n');
  });

  it("encodes a result again when its line held a raw CR, which some JSONL readers take for a line break", () => {
    const server = decodeKept(`{"id":1,"result":{"a":\r1,${PAD}}}`);
    expect(keptResultText(server.result as object)).toBeUndefined();
    expect(encodeRelayedLine({ jsonrpc: "2.0", id: 2, result: server.result })).toBe(`{"jsonrpc":"2.0","id":2,"result":{"a":1,${PAD}}}\n`);
  });

  it("encodes a result again when its text held a raw newline (regression: a pretty-printed HTTP body or WebSocket frame would have split the client's line)", () => {
    const body = `{\n  "jsonrpc": "2.0",\n  "id": 1,\n  "result": {\n    "n": 1.0,\n    ${PAD}\n  }\n}`;
    const message = JSON.parse(body) as Record<string, unknown>;
    keepResultText(message, body);
    expect(keptResultText(message.result as object)).toBeUndefined();
    const line = encodeRelayedLine({ jsonrpc: "2.0", id: 2, result: message.result });
    expect(line).toBe(`{"jsonrpc":"2.0","id":2,"result":{"n":1,${PAD}}}\n`);
    expect(line.indexOf("\n")).toBe(line.length - 1);
  });

  it("relays the last of duplicate results and an escaped name's result as JSON.parse read them", () => {
    const dup = decodeKept(`{"result":{"a":1},"jsonrpc":"2.0","id":1,"result":{"a":2.0,${PAD}}}`);
    expect(encodeRelayedLine({ jsonrpc: "2.0", id: 2, result: dup.result })).toBe(`{"jsonrpc":"2.0","id":2,"result":{"a":2.0,${PAD}}}\n`);
    const escaped = decodeKept(`{"res\\u0075lt":{"a": 1},"jsonrpc":"2.0","id":1,${PAD}}`);
    expect(encodeRelayedLine({ jsonrpc: "2.0", id: 2, result: escaped.result })).toBe('{"jsonrpc":"2.0","id":2,"result":{"a":1}}\n');
  });

  it("leaves out undefined members as JSON.stringify does, and passes non-objects to encodeLine", () => {
    const server = decodeKept(`{"id":1,"result":{},${PAD}}`);
    expect(encodeRelayedLine({ jsonrpc: "2.0", id: 2, extra: undefined, result: server.result })).toBe(
      '{"jsonrpc":"2.0","id":2,"result":{}}\n',
    );
    expect(encodeRelayedLine(5)).toBe("5\n");
    expect(() => encodeRelayedLine(undefined)).toThrow(TypeError);
  });

  it("keepResultText ignores messages without an object result", () => {
    for (const m of [null, 3, "x", [], { result: 1 }, { result: null }, { error: {} }]) expect(() => keepResultText(m, "{}")).not.toThrow();
  });

  it("property: however an answer was written, the relayed line is one line meaning what encoding it again means", () => {
    // Any JSON result, written with arbitrary whitespace, key order and escapes, among arbitrary members.
    const spacing = fc.constantFrom("", " ", "  ", "\t", "\n ");
    // A string literal with some of its letters written as \u escapes.
    const writeString = (s: string, mask: number): string =>
      `"${s
        .split("")
        .map((c, i) =>
          /[a-z]/.test(c) && (mask >> (i % 31)) & 1
            ? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`
            : JSON.stringify(c).slice(1, -1),
        )
        .join("")}"`;
    const write = (v: unknown, sp: string, mask: number): string => {
      if (Array.isArray(v)) return `[${sp}${v.map((x) => write(x, sp, mask)).join(`${sp},${sp}`)}${sp}]`;
      if (typeof v === "object" && v !== null)
        return `{${sp}${Object.entries(v)
          .map(([k, x]) => `${JSON.stringify(k)}${sp}:${sp}${write(x, sp, mask)}`)
          .join(`${sp},`)}${sp}}`;
      return typeof v === "string" ? writeString(v, mask) : JSON.stringify(v);
    };
    let asWritten = 0;
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 4 }), { maxKeys: 6 }),
        fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
        spacing,
        fc.integer(),
        fc.boolean(),
        (result, others, sp, mask, resultFirst) => {
          const members = Object.entries(others).filter(([k]) => k !== "result" && k !== "pad" && k !== "__proto__");
          const resultMember = `"result"${sp}:${sp}${write(result, sp, mask)}`;
          const rest = [...members.map(([k, v]) => `${JSON.stringify(k)}:${write(v, sp, mask)}`), PAD];
          const line = `{${sp}${(resultFirst ? [resultMember, ...rest] : [...rest, resultMember]).join(`${sp},${sp}`)}${sp}}`.replace(
            /\n/g,
            " ",
          );
          const message = decodeKept(line);
          if (keptResultText(message.result as object) !== undefined) asWritten++;
          const relayed = encodeRelayedLine({ jsonrpc: "2.0", id: 9, result: message.result });
          expect(relayed.indexOf("\n")).toBe(relayed.length - 1);
          expect(JSON.parse(relayed)).toEqual(JSON.parse(encodeLine({ jsonrpc: "2.0", id: 9, result: message.result })));
        },
      ),
      { numRuns: 400 },
    );
    // Most answers went on as written (the rest had a member name with an escape in it).
    expect(asWritten).toBeGreaterThan(200);
  });
});

/** Decodes `line` with a keepResults decoder and, while it is being delivered, relays it as answer `id`. */
function relayWhileDelivered(line: string, id: string | number, extra: Record<string, unknown> = {}): string {
  let out = "";
  const d = new JsonLineDecoder({
    keepResults: true,
    onValue: (v) => (out = encodeRelayedLine({ jsonrpc: "2.0", id, result: (v as { result: unknown }).result, ...extra })),
  });
  d.push(Buffer.from(`${line}\n`));
  return out;
}

describe("the answer being delivered goes on with only its id rewritten", () => {
  it("any size, any member order or spacing: the server's line but for the id's value (regression: small answers were encoded again)", () => {
    expect(relayWhileDelivered('{"result":{"content":[],"n":1.0},"jsonrpc":"2.0","id":41}', "client-7")).toBe(
      '{"result":{"content":[],"n":1.0},"jsonrpc":"2.0","id":"client-7"}\n',
    );
    expect(relayWhileDelivered('{ "jsonrpc" : "2.0" , "id" :\t41 , "result" : { "a" : [1.50] } }', 3)).toBe(
      '{ "jsonrpc" : "2.0" , "id" :\t3 , "result" : { "a" : [1.50] } }\n',
    );
    expect(relayWhileDelivered(`{"jsonrpc":"2.0","id":41,"result":{"n":1.0,${PAD}}}`, 'q"1')).toBe(
      `{"jsonrpc":"2.0","id":"q\\"1","result":{"n":1.0,${PAD}}}\n`,
    );
  });

  it('encodes afresh when the one `id` in the line may not be the member: another `"id"`, an escape, an extra member, a raw CR', () => {
    // A result with a member of its own called id; a \u escape (it may spell a second "id"); a member past
    // the three; the same name twice; a CR.
    expect(relayWhileDelivered('{"jsonrpc":"2.0","id":41,"result":{"id":1.0}}', 2)).toBe('{"jsonrpc":"2.0","id":2,"result":{"id":1}}\n');
    expect(relayWhileDelivered('{"jsonrpc":"2.0","id":41,"result":{"n":1.0},"\\u0069d":42}', 2)).toBe(
      '{"jsonrpc":"2.0","id":2,"result":{"n":1}}\n',
    );
    expect(relayWhileDelivered('{"jsonrpc":"2.0","id":41,"result":{"t":"caf\\u00e9"}}', 2)).toBe(
      '{"jsonrpc":"2.0","id":2,"result":{"t":"café"}}\n',
    );
    expect(relayWhileDelivered('{"jsonrpc":"2.0","id":41,"result":{"n":1.0},"x":1}', 2)).toBe(
      '{"jsonrpc":"2.0","id":2,"result":{"n":1}}\n',
    );
    expect(relayWhileDelivered('{"jsonrpc":"2.0","id":41,"result":{"n":1},"result":{"n":2.0}}', 2)).toBe(
      '{"jsonrpc":"2.0","id":2,"result":{"n":2}}\n',
    );
    expect(relayWhileDelivered('{"jsonrpc":"2.0","id":41,\r"result":{"n":1.0}}', 2)).toBe('{"jsonrpc":"2.0","id":2,"result":{"n":1}}\n');
    // The message relayed is not the plain answer (a member of its own): its members are encoded afresh.
    expect(relayWhileDelivered('{"jsonrpc":"2.0","id":41,"result":{"n":1.0}}', 2, { x: true })).toBe(
      '{"jsonrpc":"2.0","id":2,"result":{"n":1},"x":true}\n',
    );
  });

  it("only while the answer is delivered, and only for its own result object; a nested delivery restores the outer one", () => {
    let later: unknown;
    let outerRelayed = "";
    let innerRelayed = "";
    const inner = new JsonLineDecoder({
      keepResults: true,
      onValue: (v) => (innerRelayed = encodeRelayedLine({ jsonrpc: "2.0", id: "in", result: (v as { result: unknown }).result })),
    });
    const outer = new JsonLineDecoder({
      keepResults: true,
      onValue: (v) => {
        later = (v as { result: unknown }).result;
        inner.push(Buffer.from('{"result":{"i":2.0},"jsonrpc":"2.0","id":8}\n'));
        outerRelayed = encodeRelayedLine({ jsonrpc: "2.0", id: "out", result: later });
        // A copy of the result is another object: encoded afresh.
        expect(encodeRelayedLine({ jsonrpc: "2.0", id: "copy", result: { ...(later as object) } })).toBe(
          '{"jsonrpc":"2.0","id":"copy","result":{"o":1}}\n',
        );
      },
    });
    outer.push(Buffer.from('{"result":{"o":1.0},"jsonrpc":"2.0","id":7}\n'));
    expect(innerRelayed).toBe('{"result":{"i":2.0},"jsonrpc":"2.0","id":"in"}\n');
    expect(outerRelayed).toBe('{"result":{"o":1.0},"jsonrpc":"2.0","id":"out"}\n');
    // After the delivery (a relay that answers later), a short line's result is encoded afresh.
    expect(encodeRelayedLine({ jsonrpc: "2.0", id: "late", result: later })).toBe('{"jsonrpc":"2.0","id":"late","result":{"o":1}}\n');
  });

  it("property: any plain answer, in any member order and spacing, relayed while delivered means the answer with the client's id", () => {
    const spacing = fc.constantFrom("", " ", "\t", "  ");
    let spliced = 0;
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 4 }),
        fc.integer({ min: 1, max: 2 ** 31 }),
        fc.oneof(fc.string({ maxLength: 8 }), fc.integer()),
        fc.constantFrom([0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]),
        spacing,
        (resultValue, upstreamId, clientId, order, sp) => {
          const result = { value: resultValue };
          const members = [
            `"jsonrpc"${sp}:${sp}"2.0"`,
            `"id"${sp}:${sp}${upstreamId}`,
            `"result"${sp}:${sp}${JSON.stringify(result, null, sp.length > 0 ? 1 : undefined).replace(/\n/g, sp)}`,
          ];
          const line = `{${sp}${order.map((k) => members[k]).join(`${sp},${sp}`)}${sp}}`;
          const relayed = relayWhileDelivered(line, clientId);
          expect(relayed.indexOf("\n")).toBe(relayed.length - 1);
          expect(JSON.parse(relayed)).toEqual({ jsonrpc: "2.0", id: clientId, result: JSON.parse(JSON.stringify(result)) });
          if (relayed.length === line.length + 1 - String(upstreamId).length + JSON.stringify(clientId).length) spliced++;
        },
      ),
      { numRuns: 400 },
    );
    // Most went on as written (the rest had "id", "result" or an escape of their own inside).
    expect(spliced).toBeGreaterThan(200);
  });
});

describe("a result with members added before the server's text", () => {
  it("writes the members first, then the text as written; an empty object gets the members alone", () => {
    expect(withMembersFirst('{ "n" : 1.0 }', { resultType: "complete", _meta: { k: 1 } })).toBe(
      '{"resultType":"complete","_meta":{"k":1},"n" : 1.0 }',
    );
    expect(withMembersFirst("{ }", { resultType: "complete" })).toBe('{"resultType":"complete"}');
    // regression: a result that is no object (a broken server's array) has no text to add members to (they
    // were written into the array's text: invalid JSON, or another object's members).
    expect(withMembersFirst(' [1, "x"]', { resultType: "complete" })).toBeUndefined();
    expect(withMembersFirst('[{"a": 1}]', { resultType: "complete" })).toBeUndefined();
  });

  it("relays the made object as the made text (keepMadeText), and finds a delivered answer's text only past the size worth it", () => {
    const big = `{"jsonrpc":"2.0","id":1,"result":{"n":1.0,"pad":"${"p".repeat(PROTOCOL_DEFAULTS.keepResultMinChars)}"}}`;
    const small = '{"jsonrpc":"2.0","id":1,"result":{"n":1.0}}';
    const seen: Array<string | undefined> = [];
    for (const line of [big, small]) deliverKept(JSON.parse(line), line, (m) => seen.push(resultTextOf((m as { result: object }).result)));
    expect(seen[0]).toBe(big.slice(big.indexOf('{"n"'), -1));
    expect(seen[1]).toBeUndefined();
    const made = { n: 1, resultType: "complete" };
    keepMadeText(made, '{"resultType":"complete","n":1.0}');
    expect(encodeRelayed({ jsonrpc: "2.0", id: 2, result: made })).toBe(
      '{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","n":1.0}}',
    );
  });
});
