#!/usr/bin/env node
/**
 * A client process of the benchmarks: opens `connections` clients on one path (lib/call-paths.mjs), then
 * obeys JSON-line commands on stdin and answers JSON lines on stdout (nothing else goes to stdout):
 *
 *   {cmd: "latency", calls, warmup}                    sequential calls on the first client
 *   {cmd: "load", inFlight, startAt, durationMs}       `inFlight` call loops per client from now on; counts (and
 *                                                      times) the calls that complete inside [startAt,
 *                                                      startAt + durationMs] (epoch ms); no new call after it
 *   {cmd: "each"}                                      one call on every client (so each session has been used)
 *   {cmd: "warmup", calls, inFlight}                   `calls` untimed calls on the first client, `inFlight` at
 *                                                      once (JIT and connection pools warm before a timed window)
 *   {cmd: "exit"} or stdin EOF                          close every client, exit 0
 *
 * Replies: {type: "ready", pids}, {type: "latency", ...}, {type: "load", ...}, {type: "each", calls}, {type: "warmup"},
 * {type: "error", message}.
 * Any failure to open a client is fatal (exit 1); call errors are counted and reported, never hidden.
 */
import { createInterface } from "node:readline";
import { performance } from "node:perf_hooks";
import { openPath } from "../lib/call-paths.mjs";
import { Histogram } from "../lib/histogram.mjs";
import { mapLimit } from "../lib/env.mjs";

const spec = JSON.parse(process.argv[2]);
const send = (msg) => process.stdout.write(JSON.stringify(msg) + "\n");
let clients = [];

async function closeAll() {
  const cs = clients;
  clients = [];
  await Promise.allSettled(cs.map((c) => c.close()));
}

async function latency({ calls, warmup }) {
  const c = clients[0];
  for (let i = 0; i < warmup; i++) await c.call();
  const hist = new Histogram();
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) {
    const s = performance.now();
    await c.call();
    hist.record((performance.now() - s) * 1000);
  }
  const elapsedMs = performance.now() - t0;
  return { type: "latency", calls, elapsedMs, hist: hist.toJSON() };
}

async function load({ inFlight, startAt, durationMs }) {
  // performance.now() and Date.now() share an origin offset; the window is converted once.
  const offset = Date.now() - performance.now();
  const start = startAt - offset;
  const end = start + durationMs;
  const hist = new Histogram();
  let calls = 0;
  let errors = 0;
  const samples = [];
  let cpuAtStart;
  const startTimer = setTimeout(() => (cpuAtStart = process.cpuUsage()), Math.max(0, start - performance.now()));
  const lane = async (c) => {
    for (;;) {
      const s = performance.now();
      if (s >= end) return;
      try {
        await c.call();
        const f = performance.now();
        // Throughput = completions inside the window, whenever they started (at high concurrency a call
        // can take longer than the warm-up, and must still count).
        if (f >= start && f <= end) {
          calls++;
          hist.record((f - s) * 1000);
        }
      } catch (err) {
        errors++;
        if (samples.length < 5) samples.push(String(err?.message ?? err).slice(0, 300));
      }
    }
  };
  await Promise.all(clients.flatMap((c) => Array.from({ length: inFlight }, () => lane(c))));
  clearTimeout(startTimer);
  const cpu = process.cpuUsage(cpuAtStart);
  return { type: "load", calls, errors, errorSamples: samples, durationMs, cpuMs: (cpu.user + cpu.system) / 1000, hist: hist.toJSON() };
}

async function main() {
  const n = spec.connections ?? 1;
  clients = await mapLimit(Array.from({ length: n }), spec.openConcurrency ?? 16, () => openPath(spec));
  send({ type: "ready", pids: clients.flatMap((c) => c.pids).filter(Boolean) });
  const rl = createInterface({ input: process.stdin });
  for await (const line of rl) {
    if (!line.trim()) continue;
    const cmd = JSON.parse(line);
    if (cmd.cmd === "exit") break;
    if (cmd.cmd === "latency") send(await latency(cmd));
    else if (cmd.cmd === "load") send(await load(cmd));
    else if (cmd.cmd === "warmup") {
      let left = cmd.calls;
      const lane = async () => {
        while (left-- > 0) await clients[0].call();
      };
      await Promise.all(Array.from({ length: cmd.inFlight }, lane));
      send({ type: "warmup" });
    } else if (cmd.cmd === "each") {
      await mapLimit(clients, 64, (c) => c.call());
      send({ type: "each", calls: clients.length });
    } else throw new Error(`unknown command ${JSON.stringify(cmd.cmd)}`);
  }
  await closeAll();
  process.exit(0);
}

main().catch(async (err) => {
  send({ type: "error", message: String(err?.stack ?? err) });
  await closeAll().catch(() => {});
  process.exit(1);
});
