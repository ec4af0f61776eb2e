/**
 * The report: one console table of every headline ratio (with PASS/MISS against the targets), and
 * docs/benchmarks.md, regenerated from the results while keeping the hand-written sections between
 * `<!-- intro:start -->`/`<!-- intro:end -->`, `<!-- http-front:start -->`/`<!-- http-front:end -->` and
 * `<!-- analysis:start -->`/`<!-- analysis:end -->`, and the tool-search section (`<!-- tool-search:start -->`/`end`),
 * which tests/bench/tool-search.mjs writes.
 *
 * Scenarios may return `front`: rows comparing the daemon's HTTP front end with the other ways in
 * (`{figure, format, better: "lower"|"higher", values: {a, c, d, e, "e-ht"}, ratio}`, each value a summary over
 * rounds, `ratio` the (e)/(d) ratio taken inside each round) and `frontHow`, one sentence on how it measured them;
 * they are gathered into one section.
 */
import { existsSync, readFileSync } from "node:fs";
import { num } from "./format.mjs";

const DEFAULT_INTRO = `mcpd is worth running only if sharing servers through it costs almost nothing per call and saves
start-up time, processes and memory. These benchmarks measure that against the alternatives an agent has:
spawning servers itself with the official MCP SDK, or with mcpd's own transports.`;
const DEFAULT_ANALYSIS = `(Nothing written yet: what the profiles showed goes here, by hand. The harness keeps this section.)`;
const DEFAULT_TOOL_SEARCH = `(Not measured yet: \`node tests/bench/tool-search.mjs --write\` writes this section.)`;
const DEFAULT_FRONT = `(Nothing written yet: what the figures mean against \`mcpd connect\` goes here, by hand. The harness keeps this section.)`;
/** The columns of the HTTP front-end section: the ways an agent reaches a server. */
const FRONT_PATHS = [
  ["a", "(a) SDK, direct stdio"],
  ["c", "(c) @mcpd/client, socket"],
  ["d", "(d) SDK via `mcpd connect`"],
  ["e", "(e) SDK via the HTTP front end"],
  ["e-ht", "(e) with mcpd's HttpTransport as the client (reference)"],
];

/** The text between `<!-- name:start -->` and `<!-- name:end -->` in `text`, or undefined. */
export function section(text, name) {
  const m = new RegExp(`<!-- ${name}:start -->\\n([\\s\\S]*?)\\n?<!-- ${name}:end -->`).exec(text ?? "");
  return m ? m[1].trimEnd() : undefined;
}

function verdict(h) {
  if (h.pass === undefined) return "";
  return h.pass ? "PASS" : "MISS";
}

/** Every headline row of every scenario, in order. */
function headlines(results) {
  return results.flatMap((r) => r.headline.map((h) => ({ ...h, scenario: r.title })));
}

function summaryText(v, f = num) {
  return v.values.length > 1 ? `${f(v.median)} (${f(v.min)}–${f(v.max)})` : f(v.median);
}

function valueText(h) {
  return summaryText(h.value, h.format ?? num);
}

/** The HTTP front-end section: every scenario's `front` rows in one table, then the hand-written reading. */
function frontSection(results, meta, previous) {
  const rows = results.flatMap((r) => (r.front ?? []).map((f) => ({ ...f, scenario: `${r.title.split(".")[0]} (${r.id})` })));
  const reading = section(previous, "http-front");
  if (rows.length === 0 && reading === undefined) return [];
  const out = ["## The HTTP front end against `mcpd connect`", ""];
  out.push(
    "The daemon serves MCP over Streamable HTTP itself (`http://127.0.0.1:<port>/mcp`, one server at `/servers/<name>/mcp`, bearer token required), so an agent that speaks HTTP needs no bridge process. Path (e) is the official SDK's `Client` on its `StreamableHTTPClientTransport` with the token in `requestInit` headers, as a client configured from `mcpd http` runs; (d) is the same SDK client running `mcpd connect` as its stdio server, how a client that only speaks stdio uses mcpd. The figures below are gathered from the scenarios named in the first column (how each measures them is listed first; its own section has the rest); the last column is (e) / (d), taken inside each round.",
    "",
    `From \`${meta.command}\` at commit \`${meta.machine.commit}\` on ${meta.machine.date.slice(0, 10)}, the median over ${meta.rounds} round${meta.rounds === 1 ? "" : "s"} with the min–max in parentheses.`,
    "",
  );
  const hows = results.filter((r) => r.front?.length && r.frontHow).map((r) => `- ${r.title.split(".")[0]} (${r.id}): ${r.frontHow}`);
  if (hows.length) out.push("How each scenario measures it:", "", ...hows, "");
  if (rows.length) {
    out.push(
      mdTable(
        ["scenario", "figure", ...FRONT_PATHS.map(([, label]) => label), "(e) / (d)"],
        rows.map((f) => [
          f.scenario,
          `${f.figure} (${f.better} is better)`,
          ...FRONT_PATHS.map(([p]) => (f.values[p] ? summaryText(f.values[p], f.format ?? num) : "")),
          f.ratio ? summaryText(f.ratio, (v) => `${num(v)}x`) : "",
        ]),
      ),
      "",
    );
  } else {
    out.push("(Not measured in this run: scenarios 1, 2, 4 and 5 gather these figures.)", "");
  }
  out.push("<!-- http-front:start -->", reading ?? DEFAULT_FRONT, "<!-- http-front:end -->", "");
  return out;
}

/** The console table. */
export function consoleTable(results) {
  const rows = headlines(results).map((h) => [h.metric, valueText(h), h.target ?? "", verdict(h)]);
  const head = ["metric", "median (min–max over rounds)", "target", ""];
  const widths = head.map((c, i) => Math.max(c.length, ...rows.map((r) => r[i].length)));
  const line = (r) =>
    r
      .map((c, i) => c.padEnd(widths[i]))
      .join("  ")
      .trimEnd();
  return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

function mdTable(columns, rows) {
  const cell = (c) => String(c).replace(/\|/g, "\\|");
  return [
    `| ${columns.map(cell).join(" | ")} |`,
    `|${columns.map(() => "---").join("|")}|`,
    ...rows.map((r) => `| ${r.map(cell).join(" | ")} |`),
  ].join("\n");
}

/**
 * @param results scenario results, in order
 * @param meta {machine, mode, rounds, elapsedMs, command, svgName}
 * @param previous the current docs/benchmarks.md text (for the hand-written sections), if any
 */
export function markdown(results, meta, previous) {
  const m = meta.machine;
  const intro = section(previous, "intro") ?? DEFAULT_INTRO;
  const analysis = section(previous, "analysis") ?? DEFAULT_ANALYSIS;
  const out = [];
  out.push("# Benchmarks", "");
  out.push("<!-- intro:start -->", intro, "<!-- intro:end -->", "");
  out.push(
    `> Generated by \`${meta.command}\` (tests/bench/run.mjs) on ${m.date.slice(0, 10)} at commit \`${m.commit}\`; everything outside the three hand-written sections (introduction, the reading of the HTTP front end's figures, analysis) is rewritten by each run.`,
    "",
  );
  out.push("## Summary", "");
  out.push(
    `Every figure is a ratio or comparison between paths measured in the same run, the median over ${meta.rounds} rounds with the min–max in parentheses. Targets are reported, never asserted in tests.`,
    "",
  );
  out.push(
    mdTable(
      ["metric", "median (min–max)", "target", "result"],
      headlines(results).map((h) => [h.metric, valueText(h), h.target ?? "", verdict(h) ? `**${verdict(h)}**` : ""]),
    ),
    "",
  );
  out.push("## Machine and run", "");
  out.push(
    mdTable(
      ["", ""],
      [
        ["CPU", `${m.cpu}, ${m.cores} cores`],
        ["memory", `${num(m.memoryGb)} GiB`],
        ["Node.js", m.node],
        ["OS", m.os],
        ["load average (1/5/15 min) at start", m.loadAvg.map((v) => v.toFixed(2)).join(" / ")],
        ["load average at end", meta.loadAvgEnd.map((v) => v.toFixed(2)).join(" / ")],
        ["open-file limit (ulimit -n)", String(m.openFiles)],
        ["mode", `${meta.mode}, ${meta.rounds} rounds per scenario`],
        [
          "total run time",
          `${num(meta.elapsedMs / 1000)} s (${results.map((r) => `${r.id} ${Math.round(r.durationMs / 1000)} s`).join(", ")})`,
        ],
      ],
    ),
    "",
  );
  out.push(
    "The machine is shared: other work ran during the run (see the load averages), which widens the min–max ranges and penalises paths with more processes (each hop between processes waits for a CPU). Ratios within a round are what to read.",
    "",
  );
  out.push("## How to reproduce", "");
  out.push(
    "```sh",
    "npm ci",
    "npm run bench              # every scenario, 3 rounds (under 10 min on 2 cores); rewrites docs/benchmarks.md and docs/benchmarks-latency.svg",
    "npm run bench -- --quick   # a smoke run (< 2 min): 1 round, shorter windows, footprint up to 5 agents; writes tests/bench/out/ instead",
    "npm run bench -- --only latency,micro --rounds 5   # some scenarios (ids: latency throughput http startup footprint scale micro filter peers)",
    "npm run bench -- --only peers --quick --rounds 3   # mcpd beside mcp-proxy, supergateway and mcp-hub (installed into tests/bench/.peers/ on first use)",
    "```",
    "",
    "The harness (tests/bench/) is plain ESM importing the built packages (`dist/`, and the bundled `mcpd` command in `daemon/dist/cli-bundle/`, built by `npm run build` in the `bench` script) and the official SDK. Each scenario runs its clients in separate worker processes, stops at the first failed call (non-zero exit, no report), and ends every process it started and removes its temp dirs, also on failure or Ctrl-C. CPU profiles go to tests/bench/out/ (gitignored).",
    "",
  );
  out.push("## Results", "");
  for (const r of results) {
    out.push(`### ${r.title}`, "", r.description, "");
    if (r.chart && meta.svgName) out.push(`![Latency per call, by path](${meta.svgName})`, "");
    for (const t of r.tables) {
      if (t.caption) out.push(`**${t.caption}**`, "");
      out.push(mdTable(t.columns, t.rows), "");
    }
  }
  out.push(...frontSection(results, meta, previous));
  out.push("## Tool search", "");
  out.push("<!-- tool-search:start -->", section(previous, "tool-search") ?? DEFAULT_TOOL_SEARCH, "<!-- tool-search:end -->", "");
  out.push("## Analysis", "");
  out.push("<!-- analysis:start -->", analysis, "<!-- analysis:end -->", "");
  return out.join("\n");
}

export function readPrevious(file) {
  return existsSync(file) ? readFileSync(file, "utf8") : undefined;
}
