#!/usr/bin/env node
/**
 * An agent process of the "peers" scenario: opens one client on one path (lib/peer-paths.mjs), then obeys
 * JSON-line commands on stdin and answers JSON lines on stdout (nothing else goes to stdout), like
 * workers/client-worker.mjs:
 *
 *   {cmd: "latency", calls, warmup}                sequential calls
 *   {cmd: "load", inFlight, startAt, durationMs}   `inFlight` call loops from now on; counts (and times) the
 *                                                  calls that complete inside [startAt, startAt + durationMs]
 *                                                  (epoch ms); no new call after it
 *   {cmd: "connect-list", times}                   `times` times, one after the other: open a new client,
 *                                                  list its tools, close it; the ms of open + list each time
 *   {cmd: "each"}                                  one call (so the session has been used)
 *   {cmd: "exit"} or stdin EOF                     close the client, exit 0
 *
 * Replies: {type: "ready", pids}, {type: "latency", ...}, {type: "load", ...}, {type: "connect-list", ms: []},
 * {type: "each", calls}, {type: "error", message}. Any failure to open a client is fatal (exit 1); call
 * errors under load are counted and reported, never hidden.
 */
import { createInterface } from "node:readline";
import { performance } from "node:perf_hooks";
import { openPeerPath } from "../lib/peer-paths.mjs";
import { Histogram } from "../lib/histogram.mjs";

const spec = JSON.parse(process.argv[2]);
const send = (msg) => process.stdout.write(`${JSON.stringify(msg)}\n`);
let client;

async function latency({ calls, warmup }) {
  for (let i = 0; i < warmup; i++) await client.call();
  const hist = new Histogram();
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) {
    const s = performance.now();
    await client.call();
    hist.record((performance.now() - s) * 1000);
  }
  return { type: "latency", calls, elapsedMs: performance.now() - t0, hist: hist.toJSON() };
}

async function load({ inFlight, startAt, durationMs }) {
  // performance.now() and Date.now() share an origin offset; the window is converted once.
  const start = startAt - (Date.now() - performance.now());
  const end = start + durationMs;
  const hist = new Histogram();
  let calls = 0;
  let errors = 0;
  const samples = [];
  let cpuAtStart;
  const startTimer = setTimeout(() => (cpuAtStart = process.cpuUsage()), Math.max(0, start - performance.now()));
  const lane = async () => {
    for (;;) {
      const s = performance.now();
      if (s >= end) return;
      try {
        await client.call();
        const f = performance.now();
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
  await Promise.all(Array.from({ length: inFlight }, lane));
  clearTimeout(startTimer);
  const cpu = process.cpuUsage(cpuAtStart);
  return { type: "load", calls, errors, errorSamples: samples, durationMs, cpuMs: (cpu.user + cpu.system) / 1000, hist: hist.toJSON() };
}

async function connectList({ times }) {
  const ms = [];
  for (let i = 0; i < times; i++) {
    const t0 = performance.now();
    const c = await openPeerPath(spec);
    try {
      await c.list();
      ms.push(performance.now() - t0);
    } finally {
      await c.close();
    }
  }
  return { type: "connect-list", ms };
}

async function main() {
  client = await openPeerPath(spec);
  send({ type: "ready", pids: client.pids });
  const rl = createInterface({ input: process.stdin });
  for await (const line of rl) {
    if (!line.trim()) continue;
    const cmd = JSON.parse(line);
    if (cmd.cmd === "exit") break;
    if (cmd.cmd === "latency") send(await latency(cmd));
    else if (cmd.cmd === "load") send(await load(cmd));
    else if (cmd.cmd === "connect-list") send(await connectList(cmd));
    else if (cmd.cmd === "each") {
      await client.call();
      send({ type: "each", calls: 1 });
    } else throw new Error(`unknown command ${JSON.stringify(cmd.cmd)}`);
  }
  await client.close();
  process.exit(0);
}

main().catch(async (err) => {
  send({ type: "error", message: String(err?.stack ?? err) });
  await client?.close().catch(() => {});
  process.exit(1);
});
