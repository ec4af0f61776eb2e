#!/usr/bin/env node
/**
 * Tool search's bench (its own entry point, never part of `npm test`; run `npm run build` first):
 *   node tests/bench/tool-search.mjs [--write]
 * Prints, for MiniSearch (the daemon's index) and Orama (the alternative measured): recall@1 and recall@5
 * over the quality tasks (tests/fixtures/tool-search-tasks/quality.json) against the recorded catalog, and
 * against it padded to 1,000 tools with generated ones; the p50/p99 of one search at 1,000 tools; the time
 * to build the index of 1,000 tools; and the tokens (js-tiktoken, o200k_base, bundled ranks) of tools/list
 * in search mode against the full catalog. `--tuning`: the tuning set's recall instead (what weights were
 * tuned on). `--write`: also rewrites the tool-search section of docs/benchmarks.md.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Tiktoken } from "js-tiktoken/lite";
import o200k from "js-tiktoken/ranks/o200k_base";
import { ROOT } from "./lib/env.mjs";
import { padded, realCatalog, tasks } from "./tool-search/catalog.mjs";
import { oramaRanker } from "./tool-search/orama-ranker.mjs";

const dist = (p) => join(ROOT, "daemon/dist/router/tool-search", p);
const { ToolIndex, FIELD_WEIGHTS } = await import(dist("tool-index.js"));
const { toolDocument } = await import(dist("tool-words.js"));
const { searchModeTools } = await import(dist("search-tools.js"));

const args = new Set(process.argv.slice(2));
const SET = args.has("--tuning") ? "tuning" : "quality";
const SIZE = 1000;
const LIMIT = 5;

function recall(ranker, taskList) {
  let at1 = 0;
  let at5 = 0;
  const misses = [];
  for (const t of taskList) {
    const hits = ranker.search(t.task, { limit: LIMIT, server: t.server }).map((h) => h.exposed);
    if (hits[0] === t.tool) at1++;
    if (hits.includes(t.tool)) at5++;
    else misses.push(`${t.task} -> ${t.tool} (got ${hits.slice(0, 3).join(", ")})`);
  }
  return { at1: at1 / taskList.length, at5: at5 / taskList.length, misses };
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Every task's query, `rounds` times over: per-search times in ms, sorted. */
function latencies(ranker, taskList, rounds) {
  const times = [];
  for (let r = 0; r < rounds; r++) {
    for (const t of taskList) {
      const start = performance.now();
      ranker.search(t.task, { limit: LIMIT, server: t.server });
      times.push(performance.now() - start);
    }
  }
  return times.sort((a, b) => a - b);
}

function miniRanker(entries) {
  const index = new ToolIndex(() => entries);
  index.sync();
  return index;
}

/** Median time of building the index of `entries` from scratch, in ms, over `runs` builds. */
async function buildTime(make, entries, runs) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await make(entries);
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)];
}

const real = realCatalog();
const big = padded(real, SIZE);
const taskList = tasks(SET);
const orama = (entries) => oramaRanker(entries, toolDocument, FIELD_WEIGHTS);

const rows = [];
for (const [name, make] of [
  ["MiniSearch 7.2.0", miniRanker],
  ["Orama 3.1.18", orama],
]) {
  await make(big); // warm up the library's code
  const small = recall(await make(real), taskList);
  const ranker = await make(big);
  const large = recall(ranker, taskList);
  latencies(ranker, taskList, 5);
  const times = latencies(ranker, taskList, 40);
  const build = await buildTime(make, big, 21);
  rows.push({ name, small, large, p50: percentile(times, 50), p99: percentile(times, 99), build });
}

const enc = new Tiktoken(o200k);
const tokens = (tools) => enc.encode(JSON.stringify({ tools })).length;
const full = tokens(real.map((e) => ({ ...e.item, name: e.exposed })));
const servers = [...new Set(real.map((e) => e.server))];
const searchOnly = tokens(searchModeTools(servers, false));
const withCall = tokens(searchModeTools(servers, true));

const pct = (x) => x.toFixed(3);
const ms = (x) => x.toFixed(3);
console.log(
  `tool search, ${SET} set (${taskList.length} tasks), catalog ${real.length} real tools of ${servers.length} servers, padded to ${SIZE}`,
);
console.log("library           | recall@1 | recall@5 | recall@1 (1k) | recall@5 (1k) | p50 ms (1k) | p99 ms (1k) | build ms (1k)");
for (const r of rows) {
  console.log(
    `${r.name.padEnd(17)} | ${pct(r.small.at1).padStart(8)} | ${pct(r.small.at5).padStart(8)} | ${pct(r.large.at1).padStart(13)} | ${pct(r.large.at5).padStart(13)} | ${ms(r.p50).padStart(11)} | ${ms(r.p99).padStart(11)} | ${ms(r.build).padStart(13)}`,
  );
}
console.log(
  `tokens of tools/list (o200k_base): full catalog ${full}; search mode ${searchOnly} (search_tools), ${withCall} (with call_tool)`,
);
if (args.has("--misses")) for (const m of rows[0].small.misses) console.log(`  miss: ${m}`);

if (args.has("--write")) {
  const file = join(ROOT, "docs/benchmarks.md");
  const text = readFileSync(file, "utf8");
  const table = [
    `Measured by \`node tests/bench/tool-search.mjs --write\` on ${new Date().toISOString().slice(0, 10)} (${SET} set: ${taskList.length} tasks; catalog: ${real.length} real tools of ${servers.length} servers, padded to ${SIZE} with generated tools for the "1k" columns; limit ${LIMIT}; load average ${loadavg()[0].toFixed(1)} on this 2-core machine, shared: the times are upper bounds).`,
    "",
    "| library | recall@1 | recall@5 | recall@1 at 1k | recall@5 at 1k | p50 of a search at 1k (ms) | p99 at 1k (ms) | index build, 1k tools (ms) |",
    "|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.name} | ${pct(r.small.at1)} | ${pct(r.small.at5)} | ${pct(r.large.at1)} | ${pct(r.large.at5)} | ${ms(r.p50)} | ${ms(r.p99)} | ${ms(r.build)} |`,
    ),
    "",
    `Tokens of \`tools/list\` (js-tiktoken, o200k_base): the full catalog ${full}; in search mode ${searchOnly} (\`search_tools\` alone) or ${withCall} (with \`call_tool\`): ${(full / searchOnly).toFixed(0)}x and ${(full / withCall).toFixed(0)}x fewer.`,
  ].join("\n");
  const re = /(<!-- tool-search:start -->\n)[\s\S]*?(<!-- tool-search:end -->)/;
  if (!re.test(text)) throw new Error("docs/benchmarks.md has no tool-search section");
  writeFileSync(file, text.replace(re, `$1${table}\n$2`));
  console.log("wrote docs/benchmarks.md (tool-search section)");
}
