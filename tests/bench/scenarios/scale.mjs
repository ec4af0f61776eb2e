/**
 * Scenario 6: scale. 1,000 connections to one daemon (4 client processes of 250 @mcpd/client connections),
 * each keeping 10 calls in flight, spread over 4 fast servers, for 20 s per round (quick mode: 3 s).
 * Every call must succeed; reports calls/s, p99 and the daemon's RSS before and after.
 */
import { readFileSync } from "node:fs";
import { CLIENT_WORKER, sleep } from "../lib/env.mjs";
import { fastServer, startDaemon } from "../lib/daemon.mjs";
import { median, summarize } from "../lib/stats.mjs";
import { rssKb } from "../lib/procfs.mjs";
import { checkWorkers, startWorker } from "../lib/worker-host.mjs";
import { mb, ms, num, range } from "../lib/format.mjs";
import { loadWindow } from "./throughput.mjs";

export const id = "scale";
export const title = "6. Scale: 1,000 connections x 10 in flight";
const CONNECTIONS = 1_000;
const WORKERS = 4;
const SERVERS = 4;
const IN_FLIGHT = 10;
const WARMUP_MS = 3_000;

/** The soft limit on open files of this process (children inherit it), from /proc/self/limits. */
export function openFilesLimit() {
  const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync("/proc/self/limits", "utf8"));
  return !m ? NaN : m[1] === "unlimited" ? Infinity : Number(m[1]);
}

async function rssMb(pid) {
  const v = [];
  for (let i = 0; i < 5; i++) {
    if (i) await sleep(100);
    v.push(rssKb(pid) / 1024);
  }
  return median(v);
}

export async function run(ctx) {
  const { resources, quick, rounds, log } = ctx;
  const durationMs = quick ? 3_000 : 20_000;
  const limit = openFilesLimit();
  // The daemon holds one socket per connection plus 3 pipes per server; leave room for the rest.
  if (!(limit >= CONNECTIONS + 200)) {
    throw new Error(
      `ulimit -n is ${limit}: the daemon needs more than ${CONNECTIONS + 200} open files for ${CONNECTIONS} connections. Raise it (ulimit -n 4096) and run again.`,
    );
  }
  const servers = {};
  for (let i = 1; i <= SERVERS; i++) servers[`f${i}`] = fastServer(`f${i}`);
  const daemon = await startDaemon(resources, servers);
  const workers = [];
  try {
    const rssIdle = await rssMb(daemon.pid);
    const t0 = Date.now();
    await Promise.all(
      Array.from({ length: WORKERS }, async (_, i) => {
        workers.push(
          await startWorker(
            resources,
            CLIENT_WORKER,
            { path: "c", serverName: `f${(i % SERVERS) + 1}`, socketPath: daemon.socketPath, connections: CONNECTIONS / WORKERS },
            { name: `scale-${i}`, readyTimeoutMs: 120_000 },
          ),
        );
      }),
    );
    const connectMs = Date.now() - t0;
    const rssConnected = await rssMb(daemon.pid);
    log(
      `  ${CONNECTIONS} connections in ${num(connectMs)} ms; daemon RSS idle ${num(rssIdle)} MB, connected ${num(rssConnected)} MB (ulimit -n ${limit})`,
    );
    const rates = [];
    const p99 = [];
    const p50 = [];
    const rssAfter = [];
    const cpu = [];
    let calls = 0;
    for (let r = 0; r < rounds; r++) {
      // loadWindow throws on any failed call: errors must be 0.
      const w = await loadWindow(workers, { inFlight: IN_FLIGHT, durationMs, warmupMs: WARMUP_MS, watch: { daemon: daemon.pid } });
      calls += w.calls;
      rates.push(w.rate);
      p99.push(w.hist.quantile(0.99) / 1000);
      p50.push(w.hist.quantile(0.5) / 1000);
      rssAfter.push(await rssMb(daemon.pid));
      cpu.push(w.cpuUsPerCall.daemon);
      log(
        `  round ${r + 1}: ${num(w.rate)} calls/s, p50 ${num(p50.at(-1))} ms, p99 ${num(p99.at(-1))} ms, 0 errors, daemon ${num(cpu.at(-1))} µs CPU/call, daemon RSS ${num(rssAfter.at(-1))} MB`,
      );
    }
    checkWorkers(workers);
    const s = { rate: summarize(rates), p50: summarize(p50), p99: summarize(p99), rssAfter: summarize(rssAfter), cpu: summarize(cpu) };
    return {
      id,
      title,
      description: `${CONNECTIONS.toLocaleString("en-US")} @mcpd/client connections in ${WORKERS} client processes, ${IN_FLIGHT} calls in flight on each (${(CONNECTIONS * IN_FLIGHT).toLocaleString("en-US")} in all), spread over ${SERVERS} fast servers (the daemon's default \`maxConcurrency\` of 64 per server queues the rest). ${durationMs / 1000} s per round after ${WARMUP_MS / 1000} s of warm-up (calls take seconds at this concurrency); ${calls.toLocaleString("en-US")} calls in all, none failed (any failure aborts the run). Open-file limit (ulimit -n): ${limit}. Connecting all ${CONNECTIONS.toLocaleString("en-US")} took ${num(connectMs)} ms.`,
      tables: [
        {
          columns: ["figure", "value"],
          rows: [
            ["errors", "0"],
            ["calls/s", range(s.rate)],
            ["p50 latency", range(s.p50, ms)],
            ["p99 latency", range(s.p99, ms)],
            ["daemon CPU per call", range(s.cpu, (v) => `${num(v)} µs`)],
            ["daemon RSS before connections", mb(rssIdle)],
            ["daemon RSS with 1,000 idle connections", mb(rssConnected)],
            ["daemon RSS after each round", range(s.rssAfter, mb)],
          ],
        },
      ],
      headline: [
        {
          metric: "Scale, 1,000 connections x 10 in flight: errors",
          value: summarize([0]),
          format: (v) => String(v),
          target: "0",
          pass: true,
        },
        {
          metric: "Scale: daemon RSS after load / before connections",
          value: summarize(rssAfter.map((v) => v / rssIdle)),
          format: (v) => `${num(v)}x`,
        },
      ],
      data: { ...s, rssIdle, rssConnected, connectMs, limit },
    };
  } finally {
    await Promise.all(workers.map((w) => w.stop().catch(() => {})));
    await daemon.stop();
  }
}
