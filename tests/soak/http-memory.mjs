#!/usr/bin/env node
/**
 * The daemon's memory and speed under HTTP clients that hold bytes, never part of `npm test`:
 * `node tests/soak/http-memory.mjs` (after `npm run build`). Figures for docs/reliability.md.
 *
 * Each scenario runs against a fresh daemon (default settings, the HTTP front end on a free port) and
 * prints its resident memory as deltas over the baseline (settled after a warm-up): the peak while loaded
 * (VmHWM, reset once the baseline is read), five seconds after the load ended (no collection forced: what
 * the daemon holds on its own), and settled (six full collections forced through the inspector).
 *
 * Scenarios (--scenario, default all)
 *   get10, get20  10 (20) sessions each with a GET stream that is never read, while a server sends
 *                 100,000 log notifications of 2 KB
 *   post          8 sessions each with a POST (a tool call answered on SSE) that is never read, while the
 *                 server sends each call 20,000 progress notifications of 2 KB
 *   bodies        100 POSTs whose 4 MiB body is sent but for its last bytes
 *   idle          3,000 log notifications of 2 KB (a socket agent's call), timed with no HTTP session and
 *                 then with 250 idle ones (initialized, nothing else), with another agent's call latency
 *
 * --held also prints what the daemon holds while the load is held (two collections forced then);
 * --pace-gc MS forces a collection every MS while the load runs (through the inspector: what a garbage
 * pacer would do), to tell garbage not yet collected from bytes held.
 *
 * The daemon runs with the node flags and allocator settings `mcpd start` gives it
 * (daemon/src/infra/node-flags.ts, allocator-env.ts); --glibc-defaults runs it without the latter. No
 * collection is forced in it but for the "settled" figure.
 *
 * Targets: peak within mcpd.maxBufferedBytesTotal (128 MiB) + 64 MiB, +48 MiB 5 s after the load; the
 * flood with 250 idle sessions within 1.5x of none. Exit code 0, or 1 when a scenario could not run.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { endSession, frontOf, head, openSession, rawConnection, unreadGet, unreadPost, writeAll } from "./http-raw.mjs";
import { LineClient } from "./line-client.mjs";
import { SoakDaemon, fixture, until } from "./soak-daemon.mjs";
import { DAEMON_ALLOCATOR_ENV } from "../../daemon/dist/infra/allocator-env.js";
import { DAEMON_NODE_FLAGS } from "../../daemon/dist/infra/node-flags.js";

const MiB = 2 ** 20;
const mib = (n) => `${n >= 0 ? "+" : ""}${(n / MiB).toFixed(0)} MiB`;
const log = (t) => process.stdout.write(`${t}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const { values: args } = parseArgs({
  options: {
    scenario: { type: "string", default: "all" },
    "glibc-defaults": { type: "boolean", default: false },
    held: { type: "boolean", default: false },
    "pace-gc": { type: "string" },
  },
  strict: true,
});
/** The allocator settings and node flags `mcpd start` gives the daemons it launches (unless --glibc-defaults). */
const ALLOCATOR = args["glibc-defaults"] ? {} : DAEMON_ALLOCATOR_ENV;
const NODE_OPTIONS = ["--inspect=127.0.0.1:0", ...DAEMON_NODE_FLAGS].join(" ");

function vmHwm(pid) {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) * 1024 : Number.NaN;
}

/** A socket MCP session (an agent) that asked for errors only: it is not the one holding bytes. */
async function agent(path) {
  const c = await LineClient.open(path);
  await c.call("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "agent", version: "1" } });
  await c.call("logging/setLevel", { level: "error" });
  return c;
}

/**
 * With --held, what the daemon holds while the load is still held: the lowest RSS over two forced
 * collections (it changes what "5 s after" reads, so it is off by default).
 */
async function heldMemory(daemon) {
  return args.held ? (await daemon.settledMemory(2, 100)).rss : undefined;
}

/**
 * With --pace-gc MS, a full collection forced through the inspector every MS from the load's start to the
 * "5 s after" reading: what a garbage pacer inside the daemon would do (the daemon itself forces none).
 */
function pace(daemon) {
  const every = Number(args["pace-gc"]);
  if (!(every > 0)) return undefined;
  let busy = false;
  return setInterval(() => {
    if (busy) return;
    busy = true;
    daemon
      .collectGarbage()
      .catch(() => {})
      .finally(() => {
        busy = false;
      });
  }, every);
}

/** HTTP calls still in flight, from a control connection. */
async function httpInFlight(control) {
  const st = await control.call("mcpd/status");
  return st.clients.filter((c) => c.face === "http").reduce((n, c) => n + c.inFlight, 0);
}

async function withDaemon(fn) {
  const daemon = new SoakDaemon({ fl: fixture("fl", { healthCheckIntervalMs: 0 }) }, { MCPD_HTTP_PORT: "0", NODE_OPTIONS, ...ALLOCATOR });
  let control;
  try {
    await daemon.ready();
    control = await LineClient.open(daemon.socketPath);
    await control.call("mcpd/select", { control: true });
    await until(async () => (await control.call("mcpd/status")).servers.every((x) => x.state === "ready"), "servers ready", 30_000);
    const front = await frontOf(control);
    for (let i = 0; i < 20; i++) await endSession(front, "/mcp", await openSession(front, "/mcp"));
    const base = await daemon.settledMemory();
    writeFileSync(`/proc/${daemon.pid}/clear_refs`, "5");
    const pacer = pace(daemon);
    let out;
    let peak;
    let after5;
    try {
      out = await fn({ daemon, control, front });
      peak = vmHwm(daemon.pid);
      await sleep(5_000);
      after5 = daemon.rss();
    } finally {
      clearInterval(pacer);
    }
    const settled = await daemon.settledMemory();
    const http = (await control.call("mcpd/status")).http;
    return { base: base.rss, peak, after5, settled: settled.rss, http, ...out };
  } finally {
    control?.close();
    await daemon.stop();
  }
}

/** Sessions with an unread GET stream each, under a flood of log notifications. */
async function get(n) {
  return withDaemon(async ({ daemon, front }) => {
    const socks = [];
    for (let i = 0; i < n; i++) socks.push(await unreadGet(front, "/mcp", await openSession(front, "/mcp")));
    const caller = await agent(daemon.socketPath);
    const t0 = Date.now();
    await caller.call("tools/call", { name: "fl__flood", arguments: { count: 100_000, size: 2_000 } }, 900_000);
    const secs = (Date.now() - t0) / 1000;
    const held = await heldMemory(daemon);
    for (const s of socks) s.destroy();
    caller.close();
    return { held, note: `flood of 100,000 in ${secs.toFixed(1)} s` };
  });
}

/** Sessions with an unread POST stream each, under a flood of progress notifications. */
async function post(n = 8) {
  return withDaemon(async ({ daemon, control, front }) => {
    const socks = [];
    for (let i = 0; i < n; i++) {
      const sid = await openSession(front, "/mcp");
      const call = {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "fl__flood", arguments: { count: 20_000, size: 2_000, progress: true }, _meta: { progressToken: "p" } },
      };
      socks.push(await unreadPost(front, "/mcp", sid, call));
    }
    const t0 = Date.now();
    await until(async () => (await httpInFlight(control)) > 0 || undefined, "the calls in flight", 60_000);
    await until(async () => (await httpInFlight(control)) === 0 || undefined, "the progress floods done", 900_000, 200);
    const secs = (Date.now() - t0) / 1000;
    const held = await heldMemory(daemon);
    for (const s of socks) s.destroy();
    return { held, note: `floods done in ${secs.toFixed(1)} s` };
  });
}

/** POSTs whose body of just under 4 MiB never ends. */
async function bodies(n = 100) {
  return withDaemon(async ({ daemon, control, front }) => {
    const size = 4 * MiB - 16;
    const chunk = Buffer.alloc(64 * 1024, "x");
    const socks = [];
    for (let i = 0; i < n; i++) socks.push(await rawConnection(front));
    const statuses = new Map();
    for (const s of socks) s.on("data", (d) => statuses.set(s, String(d).split(" ")[1]));
    for (const s of socks) s.resume();
    await Promise.all(
      socks.map(async (s) => {
        await writeAll(
          s,
          head(front, "POST", "/mcp", { "Content-Type": "application/json", Accept: "application/json", "Content-Length": size }),
        );
        for (let sent = 0; sent < size - 8 && !s.closedByPeer; sent += chunk.length)
          await writeAll(s, chunk.subarray(0, Math.min(chunk.length, size - 8 - sent)));
      }),
    );
    // The budget holds at most this many whole bodies: every other one is answered once the daemon read it all.
    const fit = Math.floor((await control.call("mcpd/status")).daemon.maxBufferedBytesTotal / size);
    await until(() => statuses.size >= n - fit, "the bodies over the budget answered", 60_000).catch(() => {});
    const codes = {};
    for (const c of statuses.values()) codes[c] = (codes[c] ?? 0) + 1;
    const heldBytes = (await control.call("mcpd/status")).http?.bufferedBytes;
    const held = await heldMemory(daemon);
    for (const s of socks) s.destroy();
    return { held, note: `answers ${JSON.stringify(codes)}; ${mib(heldBytes ?? 0)} of bodies held at the end of the load` };
  });
}

/** The flood's time and another agent's worst call latency during it. */
async function timedFlood(caller, other) {
  let worst = 0;
  let done = false;
  const pinger = (async () => {
    while (!done) {
      const t = Date.now();
      await other.call("tools/call", { name: "fl__echo", arguments: { text: "hi" } }, 120_000);
      worst = Math.max(worst, Date.now() - t);
    }
  })();
  const t0 = Date.now();
  await caller.call("tools/call", { name: "fl__flood", arguments: { count: 3_000, size: 2_000 } }, 600_000);
  const secs = (Date.now() - t0) / 1000;
  done = true;
  await pinger;
  return { secs, worst };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The flood with no HTTP session, then with `n` idle ones (seven runs each, medians). */
async function idle(n = 250) {
  return withDaemon(async ({ daemon, front }) => {
    const caller = await agent(daemon.socketPath);
    const other = await agent(daemon.socketPath);
    const runs = async () => {
      const r = [];
      for (let i = 0; i < 7; i++) r.push(await timedFlood(caller, other));
      return { secs: median(r.map((x) => x.secs)), worst: Math.max(...r.map((x) => x.worst)) };
    };
    const none = await runs();
    for (let i = 0; i < n; i++) await openSession(front, "/mcp");
    const some = await runs();
    caller.close();
    other.close();
    return {
      note:
        `flood of 3,000: ${none.secs.toFixed(2)} s with no HTTP session, ${some.secs.toFixed(2)} s with ${n} idle ` +
        `(ratio ${(some.secs / none.secs).toFixed(2)}); another agent's call waited at most ${none.worst} ms / ${some.worst} ms`,
    };
  });
}

const scenarios = { get10: () => get(10), get20: () => get(20), post, bodies, idle };
const want = args.scenario === "all" ? Object.keys(scenarios) : args.scenario.split(",");
log(`node: ${NODE_OPTIONS}; allocator: ${args["glibc-defaults"] ? "glibc defaults" : JSON.stringify(DAEMON_ALLOCATOR_ENV)}`);
let failed = false;
for (const name of want) {
  const fn = scenarios[name];
  if (!fn) {
    log(`unknown scenario ${name} (${Object.keys(scenarios).join(", ")})`);
    process.exit(2);
  }
  log(`${name}:`);
  try {
    const r = await fn();
    log(
      `  RSS baseline ${(r.base / MiB).toFixed(0)} MiB; peak ${mib(r.peak - r.base)}, 5 s after ${mib(r.after5 - r.base)}, ` +
        `settled ${mib(r.settled - r.base)}${r.held === undefined ? "" : `; while held (collected) ${mib(r.held - r.base)}`}`,
    );
    log(`  ${r.note}`);
    const { sessions, slowReaders, replayBytes, bufferedBytes, dropped } = r.http;
    log(`  http status after: ${JSON.stringify({ sessions, slowReaders, replayBytes, bufferedBytes, dropped })}`);
  } catch (err) {
    failed = true;
    log(`  FAILED: ${err.stack ?? err.message}`);
  }
}
process.exit(failed ? 1 : 0);
