/**
 * Scenario 1: per-call latency. One client makes sequential tiny `tools/call echo` calls to one fast server
 * over each path (a: SDK direct, b: mcpd StdioTransport direct, c: @mcpd/client via mcpd, d: SDK via
 * `mcpd connect`, e: SDK over Streamable HTTP to the daemon's HTTP front end), plus (b) through a zero-work
 * pass-through process: the floor of one extra process hop on this machine, which any relay pays. Reports
 * p50/p99 and calls/s per path, and the ratios between paths in each round.
 */
import { CLIENT_WORKER } from "../lib/env.mjs";
import { fastServer, startDaemon } from "../lib/daemon.mjs";
import { PATH_LABELS } from "../lib/call-paths.mjs";
import { Histogram } from "../lib/histogram.mjs";
import { rotate, summarize } from "../lib/stats.mjs";
import { checkWorkers, startWorker } from "../lib/worker-host.mjs";
import { range, ratio, us, num } from "../lib/format.mjs";
import { percentilePoints } from "../lib/svg.mjs";

export const id = "latency";
export const title = "1. Per-call latency (sequential, one client)";
const PATHS = ["a", "b", "hop", "c", "d", "d-st", "e", "e-ht"];

export async function run(ctx) {
  const { resources, quick, rounds, log } = ctx;
  const calls = quick ? 1_000 : 5_000;
  const warmup = quick ? 200 : 1_000;
  const daemon = await startDaemon(resources, { fast: fastServer("fast") });
  const workers = {};
  try {
    const server = fastServer("direct");
    const front = await daemon.httpFront();
    for (const p of PATHS) {
      workers[p] = await startWorker(
        resources,
        CLIENT_WORKER,
        { path: p, server, serverName: "fast", socketPath: daemon.socketPath, url: front.serverUrl("fast"), tokenFile: front.tokenFile },
        { name: `latency-${p}` },
      );
    }
    const per = Object.fromEntries(PATHS.map((p) => [p, { p50: [], p99: [], rate: [], hist: new Histogram() }]));
    const ratios = {
      cOverB: [],
      cOverA: [],
      dOverA: [],
      dOverC: [],
      dstOverC: [],
      dOverFloor: [],
      hopOverB: [],
      cOverHop: [],
      eOverD: [],
      eOverDp99: [],
      eOverC: [],
    };
    for (let r = 0; r < rounds; r++) {
      const p50 = {};
      const p99 = {};
      for (const p of rotate(PATHS, r)) {
        const res = await workers[p].request({ cmd: "latency", calls, warmup }, "latency");
        const h = Histogram.fromJSON(res.hist);
        per[p].p50.push(h.quantile(0.5));
        per[p].p99.push(h.quantile(0.99));
        per[p].rate.push((res.calls / res.elapsedMs) * 1000);
        per[p].hist.merge(h);
        p50[p] = h.quantile(0.5);
        p99[p] = h.quantile(0.99);
        log(`  round ${r + 1} ${p}: p50 ${num(p50[p])} µs, p99 ${num(h.quantile(0.99))} µs`);
      }
      ratios.cOverB.push(p50.c / p50.b);
      ratios.cOverA.push(p50.c / p50.a);
      ratios.dOverA.push(p50.d / p50.a);
      ratios.dOverC.push(p50.d / p50.c);
      ratios.dstOverC.push(p50["d-st"] / p50.c);
      // (d)'s floor in this round: (c) plus what one extra process hop and the SDK client's own cost add to
      // (b), each measured on its own path ((hop) - (b), (a) - (b)).
      ratios.dOverFloor.push(p50.d / (p50.c + (p50.hop - p50.b) + (p50.a - p50.b)));
      ratios.hopOverB.push(p50.hop / p50.b);
      ratios.cOverHop.push(p50.c / p50.hop);
      ratios.eOverD.push(p50.e / p50.d);
      ratios.eOverDp99.push(p99.e / p99.d);
      ratios.eOverC.push(p50.e / p50.c);
    }
    checkWorkers(Object.values(workers));
    const s = Object.fromEntries(
      PATHS.map((p) => [p, { p50: summarize(per[p].p50), p99: summarize(per[p].p99), rate: summarize(per[p].rate) }]),
    );
    const r = Object.fromEntries(Object.entries(ratios).map(([k, v]) => [k, summarize(v)]));
    return {
      id,
      title,
      description: `${calls.toLocaleString("en-US")} sequential \`tools/call\` per path and round (after ${warmup} warm-up calls), against the benchmark's fast server (tests/bench/fixtures/fast-server.mjs). Paths (a) and (b) spawn their own copy of the server; (c), (d) and (e) share the daemon's. (e) is the official SDK's \`Client\` on its \`StreamableHTTPClientTransport\` to the daemon's own HTTP front end (\`/servers/fast/mcp\`, the same one-server view \`mcpd connect fast\` gives (d)), with the bearer token in \`requestInit\` headers; the daemon answers each \`tools/call\` on an SSE stream. The reference row below it drives the same endpoint with mcpd's own \`HttpTransport\` (a client that costs less CPU per call): what the front end gives a lighter client. The \`mcpd connect\` reference row drives the same bridge as (d) with mcpd's own \`StdioTransport\`: against (c) it is the bridge's hop alone, against (d) the SDK client's own cost behind it. The pass-through row is (b) with tests/bench/fixtures/pass-through.mjs between client and server, a process that copies bytes and does nothing else: what one extra process hop costs on this machine, the floor under any relay's latency.`,
      tables: [
        {
          columns: ["path", "p50", "p99", "calls/s", "p50 vs (b)"],
          rows: PATHS.map((p) => [
            PATH_LABELS[p],
            range(s[p].p50, us),
            range(s[p].p99, us),
            range(s[p].rate),
            p === "b" ? "1x" : ratio(s[p].p50.median / s.b.p50.median),
          ]),
        },
      ],
      headline: [
        { metric: "(c) p50 latency / (b) p50 latency", value: r.cOverB, format: ratio, target: "<= 1.5x", pass: r.cOverB.median <= 1.5 },
        { metric: "Floor: (b) through a zero-work pass-through process / (b), p50", value: r.hopOverB, format: ratio },
        { metric: "(c) p50 latency / that floor", value: r.cOverHop, format: ratio },
        { metric: "(c) p50 latency / (a) SDK direct p50", value: r.cOverA, format: ratio },
        { metric: "(d) p50 latency / (a) SDK direct p50", value: r.dOverA, format: ratio },
        {
          metric: "(d) `mcpd connect` p50 latency / (c) @mcpd/client p50",
          value: r.dOverC,
          format: ratio,
          target: "<= 1.5x",
          pass: r.dOverC.median <= 1.5,
        },
        { metric: "(d) with mcpd's StdioTransport as the client / (c), p50", value: r.dstOverC, format: ratio },
        {
          metric: "(d) `mcpd connect` p50 / its floor, (c) + one hop + the SDK's own cost",
          value: r.dOverFloor,
          format: ratio,
        },
        { metric: "(e) HTTP front end p50 latency / (d) `mcpd connect` p50", value: r.eOverD, format: ratio },
        { metric: "(e) HTTP front end p99 latency / (d) `mcpd connect` p99", value: r.eOverDp99, format: ratio },
        { metric: "(e) HTTP front end p50 latency / (c) @mcpd/client p50", value: r.eOverC, format: ratio },
      ],
      frontHow: `${calls.toLocaleString("en-US")} sequential calls per path and round after ${warmup.toLocaleString("en-US")} warm-up calls, one client process per path, (c), (d) and (e) through one daemon with one server; (e) on \`/servers/fast/mcp\`.`,
      front: ["p50", "p99"].map((q) => ({
        figure: `${q} latency, sequential calls`,
        format: us,
        better: "lower",
        values: Object.fromEntries(["a", "c", "d", "e", "e-ht"].map((p) => [p, s[p][q]])),
        ratio: q === "p50" ? r.eOverD : r.eOverDp99,
      })),
      chart: {
        kind: "latency-cdf",
        series: PATHS.map((p) => ({
          label: PATH_LABELS[p],
          points: percentilePoints().map((q) => [q, per[p].hist.quantile(q)]),
          p50: per[p].hist.quantile(0.5),
          p99: per[p].hist.quantile(0.99),
        })),
        calls: rounds * calls,
      },
      data: { summary: s, ratios: r },
    };
  } finally {
    for (const w of Object.values(workers)) await w.stop().catch(() => {});
    await daemon.stop();
  }
}
