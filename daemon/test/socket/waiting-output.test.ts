/**
 * A tick's output for a client whose earlier output still waits (daemon/src/socket/waiting-output.ts):
 * encoded as UTF-8 line by line into blocks of their own, written at the end of the tick, and given back
 * once written or taken.
 */
import { describe, expect, it } from "vitest";
import { WaitingOutput } from "../../src/socket/waiting-output.js";

/** A WaitingOutput whose end of tick is run by hand, and what it wrote. */
function waiting(): { out: WaitingOutput; endTick: () => void; written: Array<{ bytes: Uint8Array; done: () => void }> } {
  const written: Array<{ bytes: Uint8Array; done: () => void }> = [];
  let later: (() => void) | undefined;
  const out = new WaitingOutput(
    (bytes, done) => written.push({ bytes, done }),
    (run) => (later = run),
  );
  return {
    out,
    written,
    endTick: () => {
      const run = later;
      later = undefined;
      run?.();
    },
  };
}

const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

describe("WaitingOutput", () => {
  it("counts a tick's lines as their UTF-8 bytes and writes them together, in order, at the end of the tick", () => {
    const { out, endTick, written } = waiting();
    out.add('{"a":"€"}\n');
    out.add('{"b":"x"}\n');
    expect(out.bytes).toBe(12 + 10);
    expect(written).toEqual([]);
    endTick();
    expect(written.map((w) => text(w.bytes))).toEqual(['{"a":"€"}\n{"b":"x"}\n']);
    expect(out.bytes).toBe(0);
  });

  it("gives a block back once written: its bytes read as empty", () => {
    const { out, endTick, written } = waiting();
    out.add("[1]\n");
    endTick();
    const [w] = written;
    w!.done();
    expect(w!.bytes.length).toBe(0);
  });

  it("grows one block in place for a tick of many lines", () => {
    const { out, endTick, written } = waiting();
    const lines: string[] = [];
    for (let i = 0; i < 2_000; i++) lines.push(`{"i":${i},"pad":"${"z".repeat(50)}"}\n`);
    for (const l of lines) out.add(l);
    endTick();
    expect(written.map((w) => text(w.bytes))).toEqual([lines.join("")]);
  });

  it("puts a line too long to share a block into a plain buffer of its exact size (no releasable block sized for the worst case)", () => {
    const { out, endTick, written } = waiting();
    const long = `"${"y".repeat(100 * 1024)}"\n`;
    out.add("[1]\n");
    out.add(long);
    out.add("[2]\n");
    expect(out.bytes).toBe(4 + long.length + 4);
    endTick();
    expect(written.map((w) => text(w.bytes))).toEqual(["[1]\n", long, "[2]\n"]);
    const own = written[1]!.bytes;
    expect(own.length).toBe(long.length);
    expect((own.buffer as ArrayBuffer & { resizable?: boolean }).resizable).toBe(false);
  });

  it("takeText() hands what waits over as text (for a connection's last words) and leaves nothing to write", () => {
    const { out, endTick, written } = waiting();
    out.add("[1]\n");
    out.add('"é"\n');
    expect(out.takeText()).toBe('[1]\n"é"\n');
    expect(out.bytes).toBe(0);
    endTick();
    expect(written).toEqual([]);
  });
});
