/**
 * A request body read by the HTTP front end (daemon/src/http/request-body.ts) over a real loopback socket:
 * charged to the budget at what its reads take from the allocator, its reads copied into pooled blocks and
 * the garbage pacer told of them at once, and a body refused over the budget giving its blocks back to the
 * pool rather than to the collector.
 */
import { type Server, createServer } from "node:http";
import { type Socket, connect } from "node:net";
import { silentLogger } from "@mcpd/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../../../tests/helpers/process.js";
import { HttpBuffers } from "../../src/http/http-buffers.js";
import { readBody } from "../../src/http/request-body.js";
import { BufferBudget } from "../../src/infra/buffer-budget.js";

const KiB = 1024;
let server: Server | undefined;
let client: Socket | undefined;

afterEach(async () => {
  client?.destroy();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = client = undefined;
});

/** A server reading each POST's body within `budgetBytes`, answering its length; and a raw client of it. */
async function setUp(budgetBytes: number): Promise<{ buffers: HttpBuffers; released: () => number; client: Socket; answer: () => string }> {
  const buffers = new HttpBuffers(new BufferBudget(budgetBytes), silentLogger);
  let released = 0;
  buffers.released = (n) => void (released += n);
  server = createServer((req, res) => {
    void readBody(req, res, { maxBytes: 4 * 1024 * KiB, timeoutMs: 30_000, buffers }).then((body) => body && res.end(`got ${body.length}`));
  });
  await new Promise<void>((r) => server?.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  client = connect(port, "127.0.0.1");
  let text = "";
  client.on("data", (d) => void (text += String(d)));
  await new Promise((r) => client?.once("connect", r));
  return { buffers, released: () => released, client, answer: () => text };
}

const head = (length: number): string => `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${length}\r\n\r\n`;

describe("readBody", () => {
  it("regression: a body was charged at its length, not at what its reads take from the allocator", async () => {
    const { buffers, client } = await setUp(1024 * KiB);
    client.write(head(20 * KiB));
    client.write(Buffer.alloc(10 * KiB, "x"));
    await waitFor(() => buffers.bytes >= 10 * KiB, { message: "the first half charged" });
    expect(buffers.bytes).toBeGreaterThan(10 * KiB);
  });

  it("regression: a body's reads were garbage the pacer heard of only once the body ended: copied into blocks, it is told at once", async () => {
    const { buffers, released, client, answer } = await setUp(1024 * KiB);
    client.write(head(30 * KiB));
    client.write(Buffer.alloc(10 * KiB, "a"));
    await waitFor(() => buffers.bytes >= 10 * KiB, { message: "the first read charged" });
    client.write(Buffer.alloc(10 * KiB, "b"));
    // The second read copies the first too: both are garbage now, the body still arriving.
    await waitFor(() => released() >= 20 * KiB, { message: "the pacer told of the reads copied" });
    expect(answer()).toBe("");
    client.write(Buffer.alloc(10 * KiB, "c"));
    await waitFor(() => answer().includes(`got ${30 * KiB}`), { message: "the body read whole" });
    expect(buffers.bytes).toBe(0);
  });

  it("a body refused over the budget gives its blocks back to the pool: only the parser's reads are garbage", async () => {
    const { buffers, released, client, answer } = await setUp(24 * KiB);
    client.write(head(40 * KiB));
    client.write(Buffer.alloc(10 * KiB, "a"));
    await waitFor(() => buffers.bytes >= 10 * KiB, { message: "the first read charged" });
    client.write(Buffer.alloc(20 * KiB, "b"));
    await waitFor(() => answer().startsWith("HTTP/1.1 503"), { message: "the body refused over the budget" });
    expect(buffers.bytes).toBe(0);
    expect(buffers.bodyBlocks.idleCount).toBe(1);
    expect(buffers.dropped.overBudget).toBe(1);
    // Told of each read once, when it was copied: not of the refused body's blocks, which are reused.
    expect(released()).toBeLessThanOrEqual(30 * KiB);
  });
});
