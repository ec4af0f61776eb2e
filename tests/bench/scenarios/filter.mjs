/**
 * Scenario 8: what tool selection costs. An in-process mcpd with 200 tools (ten fast servers) and two
 * profiles; `tools/list` and `tools/call` per second through connections with a profile against one
 * without, in alternating windows of the same process and run. The headline ratios (profile / plain) are
 * the figure: about 1 means selecting costs nothing measurable (the globs are compiled once; a call
 * checks a Set and a memoized Map). Reported, never asserted.
 */
import { join } from "node:path";
import { ROOT } from "../lib/env.mjs";
import { num, range, ratio } from "../lib/format.mjs";
import { summarize } from "../lib/stats.mjs";
import { Worker } from "../lib/worker-host.mjs";

export const id = "filter";
export const title = "8. Tool selection: tools/list and tools/call with a profile vs without";
const WORKER = join(ROOT, "tests/bench/workers/filter-bench.mjs");

export async function run(ctx) {
  const { resources, quick, rounds, log } = ctx;
  const durationMs = quick ? 500 : 1_500;
  const windows = quick ? 2 : 4;
  const home = resources.tempDir("mcpdb-f-");
  const perRound = {
    listPlain: [],
    listAll: [],
    listHalf: [],
    callPlain: [],
    callHalf: [],
    listAllRatio: [],
    listHalfRatio: [],
    callRatio: [],
  };
  let listed;
  for (let r = 0; r < rounds; r++) {
    const w = new Worker(resources, WORKER, { durationMs, warmupMs: quick ? 500 : 1_000, windows, home }, { name: "filter-bench" });
    let res;
    try {
      res = await w.next("filter", 300_000);
    } finally {
      await w.stop(20_000);
    }
    listed = res.listed;
    // Each window measures the sides back to back; ratios pair them window by window, a round's figure is the median window.
    const pair = (a, b) => a.map((v, i) => b[i] / v);
    const m = (v) => summarize(v).median;
    perRound.listPlain.push(m(res.list.plain));
    perRound.listAll.push(m(res.list.all));
    perRound.listHalf.push(m(res.list.half));
    perRound.callPlain.push(m(res.call.plain));
    perRound.callHalf.push(m(res.call.half));
    perRound.listAllRatio.push(m(pair(res.list.plain, res.list.all)));
    perRound.listHalfRatio.push(m(pair(res.list.plain, res.list.half)));
    perRound.callRatio.push(m(pair(res.call.plain, res.call.half)));
    log(
      `  round ${r + 1}: tools/list ${num(perRound.listPlain.at(-1))}/s plain, ${num(perRound.listAll.at(-1))}/s profile keeping all, ` +
        `${num(perRound.listHalf.at(-1))}/s profile keeping ${listed.half}; tools/call ${num(perRound.callPlain.at(-1))}/s plain, ` +
        `${num(perRound.callHalf.at(-1))}/s with a profile`,
    );
  }
  const s = Object.fromEntries(Object.entries(perRound).map(([k, v]) => [k, summarize(v)]));
  const perSec = (v) => `${num(v)}/s`;
  return {
    id,
    title,
    description:
      `One process runs mcpd (startDaemon) with ten fast servers of 20 tools each (${listed.plain} tools in the aggregate view) and two ` +
      `profiles over the aggregate names: \`all\`, whose globs keep every tool (each one still goes through the filter, and the answer is ` +
      `as long as without a profile), and \`half\`, which keeps ${listed.half} (five \`<server>__*\` includes, one exact name, one ` +
      `\`*__tool_1?\` exclude). Aggregate-view connections on its socket, with \`mcpd/select {"profile"}\` or without, are measured in ` +
      `${windows} alternating windows of ${durationMs / 1000} s each: \`tools/list\` with 8 in flight, \`tools/call\` (\`s0__echo\`) ` +
      `with 64 in flight. A ratio is profile / no profile, paired window by window; 1 means no cost. A shorter listing is a shorter ` +
      `answer, so the \`half\` listing's ratio exceeds 1: it is shown for scale, the \`all\` one is the cost.`,
    tables: [
      {
        caption: "Requests per second through one connection (median of windows, per round)",
        columns: ["request", "no profile", "with a profile", "with / without"],
        rows: [
          [
            `tools/list, profile keeping all ${listed.all} tools`,
            range(s.listPlain, perSec),
            range(s.listAll, perSec),
            range(s.listAllRatio, ratio),
          ],
          [
            `tools/list, profile keeping ${listed.half} tools`,
            range(s.listPlain, perSec),
            range(s.listHalf, perSec),
            range(s.listHalfRatio, ratio),
          ],
          ["tools/call of a tool the profile keeps", range(s.callPlain, perSec), range(s.callHalf, perSec), range(s.callRatio, ratio)],
        ],
      },
    ],
    headline: [
      { metric: "Tool selection: tools/list rate with a profile keeping every tool / without", value: s.listAllRatio, format: ratio },
      { metric: "Tool selection: tools/call rate with a profile / without", value: s.callRatio, format: ratio },
    ],
    data: s,
  };
}
