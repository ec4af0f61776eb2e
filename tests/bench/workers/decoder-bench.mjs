#!/usr/bin/env node
/**
 * Micro-benchmark of @mcpd/protocol's JsonLineDecoder against the naive way (StringDecoder, `+=`,
 * split("\n"), JSON.parse), both fed the same stream of newline-delimited JSON-RPC responses in 64 KiB
 * Buffer chunks, each with its own memory, as a socket or pipe delivers them. Runs in its own process for a clean JIT.
 * Spec: {sizes: [bytes...], minMs}. Prints {type: "decoder", results: [{size, decoderMBs, naiveMBs}]}.
 */
import { StringDecoder } from "node:string_decoder";
import { JsonLineDecoder } from "@mcpd/protocol";

const spec = JSON.parse(process.argv[2]);
const CHUNK = 64 * 1024;
const STREAM_BYTES = 16 * 1024 * 1024;

function stream(size) {
  const letters = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789.,;:!?";
  const lines = [];
  let total = 0;
  for (let id = 1; total < STREAM_BYTES; id++) {
    const head = JSON.stringify({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "" }] } });
    let text = "";
    while (text.length < size - head.length - 1) text += letters[(text.length * 7 + id) % letters.length];
    const line = JSON.stringify({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text }] } }) + "\n";
    lines.push(line);
    total += line.length;
  }
  const buf = Buffer.from(lines.join(""), "utf8");
  const chunks = [];
  // Each chunk a Buffer of its own, as Node delivers a socket's or a pipe's reads (every read has its own
  // ArrayBuffer of exactly the bytes read), not views of one large buffer: the decoder keeps a view of a
  // read only when that does not keep much more memory alive than the view.
  for (let i = 0; i < buf.length; i += CHUNK) chunks.push(Buffer.from(buf.subarray(i, i + CHUNK)));
  return { chunks, bytes: buf.length, count: lines.length };
}

function runDecoder(s) {
  let n = 0;
  const d = new JsonLineDecoder({ onValue: () => n++, maxLineBytes: 4 * 1024 * 1024 });
  for (const c of s.chunks) d.push(c);
  d.end();
  if (n !== s.count) throw new Error(`decoder delivered ${n} of ${s.count} messages`);
}

function runNaive(s) {
  let n = 0;
  const sd = new StringDecoder("utf8");
  let buf = "";
  for (const c of s.chunks) {
    buf += sd.write(c);
    const lines = buf.split("\n");
    buf = lines.pop();
    for (const l of lines) {
      if (l) {
        JSON.parse(l);
        n++;
      }
    }
  }
  if (n !== s.count) throw new Error(`naive split delivered ${n} of ${s.count} messages`);
}

/** MB/s (10^6 bytes) of `fn` over `s`, repeated for at least `minMs`. */
function measure(fn, s, minMs) {
  for (let i = 0; i < 3; i++) fn(s);
  let iterations = 0;
  const t0 = performance.now();
  let t;
  do {
    fn(s);
    iterations++;
    t = performance.now() - t0;
  } while (t < minMs);
  return (s.bytes * iterations) / 1e6 / (t / 1000);
}

const results = [];
for (const size of spec.sizes) {
  const s = stream(size);
  // Alternate, so neither always runs on a warmer machine.
  const naiveMBs = measure(runNaive, s, spec.minMs);
  const decoderMBs = measure(runDecoder, s, spec.minMs);
  results.push({ size, decoderMBs, naiveMBs, messages: s.count });
}
process.stdout.write(JSON.stringify({ type: "decoder", results }) + "\n");
