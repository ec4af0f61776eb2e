/**
 * Scenario 2: throughput with 64 calls in flight, from 1 client process (64 in flight) and from 8 client
 * processes (8 in flight each, 64 in all), over the same four paths as scenario 1. Direct paths give each
 * client process its own server (that is what direct means); through mcpd all share the daemon's one.
 * Also reports the daemon's CPU time per call, read from /proc, for paths (c) and (d).
 */
import { CLIENT_WORKER, mapLimit } from "../lib/env.mjs";
import { fastServer, startDaemon } from "../lib/daemon.mjs";
import { PATH_LABELS } from "../lib/call-paths.mjs";
import { Histogram } from "../lib/histogram.mjs";
import { cpuMs } from "../lib/procfs.mjs";
import { rotate, summarize } from "../lib/stats.mjs";
import { checkWorkers, startWorker } from "../lib/worker-host.mjs";
import { num, range, ratio, us } from "../lib/format.mjs";

export const id = "throughput";
export const title = "2. Throughput (64 calls in flight)";
const PATHS = ["a", "b", "c", "d"];
const IN_FLIGHT = 64;

/**
 * Runs one timed window on every worker at once and returns the summed calls/s, the merged histogram, the
 * client processes' CPU per call, and the CPU per call of each process in `watch` ({name: pid}, read from
 * /proc over the window). Throws when any call failed.
 */
export async function loadWindow(workers, { inFlight, durationMs, watch = {}, warmupMs = 300 }) {
  const startAt = Date.now() + warmupMs;
  const cpuStart = {};
  const cpuTimer = setTimeout(() => {
    for (const [k, pid] of Object.entries(watch)) cpuStart[k] = cpuMs(pid);
  }, warmupMs);
  const results = await Promise.all(
    workers.map((w) => w.request({ cmd: "load", inFlight, startAt, durationMs }, "load", durationMs + 120_000)),
  );
  clearTimeout(cpuTimer);
  const cpuEnd = Object.fromEntries(Object.entries(watch).map(([k, pid]) => [k, cpuMs(pid)]));
  const errors = results.reduce((n, r) => n + r.errors, 0);
  if (errors > 0)
    throw new Error(
      `${errors} calls failed, e.g.: ${results
        .flatMap((r) => r.errorSamples)
        .slice(0, 3)
        .join(" | ")}`,
    );
  const calls = results.reduce((n, r) => n + r.calls, 0);
  if (calls === 0) throw new Error("no call completed inside the measurement window");
  const hist = new Histogram();
  for (const r of results) hist.merge(Histogram.fromJSON(r.hist));
  const cpuUsPerCall = Object.fromEntries(Object.keys(watch).map((k) => [k, ((cpuEnd[k] - (cpuStart[k] ?? cpuEnd[k])) * 1000) / calls]));
  const clientCpuUsPerCall = (results.reduce((n, r) => n + r.cpuMs, 0) * 1000) / calls;
  return { calls, rate: calls / (durationMs / 1000), hist, cpuUsPerCall, clientCpuUsPerCall };
}

export async function run(ctx) {
  const { resources, quick, rounds, log } = ctx;
  const durationMs = quick ? 700 : 2_000;
  const daemon = await startDaemon(resources, { fast: fastServer("fast") });
  const out = {};
  try {
    for (const clients of [1, 8]) {
      const workers = {};
      try {
        for (const p of PATHS) workers[p] = [];
        // Started 4 at a time: each is a Node process importing the SDK (and, direct, spawning a server).
        const jobs = PATHS.flatMap((p) => Array.from({ length: clients }, (_, i) => ({ p, i })));
        await mapLimit(jobs, 4, async ({ p, i }) => {
          const w = await startWorker(
            resources,
            CLIENT_WORKER,
            { path: p, server: fastServer(`direct-${i}`), serverName: "fast", socketPath: daemon.socketPath },
            { name: `tput-${p}-${clients}-${i}` },
          );
          workers[p].push(w);
        });
        const per = Object.fromEntries(PATHS.map((p) => [p, { rate: [], p99: [], cpu: [], client: [] }]));
        const ratios = { cOverA: [], cOverB: [], dOverA: [] };
        for (let r = 0; r < rounds; r++) {
          const rate = {};
          for (const p of rotate(PATHS, r)) {
            const via = p === "c" || p === "d";
            const w = await loadWindow(workers[p], { inFlight: IN_FLIGHT / clients, durationMs, watch: via ? { daemon: daemon.pid } : {} });
            rate[p] = w.rate;
            per[p].rate.push(w.rate);
            per[p].p99.push(w.hist.quantile(0.99));
            per[p].client.push(w.clientCpuUsPerCall);
            if (via) per[p].cpu.push(w.cpuUsPerCall.daemon);
            log(
              `  ${clients} client(s) round ${r + 1} ${p}: ${num(w.rate)} calls/s, p99 ${num(w.hist.quantile(0.99))} µs, client ${num(w.clientCpuUsPerCall)} µs CPU/call${via ? `, daemon ${num(w.cpuUsPerCall.daemon)} µs CPU/call` : ""}`,
            );
          }
          ratios.cOverA.push(rate.c / rate.a);
          ratios.cOverB.push(rate.c / rate.b);
          ratios.dOverA.push(rate.d / rate.a);
        }
        checkWorkers(Object.values(workers).flat());
        out[clients] = {
          per: Object.fromEntries(
            PATHS.map((p) => [
              p,
              {
                rate: summarize(per[p].rate),
                p99: summarize(per[p].p99),
                client: summarize(per[p].client),
                cpu: per[p].cpu.length ? summarize(per[p].cpu) : undefined,
              },
            ]),
          ),
          ratios: Object.fromEntries(Object.entries(ratios).map(([k, v]) => [k, summarize(v)])),
        };
      } finally {
        await Promise.all(
          Object.values(workers)
            .flat()
            .map((w) => w.stop().catch(() => {})),
        );
      }
    }
  } finally {
    await daemon.stop();
  }
  const rows = [];
  for (const clients of [1, 8]) {
    for (const p of PATHS) {
      const s = out[clients].per[p];
      rows.push([
        `${clients === 1 ? "1 client x 64" : "8 clients x 8"}`,
        PATH_LABELS[p],
        range(s.rate),
        ratio(s.rate.median / out[clients].per.a.rate.median),
        range(s.p99, us),
        range(s.client, us),
        s.cpu ? range(s.cpu, us) : "",
      ]);
    }
  }
  return {
    id,
    title,
    description: `Each round runs every path for ${durationMs / 1000} s after a 0.3 s warm-up; calls/s counts the calls completed inside the window. With 8 clients the 64 calls in flight are spread over 8 separate client processes (8 each), started together. CPU per call: user+system time over the window divided by the calls, of the client processes (their own count, which excludes the servers direct paths spawn) and of the daemon (from /proc).`,
    tables: [{ columns: ["clients", "path", "calls/s", "vs (a)", "p99", "client CPU/call", "daemon CPU/call"], rows }],
    headline: [
      {
        metric: "(c) calls/s, 64 in flight, 1 client / (a) SDK direct",
        value: out[1].ratios.cOverA,
        format: ratio,
        target: ">= 2x",
        pass: out[1].ratios.cOverA.median >= 2,
      },
      { metric: "(c) calls/s, 64 in flight, 8 clients / (a) SDK direct", value: out[8].ratios.cOverA, format: ratio },
      { metric: "(c) calls/s, 64 in flight, 1 client / (b) mcpd StdioTransport direct", value: out[1].ratios.cOverB, format: ratio },
      { metric: "(d) calls/s, 64 in flight, 1 client / (a) SDK direct", value: out[1].ratios.dOverA, format: ratio },
    ],
    data: out,
  };
}
