/**
 * Scenario 2: throughput with 64 calls in flight, from 1 client process (64 in flight) and from 8 client
 * processes (8 in flight each, 64 in all), and with 16 in flight from 1 client process, over the paths of
 * scenario 1 (without the pass-through floor). Direct paths give each client process its own server (that
 * is what direct means); through mcpd all share the daemon's one. Also reports the daemon's CPU time per
 * call, read from /proc, for the paths through it.
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
export const title = "2. Throughput (64 and 16 calls in flight)";
const PATHS = ["a", "b", "c", "d", "e", "e-ht"];
/** The paths run with `clients` client processes: the HTTP reference (e-ht) with one only (it is a reference, and 8 more processes). */
const pathsFor = (clients) => (clients === 1 ? PATHS : PATHS.filter((p) => p !== "e-ht"));
/** The paths through the daemon, whose CPU per call is read. */
const VIA = ["c", "d", "e", "e-ht"];
/** Untimed calls (16 in flight) spread over each path's client processes before the first window. */
const WARMUP_CALLS = { quick: 500, full: 1_000 };

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

/** The loads: clients x calls in flight per client. One client's 64 and 16 share its worker processes. */
const LOADS = [
  { key: "1x64", clients: 1, inFlight: 64, label: "1 client x 64" },
  { key: "1x16", clients: 1, inFlight: 16, label: "1 client x 16" },
  { key: "8x8", clients: 8, inFlight: 8, label: "8 clients x 8" },
];

export async function run(ctx) {
  const { resources, quick, rounds, log } = ctx;
  const durationMs = quick ? 700 : 2_000;
  const daemon = await startDaemon(resources, { fast: fastServer("fast") });
  const out = {};
  try {
    const front = await daemon.httpFront();
    for (const clients of [1, 8]) {
      const paths = pathsFor(clients);
      const workers = {};
      try {
        for (const p of paths) workers[p] = [];
        // Started 4 at a time: each is a Node process importing the SDK (and, direct, spawning a server).
        const jobs = paths.flatMap((p) => Array.from({ length: clients }, (_, i) => ({ p, i })));
        await mapLimit(jobs, 4, async ({ p, i }) => {
          const w = await startWorker(
            resources,
            CLIENT_WORKER,
            {
              path: p,
              server: fastServer(`direct-${i}`),
              serverName: "fast",
              socketPath: daemon.socketPath,
              url: front.serverUrl("fast"),
              tokenFile: front.tokenFile,
            },
            { name: `tput-${p}-${clients}-${i}` },
          );
          workers[p].push(w);
        });
        // The same number of untimed calls on every path first (JIT, connection pools, the daemon's HTTP
        // code): a 0.3 s warm-up is thousands of calls on the fast paths and a few dozen over HTTP with the SDK.
        const warm = Math.ceil(WARMUP_CALLS[quick ? "quick" : "full"] / clients);
        await Promise.all(
          paths.flatMap((p) =>
            workers[p].map((w) => w.request({ cmd: "warmup", calls: warm, inFlight: Math.max(1, 16 / clients) }, "warmup")),
          ),
        );
        for (const load of LOADS.filter((l) => l.clients === clients)) {
          const per = Object.fromEntries(paths.map((p) => [p, { rate: [], p99: [], cpu: [], client: [], bridge: [] }]));
          const ratios = { cOverA: [], cOverB: [], dOverA: [], eOverD: [], eOverC: [], eCpuOverC: [], eCpuOverD: [] };
          for (let r = 0; r < rounds; r++) {
            const rate = {};
            const cpu = {};
            for (const p of rotate(paths, r)) {
              const via = VIA.includes(p);
              // (d) runs one more process per client, the `mcpd connect` bridge: its CPU is counted apart.
              const bridges = p === "d" ? workers.d.flatMap((w) => w.ready.pids).map((pid, i) => [`bridge${i}`, pid]) : [];
              const watch = via ? { daemon: daemon.pid, ...Object.fromEntries(bridges) } : {};
              const w = await loadWindow(workers[p], { inFlight: load.inFlight, durationMs, watch });
              rate[p] = w.rate;
              per[p].rate.push(w.rate);
              per[p].p99.push(w.hist.quantile(0.99));
              per[p].client.push(w.clientCpuUsPerCall);
              if (via) {
                cpu[p] = w.cpuUsPerCall.daemon;
                per[p].cpu.push(cpu[p]);
              }
              const bridgeCpu = bridges.reduce((sum, [k]) => sum + w.cpuUsPerCall[k], 0);
              if (bridges.length) per[p].bridge.push(bridgeCpu);
              log(
                `  ${load.label} round ${r + 1} ${p}: ${num(w.rate)} calls/s, p99 ${num(w.hist.quantile(0.99))} µs, client ${num(w.clientCpuUsPerCall)} µs CPU/call${bridges.length ? `, bridge ${num(bridgeCpu)} µs CPU/call` : ""}${via ? `, daemon ${num(cpu[p])} µs CPU/call` : ""}`,
              );
            }
            ratios.cOverA.push(rate.c / rate.a);
            ratios.cOverB.push(rate.c / rate.b);
            ratios.dOverA.push(rate.d / rate.a);
            ratios.eOverD.push(rate.e / rate.d);
            ratios.eOverC.push(rate.e / rate.c);
            ratios.eCpuOverC.push(cpu.e / cpu.c);
            ratios.eCpuOverD.push(cpu.e / cpu.d);
          }
          out[load.key] = {
            per: Object.fromEntries(
              paths.map((p) => [
                p,
                {
                  rate: summarize(per[p].rate),
                  p99: summarize(per[p].p99),
                  client: summarize(per[p].client),
                  cpu: per[p].cpu.length ? summarize(per[p].cpu) : undefined,
                  bridge: per[p].bridge.length ? summarize(per[p].bridge) : undefined,
                },
              ]),
            ),
            ratios: Object.fromEntries(Object.entries(ratios).map(([k, v]) => [k, summarize(v)])),
          };
        }
        checkWorkers(Object.values(workers).flat());
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
  for (const load of LOADS) {
    for (const p of pathsFor(load.clients)) {
      const s = out[load.key].per[p];
      rows.push([
        load.label,
        PATH_LABELS[p],
        range(s.rate),
        ratio(s.rate.median / out[load.key].per.a.rate.median),
        range(s.p99, us),
        range(s.client, us),
        s.bridge ? range(s.bridge, us) : "",
        s.cpu ? range(s.cpu, us) : "",
      ]);
    }
  }
  const o16 = out["1x16"];
  const row = (figure, field, format, ratioKey, better) => ({
    figure,
    format,
    better,
    values: Object.fromEntries(["a", "c", "d", "e", "e-ht"].filter((p) => o16.per[p][field]).map((p) => [p, o16.per[p][field]])),
    ratio: ratioKey ? o16.ratios[ratioKey] : undefined,
  });
  return {
    id,
    title,
    description: `Each round runs every path for ${durationMs / 1000} s after a 0.3 s warm-up; calls/s counts the calls completed inside the window. One client process holds 64, then 16 calls in flight; with 8 clients the 64 calls in flight are spread over 8 separate client processes (8 each), started together. Path (e) is scenario 1's: the SDK client over Streamable HTTP to the daemon's HTTP front end, one session per client process (the front end answers at most 64 POSTs of one session at once); the reference row below it drives the same endpoint with mcpd's own \`HttpTransport\`, a client that costs less CPU per call, to show what the front end does with a lighter client (one client process only). Before the first window every path makes the same ${WARMUP_CALLS[quick ? "quick" : "full"].toLocaleString("en-US")} untimed calls (16 in flight, spread over its client processes). CPU per call: user+system time over the window divided by the calls, of the client processes (their own count, which excludes the servers direct paths spawn and the \`mcpd connect\` bridges of (d)), of those bridges, and of the daemon (from /proc).`,
    tables: [{ columns: ["clients", "path", "calls/s", "vs (a)", "p99", "client CPU/call", "bridge CPU/call", "daemon CPU/call"], rows }],
    headline: [
      {
        metric: "(c) calls/s, 64 in flight, 1 client / (a) SDK direct",
        value: out["1x64"].ratios.cOverA,
        format: ratio,
        target: ">= 2x",
        pass: out["1x64"].ratios.cOverA.median >= 2,
      },
      { metric: "(c) calls/s, 64 in flight, 8 clients / (a) SDK direct", value: out["8x8"].ratios.cOverA, format: ratio },
      { metric: "(c) calls/s, 64 in flight, 1 client / (b) mcpd StdioTransport direct", value: out["1x64"].ratios.cOverB, format: ratio },
      { metric: "(d) calls/s, 64 in flight, 1 client / (a) SDK direct", value: out["1x64"].ratios.dOverA, format: ratio },
      { metric: "(e) HTTP front end calls/s, 16 in flight, 1 client / (d) `mcpd connect`", value: o16.ratios.eOverD, format: ratio },
      {
        metric: "(e) HTTP front end calls/s, 64 in flight, 1 client / (d) `mcpd connect`",
        value: out["1x64"].ratios.eOverD,
        format: ratio,
      },
      {
        metric: "(e) HTTP front end calls/s, 64 in flight, 8 clients / (d) `mcpd connect`",
        value: out["8x8"].ratios.eOverD,
        format: ratio,
      },
      {
        metric: "Daemon CPU per call, 16 in flight: (e) HTTP front end / (c) socket",
        value: o16.ratios.eCpuOverC,
        format: ratio,
      },
    ],
    frontHow: `one client process per path holding 16 calls in flight for ${durationMs / 1000} s windows (after the same ${WARMUP_CALLS[quick ? "quick" : "full"].toLocaleString("en-US")} untimed calls on every path and a 0.3 s warm-up); CPU per call is user + system time over the window (from /proc for the daemon and the bridges) divided by the calls completed in it.`,
    front: [
      row("calls/s, 16 in flight, 1 client", "rate", num, "eOverD", "higher"),
      row("p99 latency, 16 in flight", "p99", us, undefined, "lower"),
      row("client CPU per call, 16 in flight", "client", us, undefined, "lower"),
      row("`mcpd connect` bridge CPU per call, 16 in flight", "bridge", us, undefined, "lower"),
      row("daemon CPU per call, 16 in flight", "cpu", us, "eCpuOverD", "lower"),
    ],
    data: out,
  };
}
