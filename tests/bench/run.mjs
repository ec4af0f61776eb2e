#!/usr/bin/env node
/**
 * mcpd benchmark suite: `npm run bench` (builds first). Runs every scenario in tests/bench/scenarios/,
 * prints one table of ratios with PASS/MISS against the targets, and writes docs/benchmarks.md plus
 * docs/benchmarks-latency.svg (a full run of every scenario) or tests/bench/out/ (--quick, --only).
 *
 * Flags
 *   --quick          shorter windows and fewer calls (a smoke run, under 2 minutes)
 *   --rounds N       rounds per scenario (default 3; --quick: 1)
 *   --only a,b       run only these scenario ids (latency throughput http startup footprint scale micro filter peers dashboard eras;
 *                    peers installs mcp-proxy, supergateway and mcp-hub into tests/bench/.peers/ on first use)
 *   --out DIR        where the report goes (default: docs/ for a full run of everything, else tests/bench/out/)
 *
 * Exit code 0 only when every scenario completed; any failed call or error in a scenario stops the run
 * with exit code 1 and no report. Every process started is ended and every temp dir removed, also on
 * failure and on Ctrl-C (SIGINT/SIGTERM: exit 130/143).
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { OUT_DIR, ROOT } from "./lib/env.mjs";
import { machineInfo } from "./lib/machine.mjs";
import { consoleTable, markdown, readPrevious } from "./lib/report.mjs";
import { Resources } from "./lib/resources.mjs";
import { latencySvg } from "./lib/svg.mjs";
import * as latency from "./scenarios/latency.mjs";
import * as throughput from "./scenarios/throughput.mjs";
import * as http from "./scenarios/http.mjs";
import * as startup from "./scenarios/startup.mjs";
import * as footprint from "./scenarios/footprint.mjs";
import * as scale from "./scenarios/scale.mjs";
import * as micro from "./scenarios/micro.mjs";
import * as filter from "./scenarios/filter.mjs";
import * as peers from "./scenarios/peers.mjs";
import * as dashboard from "./scenarios/dashboard.mjs";
import * as eras from "./scenarios/eras.mjs";

const SCENARIOS = [latency, throughput, http, startup, footprint, scale, micro, filter, peers, dashboard, eras];

function usage(message) {
  process.stderr.write(
    `bench: ${message}\nusage: node tests/bench/run.mjs [--quick] [--rounds N] [--only ${SCENARIOS.map((s) => s.id).join(",")}] [--out DIR]\n`,
  );
  process.exit(2);
}

let args;
try {
  args = parseArgs({
    options: { quick: { type: "boolean", default: false }, rounds: { type: "string" }, only: { type: "string" }, out: { type: "string" } },
    strict: true,
  }).values;
} catch (err) {
  usage(err.message);
}
const quick = args.quick;
const rounds = args.rounds === undefined ? (quick ? 1 : 3) : Number(args.rounds);
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 50)
  usage(`--rounds wants an integer from 1 to 50, got ${JSON.stringify(args.rounds)}`);
let selected = SCENARIOS;
if (args.only !== undefined) {
  const ids = args.only
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = ids.filter((i) => !SCENARIOS.some((s) => s.id === i));
  if (unknown.length || ids.length === 0) usage(`--only: unknown scenario ${unknown.join(", ") || "(none given)"}`);
  selected = SCENARIOS.filter((s) => ids.includes(s.id));
}
const complete = selected.length === SCENARIOS.length && !quick;
const outDir = args.out ?? (complete ? join(ROOT, "docs") : OUT_DIR);
for (const built of [
  "protocol/dist/index.js",
  "transports/dist/index.js",
  "client-sdk/dist/index.js",
  "daemon/dist/cli/main.js",
  "daemon/dist/cli-bundle/main.cjs",
]) {
  if (!existsSync(join(ROOT, built))) usage(`${built} is missing: build first (npm run build, or use npm run bench)`);
}

const resources = new Resources();
const log = (line) => process.stdout.write(`${line}\n`);
let exiting = false;
for (const [signal, code] of [
  ["SIGINT", 130],
  ["SIGTERM", 143],
]) {
  process.on(signal, () => {
    if (exiting) return;
    exiting = true;
    log(`\nbench: ${signal}: stopping every process the run started...`);
    // process.exit ends the run whatever the cleanup's outcome: there is no one left to report it to.
    void resources.cleanup().finally(() => process.exit(code));
  });
}
// Last resort if something calls process.exit() with processes still registered.
process.on("exit", () => resources.killAllSync());

async function main() {
  const machine = machineInfo();
  const t0 = Date.now();
  log(`mcpd benchmarks: ${quick ? "quick" : "full"} mode, ${rounds} rounds, ${selected.map((s) => s.id).join(" ")}`);
  log(`${machine.cpu} x ${machine.cores}, Node ${machine.node}, load average ${machine.loadAvg.map((v) => v.toFixed(2)).join(" ")}\n`);
  const results = [];
  for (const s of selected) {
    const ts = Date.now();
    log(`== ${s.title}`);
    try {
      const result = await s.run({ resources, quick, rounds, log });
      result.durationMs = Date.now() - ts;
      results.push(result);
    } catch (err) {
      throw new Error(`scenario "${s.id}" failed: ${err?.stack ?? err}`);
    }
    const left = resources.leftovers();
    resources.noteTrees();
    log(`   (${((Date.now() - ts) / 1000).toFixed(1)} s${left.length ? `; still running: ${left.join(" ")}` : ""})\n`);
  }
  await resources.cleanup();
  const left = resources.leftovers();
  if (left.length) throw new Error(`processes the run started are still alive after cleanup: ${left.join(" ")}`);
  const elapsedMs = Date.now() - t0;
  log(consoleTable(results));
  log(`\n${selected.length} scenarios in ${(elapsedMs / 1000).toFixed(1)} s`);

  mkdirSync(outDir, { recursive: true });
  const mdFile = join(outDir, "benchmarks.md");
  const svgName = "benchmarks-latency.svg";
  const lat = results.find((r) => r.chart);
  const meta = {
    machine,
    mode: quick ? "quick" : "full",
    rounds,
    elapsedMs,
    loadAvgEnd: os.loadavg(),
    command: `npm run bench${process.argv.slice(2).length ? ` -- ${process.argv.slice(2).join(" ")}` : ""}`,
    svgName: lat ? svgName : undefined,
  };
  if (lat) {
    const subtitle = `${lat.chart.calls.toLocaleString("en-US")} sequential tools/call per path; ${machine.cpu} x ${machine.cores}, Node ${machine.node}, ${machine.date.slice(0, 10)}`;
    writeFileSync(join(outDir, svgName), latencySvg(lat.chart.series, "mcpd: latency per call by path (sequential, one client)", subtitle));
  }
  writeFileSync(mdFile, markdown(results, meta, readPrevious(join(ROOT, "docs/benchmarks.md"))));
  mkdirSync(OUT_DIR, { recursive: true });
  writeFileSync(
    join(OUT_DIR, "results.json"),
    JSON.stringify({ meta, results }, (_key, v) => (typeof v === "function" ? undefined : v), 2),
  );
  log(`report: ${relative(ROOT, mdFile)}${lat ? `, ${relative(ROOT, join(outDir, svgName))}` : ""}`);
}

main().then(
  () => process.exit(0),
  async (err) => {
    process.stderr.write(`\nbench FAILED: ${err?.stack ?? err}\n`);
    if (!exiting) await resources.cleanup();
    process.exit(1);
  },
);
