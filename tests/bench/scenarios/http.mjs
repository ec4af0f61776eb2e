/**
 * Scenario 3: HTTP upstream. mcpd's HttpTransport against the official SDK `Client` over
 * StreamableHTTPClientTransport, both talking to the same SDK McpServer (StreamableHTTPServerTransport in a
 * child process on 127.0.0.1), once with JSON replies (enableJsonResponse) and once with SSE replies;
 * sequential calls and 64 in flight.
 */
import { CLIENT_WORKER } from "../lib/env.mjs";
import { PATH_LABELS, hasHttpTransport } from "../lib/call-paths.mjs";
import { Histogram } from "../lib/histogram.mjs";
import { startHttpServer } from "../lib/http-server-host.mjs";
import { rotate, summarize } from "../lib/stats.mjs";
import { checkWorkers, startWorker } from "../lib/worker-host.mjs";
import { num, range, ratio, us } from "../lib/format.mjs";
import { loadWindow } from "./throughput.mjs";

export const id = "http";
export const title = "3. HTTP upstream (Streamable HTTP)";
const PATHS = ["http-sdk", "http-mcpd"];

export async function run(ctx) {
  const { resources, quick, rounds, log } = ctx;
  if (!(await hasHttpTransport())) throw new Error("@mcpd/transports does not export HttpTransport: scenario 3 cannot run");
  const calls = quick ? 150 : 500;
  const warmup = quick ? 50 : 200;
  const durationMs = quick ? 700 : 2_000;
  const out = {};
  for (const mode of ["json", "sse"]) {
    const server = await startHttpServer(resources, mode);
    const workers = {};
    try {
      for (const p of PATHS)
        workers[p] = await startWorker(resources, CLIENT_WORKER, { path: p, url: server.url }, { name: `http-${mode}-${p}` });
      const per = Object.fromEntries(PATHS.map((p) => [p, { seqRate: [], p50: [], rate: [], p99: [], clientCpu: [], serverCpu: [] }]));
      const ratios = { seq: [], load: [], clientCpu: [] };
      for (let r = 0; r < rounds; r++) {
        const seq = {};
        const load = {};
        for (const p of rotate(PATHS, r)) {
          const l = await workers[p].request({ cmd: "latency", calls, warmup }, "latency");
          const h = Histogram.fromJSON(l.hist);
          seq[p] = (l.calls / l.elapsedMs) * 1000;
          per[p].seqRate.push(seq[p]);
          per[p].p50.push(h.quantile(0.5));
          const w = await loadWindow([workers[p]], { inFlight: 64, durationMs, watch: { server: server.pid } });
          load[p] = w.rate;
          per[p].rate.push(w.rate);
          per[p].p99.push(w.hist.quantile(0.99));
          per[p].clientCpu.push(w.clientCpuUsPerCall);
          per[p].serverCpu.push(w.cpuUsPerCall.server);
          log(
            `  ${mode} round ${r + 1} ${p}: sequential ${num(seq[p])} calls/s (p50 ${num(h.quantile(0.5))} µs), 64 in flight ${num(w.rate)} calls/s, CPU/call client ${num(w.clientCpuUsPerCall)} µs, server ${num(w.cpuUsPerCall.server)} µs`,
          );
        }
        ratios.seq.push(seq["http-mcpd"] / seq["http-sdk"]);
        ratios.load.push(load["http-mcpd"] / load["http-sdk"]);
        ratios.clientCpu.push(per["http-sdk"].clientCpu.at(-1) / per["http-mcpd"].clientCpu.at(-1));
      }
      checkWorkers(Object.values(workers));
      out[mode] = {
        per: Object.fromEntries(PATHS.map((p) => [p, Object.fromEntries(Object.entries(per[p]).map(([k, v]) => [k, summarize(v)]))])),
        ratios: { seq: summarize(ratios.seq), load: summarize(ratios.load), clientCpu: summarize(ratios.clientCpu) },
      };
    } finally {
      await Promise.all(Object.values(workers).map((w) => w.stop().catch(() => {})));
      await server.stop();
    }
  }
  const rows = [];
  for (const mode of ["json", "sse"]) {
    for (const p of PATHS) {
      const s = out[mode].per[p];
      rows.push([
        mode === "json" ? "JSON replies" : "SSE replies",
        PATH_LABELS[p],
        range(s.seqRate),
        range(s.p50, us),
        range(s.rate),
        range(s.p99, us),
        range(s.clientCpu, us),
        range(s.serverCpu, us),
      ]);
    }
  }
  const mk = (mode, kind, label, targeted) => ({
    metric: `HTTP ${label}, ${mode === "json" ? "JSON" : "SSE"} replies: HttpTransport calls/s / SDK`,
    value: out[mode].ratios[kind],
    format: ratio,
    ...(targeted ? { target: ">= 5x", pass: out[mode].ratios[kind].median >= 5 } : {}),
  });
  return {
    id,
    title,
    description: `The same server process serves both clients in turn. Sequential: ${calls.toLocaleString("en-US")} calls after ${warmup} warm-up calls. 64 in flight: ${durationMs / 1000} s windows as in scenario 2. The SDK path is the SDK's \`Client\` on its \`StreamableHTTPClientTransport\` (how the SDK is used); the mcpd path is \`HttpTransport.request\` (how the daemon uses it). CPU per call is measured over the 64-in-flight window: the client process's own, and the server process's (from /proc).`,
    tables: [
      {
        columns: [
          "server replies",
          "client",
          "sequential calls/s",
          "sequential p50",
          "64 in flight calls/s",
          "64 in flight p99",
          "client CPU/call",
          "server CPU/call",
        ],
        rows,
      },
    ],
    headline: [
      mk("json", "load", "64 in flight", true),
      mk("sse", "load", "64 in flight", true),
      mk("json", "seq", "sequential", false),
      mk("sse", "seq", "sequential", false),
      ...["json", "sse"].map((mode) => ({
        metric: `HTTP, ${mode === "json" ? "JSON" : "SSE"} replies: client CPU per call, SDK / HttpTransport (64 in flight)`,
        value: out[mode].ratios.clientCpu,
        format: ratio,
      })),
    ],
    data: out,
  };
}
