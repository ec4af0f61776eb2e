import { describe, expect, it } from "vitest";
import { StderrRing } from "../../src/stdio/stderr-ring.js";

describe("StderrRing", () => {
  it("splits lines across chunks, including inside a UTF-8 character, and strips \\r", () => {
    const lines: string[] = [];
    const ring = new StderrRing({ onLine: (l) => lines.push(l) });
    const bytes = Buffer.from("héllo wörld\r\nsecond\nthi", "utf8");
    for (let i = 0; i < bytes.length; i++) ring.push(bytes.subarray(i, i + 1));
    expect(ring.tail()).toEqual(["héllo wörld", "second"]);
    ring.end();
    expect(lines).toEqual(["héllo wörld", "second", "thi"]);
  });

  it("keeps the last maxLines lines and at most maxBytes bytes", () => {
    const ring = new StderrRing({ maxLines: 3, maxBytes: 1000 });
    for (let i = 1; i <= 10; i++) ring.push(`line ${i}\n`);
    expect(ring.tail()).toEqual(["line 8", "line 9", "line 10"]);
    expect(ring.tail(2)).toEqual(["line 9", "line 10"]);
    expect(ring.tail(0)).toEqual([]);

    const small = new StderrRing({ maxLines: 100, maxBytes: 20 });
    for (let i = 0; i < 10; i++) small.push(`abcdefgh${i}\n`);
    expect(small.byteCount).toBeLessThanOrEqual(20);
    expect(small.tail()).toEqual(["abcdefgh8", "abcdefgh9"]);
  });

  it("cuts a line longer than maxBytes instead of buffering it without bound", () => {
    const ring = new StderrRing({ maxLines: 10, maxBytes: 64 });
    for (let i = 0; i < 1000; i++) ring.push("é".repeat(1000));
    ring.push("\n");
    const [long] = ring.tail();
    expect(Buffer.byteLength(long as string)).toBeLessThanOrEqual(64);
    expect(long).toMatch(/^é+…\[truncated\]$/);
    // The byte bound covers all lines: the next line pushes the long one out.
    ring.push("next\n");
    expect(ring.tail()).toEqual(["next"]);
  });
});
