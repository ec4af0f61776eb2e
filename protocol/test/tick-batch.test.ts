/**
 * TickBatch: the lines a connection sends in one tick leave as one string at its end, in order; `flush`
 * writes them at once, `clear` forgets them. Each writer of mcpd's hot path uses it (the daemon's socket
 * connections, a stdio server's stdin, the client SDK's socket), in place of corking the stream.
 */
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { TickBatch } from "../src/index.js";

/** A real Writable that records each write it is given. */
function recordingStream(): { stream: Writable; writes: string[] } {
  const writes: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      writes.push(chunk.toString());
      done();
    },
    writev(chunks, done) {
      writes.push(chunks.map((c) => (c.chunk as Buffer).toString()).join(""));
      done();
    },
  });
  return { stream, writes };
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("TickBatch", () => {
  it("writes every line of a tick as one string at its end, in order (regression: each line was its own buffered write under cork)", async () => {
    const { stream, writes } = recordingStream();
    const batch = new TickBatch((text) => stream.write(text), process.nextTick);
    for (let i = 0; i < 64; i++) batch.add(`{"id":${i}}\n`);
    expect(writes).toEqual([]);
    expect(batch.length).toBe(10 * 9 + 54 * 10); // ten lines with a one-digit id, 54 with two digits
    await tick();
    expect(writes).toHaveLength(1);
    expect(writes[0]?.split("\n").slice(0, -1)).toEqual(Array.from({ length: 64 }, (_, i) => `{"id":${i}}`));
    expect(batch.length).toBe(0);
    // The next tick's lines are the next write.
    batch.add("a\n");
    batch.add("b\n");
    await tick();
    expect(writes).toEqual([writes[0], "a\nb\n"]);
  });

  it("flush writes what waits at once, and the end of the tick then has nothing to write", async () => {
    const { stream, writes } = recordingStream();
    const batch = new TickBatch((text) => stream.write(text), process.nextTick);
    batch.add("one\n");
    batch.flush();
    expect(writes).toEqual(["one\n"]);
    batch.flush();
    await tick();
    expect(writes).toEqual(["one\n"]);
  });

  it("clear forgets what waits", async () => {
    const { stream, writes } = recordingStream();
    const batch = new TickBatch((text) => stream.write(text), process.nextTick);
    batch.add("dropped\n");
    batch.clear();
    expect(batch.length).toBe(0);
    await tick();
    expect(writes).toEqual([]);
  });
});
