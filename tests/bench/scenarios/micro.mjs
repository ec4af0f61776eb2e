/**
 * Scenario 7: micro-benchmarks. (A) @mcpd/protocol's JsonLineDecoder against a naive split("\n") +
 * JSON.parse baseline, in MB/s, on 1 KB and 100 KB messages. (B) The router's per-message cost: calls/s and
 * CPU per call of one process driving 64 calls in flight to the fast server, directly and through an mcpd
 * daemon running in the same process, and through the daemon once more with the server's `maxConcurrency`
 * at a quarter of the calls in flight (calls past the limit, waiting in its queue); then one more run of the
 * daemon mode under `--cpu-prof`, whose profile (saved under tests/bench/out/profiles/) is summarised here.
 */
import { mkdirSync, renameSync } from "node:fs";
import { DAEMON_NODE_FLAGS } from "@mcpd/daemon";
import { join, relative } from "node:path";
import { OUT_DIR, ROOT, ROUTER_PROFILE_WORKER } from "../lib/env.mjs";
import { newestProfile, summarizeProfile } from "../lib/profile.mjs";
import { rotate, summarize } from "../lib/stats.mjs";
import { Worker } from "../lib/worker-host.mjs";
import { num, range, ratio, us } from "../lib/format.mjs";

export const id = "micro";
export const title = "7. Micro-benchmarks: JSONL decoder and router";
const DECODER_WORKER = join(ROOT, "tests/bench/workers/decoder-bench.mjs");
const SIZES = [1024, 100 * 1024];
/** The answer size of the router's large-answer runs. */
const BIG_ANSWER = 100 * 1024;
/** The server's `maxConcurrency` in the past-the-limit run: the 64 calls in flight are 4x it, so 48 wait in its queue. */
const PAST_LIMIT = 16;

async function once(resources, script, spec, type, name, nodeArgs = []) {
  const w = new Worker(resources, script, spec, { name, nodeArgs });
  try {
    return await w.next(type, 180_000);
  } finally {
    await w.stop(20_000);
  }
}

export async function run(ctx) {
  const { resources, quick, rounds, log } = ctx;
  const minMs = quick ? 300 : 1_000;
  const durationMs = quick ? 1_000 : 2_000;
  const dec = Object.fromEntries(SIZES.map((s) => [s, { decoder: [], naive: [], ratio: [] }]));
  const router = { direct: { rate: [], cpu: [] }, daemon: { rate: [], cpu: [] }, costPerCall: [], rateRatio: [] };
  const big = { direct: { rate: [], cpu: [] }, daemon: { rate: [], cpu: [] }, costPerCall: [], costRatio: [] };
  const past = { rate: [], cpu: [], costPerCall: [], rateRatio: [] };
  const home = resources.tempDir("mcpdb-r-");
  for (let r = 0; r < rounds; r++) {
    const d = await once(resources, DECODER_WORKER, { sizes: SIZES, minMs }, "decoder", "decoder-bench");
    for (const x of d.results) {
      dec[x.size].decoder.push(x.decoderMBs);
      dec[x.size].naive.push(x.naiveMBs);
      dec[x.size].ratio.push(x.decoderMBs / x.naiveMBs);
      log(`  round ${r + 1} decoder ${x.size / 1024} KB: ${num(x.decoderMBs)} MB/s vs naive ${num(x.naiveMBs)} MB/s`);
    }
    const res = {};
    for (const mode of rotate(["direct", "daemon"], r)) {
      // Both modes run with the node flags the daemon gets from `mcpd start` (the daemon mode's daemon is in
      // the worker's process), so the difference is the daemon's cost as it runs.
      res[mode] = await once(resources, ROUTER_PROFILE_WORKER, { mode, durationMs, warmupMs: 500, home }, "router", `router-${mode}`, [
        ...DAEMON_NODE_FLAGS,
      ]);
      router[mode].rate.push(res[mode].rate);
      router[mode].cpu.push(res[mode].cpuUsPerCall);
      log(`  round ${r + 1} router ${mode}: ${num(res[mode].rate)} calls/s, ${num(res[mode].cpuUsPerCall)} µs CPU per call`);
    }
    router.costPerCall.push(res.daemon.cpuUsPerCall - res.direct.cpuUsPerCall);
    router.rateRatio.push(res.daemon.rate / res.direct.rate);
    // The same calls past the server's limit: 3 of every 4 wait in its queue. Against this round's direct run.
    const p = await once(
      resources,
      ROUTER_PROFILE_WORKER,
      { mode: "daemon", durationMs, warmupMs: 500, home, maxConcurrency: PAST_LIMIT },
      "router",
      "router-past-limit",
      [...DAEMON_NODE_FLAGS],
    );
    past.rate.push(p.rate);
    past.cpu.push(p.cpuUsPerCall);
    past.costPerCall.push(p.cpuUsPerCall - res.direct.cpuUsPerCall);
    past.rateRatio.push(p.rate / res.direct.rate);
    log(`  round ${r + 1} router daemon, maxConcurrency ${PAST_LIMIT}: ${num(p.rate)} calls/s, ${num(p.cpuUsPerCall)} µs CPU per call`);
    const bigRes = {};
    for (const mode of rotate(["direct", "daemon"], r)) {
      bigRes[mode] = await once(
        resources,
        ROUTER_PROFILE_WORKER,
        { mode, durationMs, warmupMs: 500, home, answerBytes: BIG_ANSWER },
        "router",
        `router-big-${mode}`,
        [...DAEMON_NODE_FLAGS],
      );
      big[mode].rate.push(bigRes[mode].rate);
      big[mode].cpu.push(bigRes[mode].cpuUsPerCall);
      log(
        `  round ${r + 1} router ${mode}, ${BIG_ANSWER / 1024} KB answers: ${num(bigRes[mode].rate)} calls/s, ${num(bigRes[mode].cpuUsPerCall)} µs CPU per call`,
      );
    }
    const bigCost = bigRes.daemon.cpuUsPerCall - bigRes.direct.cpuUsPerCall;
    big.costPerCall.push(bigCost);
    big.costRatio.push(bigCost / bigRes.direct.cpuUsPerCall);
  }
  // The profiled run: numbers not used (the profiler costs a little), only where the time goes.
  const profDir = join(OUT_DIR, "profiles");
  mkdirSync(profDir, { recursive: true });
  const tmpProf = resources.tempDir("mcpdb-prof-");
  const profiled = await once(
    resources,
    ROUTER_PROFILE_WORKER,
    { mode: "daemon", durationMs, warmupMs: 500, home },
    "router",
    "router-profiled",
    [...DAEMON_NODE_FLAGS, "--cpu-prof", "--cpu-prof-dir", tmpProf],
  );
  const profFile = join(profDir, "router-daemon.cpuprofile");
  renameSync(newestProfile(tmpProf), profFile);
  const prof = summarizeProfile(profFile, 12, profiled.windowUs);
  if (!(prof.totalMs > durationMs / 4))
    throw new Error(`the profile holds only ${prof.totalMs} ms of busy samples inside the ${durationMs} ms window`);
  const ds = Object.fromEntries(SIZES.map((s) => [s, Object.fromEntries(Object.entries(dec[s]).map(([k, v]) => [k, summarize(v)]))]));
  const rs = {
    direct: { rate: summarize(router.direct.rate), cpu: summarize(router.direct.cpu) },
    daemon: { rate: summarize(router.daemon.rate), cpu: summarize(router.daemon.cpu) },
    costPerCall: summarize(router.costPerCall),
    rateRatio: summarize(router.rateRatio),
  };
  const ps = {
    rate: summarize(past.rate),
    cpu: summarize(past.cpu),
    costPerCall: summarize(past.costPerCall),
    rateRatio: summarize(past.rateRatio),
  };
  const bs = {
    direct: { rate: summarize(big.direct.rate), cpu: summarize(big.direct.cpu) },
    daemon: { rate: summarize(big.daemon.rate), cpu: summarize(big.daemon.cpu) },
    costPerCall: summarize(big.costPerCall),
    costRatio: summarize(big.costRatio),
  };
  const pct = (v) => `${v.toFixed(1)}%`;
  return {
    id,
    title,
    description: `(A) A 16 MiB stream of JSON-RPC responses of the given size in 64 KiB chunks (each a buffer of its own, as Node delivers reads), decoded repeatedly for at least ${minMs} ms per measurement in a fresh process; the baseline uses StringDecoder, \`+=\`, split("\\n") and JSON.parse. (B) One process, a minimal pipelined JSONL client (no SDK) with 64 \`tools/call\` in flight for ${durationMs / 1000} s: \`direct\` to the fast server's stdio; \`daemon\` through an mcpd started in the same process (Unix socket, transparent view), so the process's CPU per call includes the daemon's work; both run with the daemon's node flags (\`${DAEMON_NODE_FLAGS.join(" ")}\`, as \`mcpd start\` gives them). A call is two messages through the router (request and response). The daemon mode once more with the server's \`maxConcurrency\` at ${PAST_LIMIT}, so 48 of the 64 calls wait in its queue at any time (against the same round's direct run). The same again with ${BIG_ANSWER / 1024} KB answers (the fast server's \`big\` tool: source-code-like lines, with quotes and newlines JSON escapes), where the daemon passes each answer's result on as the server wrote it instead of encoding it again.`,
    tables: [
      {
        caption: "(A) JSONL decoder",
        columns: ["message size", "JsonLineDecoder", "naive split + JSON.parse", "decoder / naive"],
        rows: SIZES.map((s) => [
          `${s / 1024} KB`,
          range(ds[s].decoder, (v) => `${num(v)} MB/s`),
          range(ds[s].naive, (v) => `${num(v)} MB/s`),
          range(ds[s].ratio, ratio),
        ]),
      },
      {
        caption: "(B) Router cost (one process, 64 in flight)",
        columns: ["mode", "calls/s", "process CPU per call"],
        rows: [
          ["direct to the server's stdio", range(rs.direct.rate), range(rs.direct.cpu, us)],
          ["through an in-process mcpd", range(rs.daemon.rate), range(rs.daemon.cpu, us)],
          ["daemon's cost per call (difference)", "", range(rs.costPerCall, us)],
          [
            "daemon's cost per message (half of it)",
            "",
            range({ median: rs.costPerCall.median / 2, min: rs.costPerCall.min / 2, max: rs.costPerCall.max / 2 }, us),
          ],
          [`through an in-process mcpd, server's maxConcurrency ${PAST_LIMIT} (64 in flight: 4x it)`, range(ps.rate), range(ps.cpu, us)],
          [`daemon's cost per call past the limit (difference to direct)`, "", range(ps.costPerCall, us)],
        ],
      },
      {
        caption: `(B) Router cost with ${BIG_ANSWER / 1024} KB answers (one process, 64 in flight)`,
        columns: ["mode", "calls/s", "process CPU per call"],
        rows: [
          ["direct to the server's stdio (the client parses each answer)", range(bs.direct.rate), range(bs.direct.cpu, us)],
          ["through an in-process mcpd", range(bs.daemon.rate), range(bs.daemon.cpu, us)],
          ["daemon's cost per call (difference)", "", range(bs.costPerCall, us)],
          ["daemon's cost / the client's own cost", "", range(bs.costRatio, ratio)],
        ],
      },
      {
        caption: `(B) Profile of the in-process daemon run, inside the measured window: top functions by self time, in % of busy time (${relative(ROOT, profFile)}; ${num(prof.totalMs)} ms busy, ${num(prof.idleMs)} ms idle)`,
        columns: ["self", "function", "where"],
        rows: prof.top.map((t) => [pct(t.selfPct), `\`${t.name}\``, `\`${t.where}\``]),
      },
      {
        caption:
          "(B) Same profile, each sample charged to the nearest mcpd function on its stack (what it calls, native writes and library code included, minus deeper mcpd functions)",
        columns: ["share", "function", "where"],
        rows: prof.topOwn.map((t) => [pct(t.ownPct), `\`${t.name}\``, `\`${t.where}\``]),
      },
    ],
    headline: [
      { metric: "JSONL decoder / naive split, 1 KB messages (MB/s)", value: ds[1024].ratio, format: ratio },
      { metric: "JSONL decoder / naive split, 100 KB messages (MB/s)", value: ds[102400].ratio, format: ratio },
      { metric: "Router: calls/s through in-process mcpd / direct (64 in flight)", value: rs.rateRatio, format: ratio },
      {
        metric: "Router: daemon CPU per relayed call",
        value: rs.costPerCall,
        format: us,
        target: "<= 12 µs",
        pass: rs.costPerCall.median <= 12,
      },
      {
        metric: `Router, 64 in flight at 4x the server's maxConcurrency (${PAST_LIMIT}): daemon CPU per relayed call`,
        value: ps.costPerCall,
        format: us,
      },
      { metric: `Router, 64 in flight at 4x the server's maxConcurrency: calls/s / direct`, value: ps.rateRatio, format: ratio },
      { metric: `Router, ${BIG_ANSWER / 1024} KB answers: daemon CPU per relayed call`, value: bs.costPerCall, format: us },
      {
        metric: `Router, ${BIG_ANSWER / 1024} KB answers: daemon CPU per relayed call / the client's own`,
        value: bs.costRatio,
        format: ratio,
      },
    ],
    profile: prof,
    data: { decoder: ds, router: rs, pastLimit: ps, bigAnswers: bs },
  };
}
