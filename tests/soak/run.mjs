#!/usr/bin/env node
/**
 * mcpd soak run: `npm run soak` (builds first), never part of `npm test`.
 *
 * Drives 1,000,000 calls (or as many as fit in the duration) through a real daemon from 16 connections,
 * each pipelining calls over the raw socket, with random cancels and random disconnects (each followed
 * by a reconnect). Afterwards the daemon must hold nothing for anyone: progress, subscription, relay and
 * in-flight tables empty, no call in flight to any server, only the checking connection left; its open
 * file descriptors back to the baseline; its resident memory grown by less than 20 MiB. Every answer is
 * checked on arrival too (its own connection, once, its own text; progress only under its own tokens).
 *
 * Flags
 *   --duration D      how long the load may run: 90, 90s, 2m, 1500ms (default 2m)
 *   --calls N         stop after N calls (default 1000000)
 *   --connections N   load connections (default 16)
 *   --window N        calls each connection keeps in flight (default 32)
 *   --seed N          random seed (default: random; printed)
 *
 * Prints a summary; exit code 0 when every invariant held, 1 when one failed, 2 on bad flags, 130/143
 * when interrupted. Every process it started is ended and its temp directory removed in every case.
 */
import { parseArgs } from "node:util";
import { LineClient } from "./line-client.mjs";
import { Budget, LoadConnection, newStats } from "./load-connection.mjs";
import { SoakDaemon, fixture, until } from "./soak-daemon.mjs";

const MiB = 2 ** 20;
/** Allowed growth of the daemon's resident memory over the run. */
const RSS_GROWTH_LIMIT = 20 * MiB;

function usage(message) {
  process.stderr.write(
    `soak: ${message}\nusage: node tests/soak/run.mjs [--duration 2m] [--calls N] [--connections N] [--window N] [--seed N]\n`,
  );
  process.exit(2);
}

/** "90" and "90s" are seconds, "2m" minutes, "1500ms" milliseconds. */
function parseDuration(text) {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  if (!m) usage(`--duration wants a number with an optional unit (ms, s, m), got ${JSON.stringify(text)}`);
  const n = Number(m[1]);
  const ms = m[2] === "ms" ? n : m[2] === "m" ? n * 60_000 : n * 1000;
  if (!(ms >= 1000)) usage(`--duration must be at least 1s, got ${JSON.stringify(text)}`);
  return ms;
}

function positiveInt(name, text, max) {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > max) usage(`--${name} wants an integer from 1 to ${max}, got ${JSON.stringify(text)}`);
  return n;
}

let args;
try {
  args = parseArgs({
    options: {
      duration: { type: "string", default: "2m" },
      calls: { type: "string", default: "1000000" },
      connections: { type: "string", default: "16" },
      window: { type: "string", default: "32" },
      seed: { type: "string" },
    },
    strict: true,
  }).values;
} catch (err) {
  usage(err.message);
}
const durationMs = parseDuration(args.duration);
const targetCalls = positiveInt("calls", args.calls, 1e9);
const connections = positiveInt("connections", args.connections, 256);
const window = positiveInt("window", args.window, 1000);
const seed = args.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : positiveInt("seed", args.seed, 2 ** 31);

/** mulberry32 */
function rng(s) {
  let a = s >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const log = (text) => process.stdout.write(`${text}\n`);
const mib = (n) => `${(n / MiB).toFixed(1)} MiB`;

const daemon = new SoakDaemon({ a: fixture("a", { healthCheckIntervalMs: 0 }), b: fixture("b", { healthCheckIntervalMs: 0 }) });
let checker;
let load = [];

async function cleanup() {
  for (const c of load) c.close();
  checker?.close();
  return daemon.stop();
}

for (const [signal, code] of [
  ["SIGINT", 130],
  ["SIGTERM", 143],
]) {
  process.once(signal, () => {
    log(`\n${signal}: stopping`);
    // process.exit ends the run whatever the cleanup's outcome: there is no one left to report it to.
    void cleanup().finally(() => process.exit(code));
  });
}

/** The daemon holds nothing for the load: the status when so, else undefined. */
async function quiet() {
  const s = await checker.call("mcpd/status");
  daemon.noteServers(s);
  const t = s.tables;
  const ok =
    t.progress === 0 &&
    t.subscriptions === 0 &&
    t.relayed === 0 &&
    t.inFlight === 0 &&
    s.servers.every((x) => x.inFlight === 0) &&
    s.clients.length === 0;
  return ok ? s : undefined;
}

/** Runs the load until `budget` is spent or `ms` pass, then drains and closes every connection. */
async function runLoad(budget, stats, ms, r, report) {
  load = Array.from(
    { length: connections },
    (_, i) => new LoadConnection(i, daemon.socketPath, { window, disconnectEveryMs: [1000, 6000], cancelRate: 0.02 }, stats, budget, r),
  );
  for (const c of load) c.start();
  const started = Date.now();
  let lastReport = started;
  while (budget.taken < budget.target && Date.now() - started < ms) {
    await new Promise((res) => setTimeout(res, 100));
    if (daemon.exited) throw new Error(`the daemon exited during the load: ${daemon.stderrTail.slice(-2000)}`);
    if (report && Date.now() - lastReport >= 10_000) {
      lastReport = Date.now();
      const secs = (lastReport - started) / 1000;
      log(
        `  ${secs.toFixed(0)} s: ${stats.sent.toLocaleString("en")} calls (${Math.round(stats.sent / secs).toLocaleString("en")}/s), ${stats.disconnects} disconnects, ${stats.cancelled} cancels`,
      );
    }
  }
  budget.stopped = true;
  const elapsed = Date.now() - started;
  const stuck = (await Promise.all(load.map((c) => c.drain(30_000)))).reduce((a, b) => a + b, 0);
  for (const c of load) c.close();
  load = [];
  return { elapsed, stuck };
}

const failures = [];
let summary = "";
try {
  log(
    `mcpd soak: up to ${targetCalls.toLocaleString("en")} calls for up to ${(durationMs / 1000).toFixed(0)} s, ${connections} connections x ${window} in flight, seed ${seed}`,
  );
  await daemon.ready();
  checker = await LineClient.open(daemon.socketPath);
  // A control connection: the full status (every client) is the operator's.
  await checker.call("mcpd/select", { control: true });
  await until(
    async () => {
      const s = await checker.call("mcpd/status");
      daemon.noteServers(s);
      return s.servers.every((x) => x.state === "ready");
    },
    "servers ready",
    30_000,
  );

  // Warm-up: the same load for a few seconds, so code, caches and pools that stay are in the baseline.
  const r = rng(seed);
  await runLoad(new Budget(Math.min(50_000, targetCalls)), newStats(), Math.min(5_000, durationMs / 10), r, false);
  await until(quiet, "the daemon quiet after the warm-up", 30_000);
  const baseFds = daemon.fds();
  const baseMem = await daemon.settledMemory();
  log(`baseline: ${baseFds} open fds, RSS ${mib(baseMem.rss)}, V8 heap in use ${mib(baseMem.heap)}`);

  const stats = newStats();
  const budget = new Budget(targetCalls);
  const { elapsed, stuck } = await runLoad(budget, stats, durationMs, r, true);
  const settled = stats.answered + stats.cancelled + stats.lostToDisconnect;

  const endStatus = await until(quiet, "the daemon quiet after the load", 30_000).catch(async (err) => {
    failures.push(`${err.message}: ${JSON.stringify((await checker.call("mcpd/status")).tables)}`);
    return checker.call("mcpd/status");
  });
  // Sockets of the closed connections may take a moment to be released.
  const endFds = await until(() => (daemon.fds() <= baseFds ? daemon.fds() : undefined), "fds back to the baseline", 30_000).catch(() =>
    daemon.fds(),
  );
  // Memory: V8 gives pages back over a few collections; poll.
  let endMem = await daemon.settledMemory();
  await until(
    async () => (endMem = await daemon.settledMemory(2, 250)).rss - baseMem.rss < RSS_GROWTH_LIMIT,
    "RSS growth under the limit",
    20_000,
  ).catch(() => {});

  const t = endStatus.tables;
  if (stuck > 0) failures.push(`${stuck} calls never answered (neither cancelled nor disconnected)`);
  if (stats.violationCount > 0) failures.push(`${stats.violationCount} wrong answers or progress:\n    ${stats.violations.join("\n    ")}`);
  if (t.progress || t.subscriptions || t.relayed || t.inFlight) failures.push(`tables not empty: ${JSON.stringify(t)}`);
  const busy = endStatus.servers.filter((x) => x.inFlight !== 0);
  if (busy.length) failures.push(`servers with calls in flight: ${busy.map((x) => `${x.name}=${x.inFlight}`).join(", ")}`);
  // The checker asks, and the asking connection is not listed.
  if (endStatus.clients.length !== 0) failures.push(`${endStatus.clients.length} load connections still known to the daemon`);
  if (endFds > baseFds) failures.push(`open fds ${endFds}, baseline ${baseFds}`);
  const growth = endMem.rss - baseMem.rss;
  if (growth >= RSS_GROWTH_LIMIT) failures.push(`RSS grew by ${mib(growth)} (limit ${mib(RSS_GROWTH_LIMIT)})`);
  const notReady = endStatus.servers.filter((x) => x.state !== "ready");
  if (notReady.length) failures.push(`servers not ready at the end: ${notReady.map((x) => `${x.name}=${x.state}`).join(", ")}`);

  summary = [
    "",
    "soak summary",
    `  calls          ${settled.toLocaleString("en")} of ${targetCalls.toLocaleString("en")} in ${(elapsed / 1000).toFixed(1)} s (${Math.round(settled / (elapsed / 1000)).toLocaleString("en")}/s)${settled < targetCalls ? ": the duration ran out first" : ""}`,
    `    answered     ${stats.answered.toLocaleString("en")} (errors ${stats.errors})`,
    `    cancelled    ${stats.cancelled.toLocaleString("en")} (answered before the cancel arrived: ${stats.answeredAfterCancel})`,
    `    disconnected ${stats.lostToDisconnect.toLocaleString("en")} in flight over ${stats.disconnects.toLocaleString("en")} disconnects`,
    `  progress       ${stats.progress.toLocaleString("en")} notifications`,
    `  tables         ${JSON.stringify(t)}; servers in flight ${endStatus.servers.map((x) => `${x.name}=${x.inFlight}`).join(", ")}`,
    `  open fds       ${endFds} (baseline ${baseFds})`,
    `  RSS            ${mib(endMem.rss)} (baseline ${mib(baseMem.rss)}, growth ${mib(growth)}, limit ${mib(RSS_GROWTH_LIMIT)})`,
    `  V8 heap        ${mib(endMem.heap)} (baseline ${mib(baseMem.heap)})`,
    `  seed           ${seed}`,
  ].join("\n");
} catch (err) {
  failures.push(err.stack ?? String(err));
}

const stopped = await cleanup();
if (stopped.leftBehind.length) failures.push(`server processes left behind after the daemon stopped: ${stopped.leftBehind.join(", ")}`);
if (stopped.exitCode !== 0) failures.push(`the daemon exited with ${stopped.exitCode} on SIGTERM`);
log(summary);
if (failures.length) {
  log(`\nFAIL\n  ${failures.join("\n  ")}`);
  process.exit(1);
}
log("\nPASS");
process.exit(0);
