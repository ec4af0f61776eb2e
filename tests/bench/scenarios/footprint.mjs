/**
 * Scenario 5: footprint. (A) The daemon's RSS (VmRSS from /proc) with 20 servers and 0, 100 and 1,000
 * connected clients (held by separate client processes; every client has made one call). (B) Processes and
 * summed RSS of the whole process trees when N = 1, 5, 10 agents (quick mode: 1, 5) each use the same 5 servers: each agent
 * spawning them directly (official SDK), versus every agent going through one mcpd (SDK over McpdTransport).
 * (C) Memory one more connected agent costs, by path: the daemon's RSS growth per socket connection (c) and
 * per HTTP front-end session (e), each in a fresh daemon; the RSS of the `mcpd connect` bridge process (d);
 * the RSS of the server process a direct agent spawns (a).
 */
import { join } from "node:path";
import { DAEMON_NODE_FLAGS } from "@mcpd/daemon";
import { mkdirSync } from "node:fs";
import { AGENT_WORKER, CLIENT_WORKER, MCP_FIXTURE, sleep } from "../lib/env.mjs";
import { fastServer, startDaemon } from "../lib/daemon.mjs";
import { median, rotate, summarize } from "../lib/stats.mjs";
import { rssKb, treeFootprint } from "../lib/procfs.mjs";
import { asConfig, realisticServers } from "../lib/servers.mjs";
import { Worker, checkWorkers, startWorker } from "../lib/worker-host.mjs";
import { int, mb, num, range, ratio, size } from "../lib/format.mjs";

/** Processes per server: a whole number when it is one. */
const count = (v) => (Number.isInteger(v) ? String(v) : num(v));

export const id = "footprint";
export const title = "5. Footprint";
const DAEMON_SERVERS = 20;
const AGENT_SERVERS = 5;
const CLIENT_STEPS = [0, 100, 1_000];
const CLIENTS_PER_WORKER = 250;
const AGENTS_AT_ONCE = 3;
/** (C): sessions opened before the baseline reading (first-use costs out of the figure), then the measured ones. */
const SESSIONS_WARM = 10;
/** Under the front end's default cap of 256 sessions with the warm ones. */
const SESSIONS_MEASURED = 200;
/** (C): bridge processes and direct servers whose RSS is read (the median is reported). */
const PROCESSES_READ = 3;

/** How long (A) holds the 1,000 clients idle before the held reading, in ms. */
const HELD_MS = 30_000;
/** The held reading is the median of this many readings, one a second, at the end of HELD_MS. */
const HELD_READINGS = 5;

/** Median of 5 VmRSS readings 100 ms apart, in MB (RSS moves with allocation and GC; one reading is noisy). */
async function sampleRssMb(pid) {
  const v = [];
  for (let i = 0; i < 5; i++) {
    if (i) await sleep(100);
    const kb = rssKb(pid);
    if (kb === 0) throw new Error(`process ${pid} is gone`);
    v.push(kb / 1024);
  }
  return median(v);
}

/**
 * The daemon's RSS once it has held its clients idle for HELD_MS: the median of the last HELD_READINGS
 * readings, one a second. Right after a burst of handshakes V8 still holds the young generation it grew
 * (up to twice the 2 MB semi-space) and the old generation's garbage; it gives them back once allocation
 * has been quiet for a while (its memory reducer runs some 8 s after the last full collection), which is
 * the state a daemon holding its clients spends its day in. Also returns every reading, for the log.
 */
async function heldRssMb(pid) {
  const readings = [];
  const started = Date.now();
  while (Date.now() - started < HELD_MS) {
    await sleep(1_000);
    const kb = rssKb(pid);
    if (kb === 0) throw new Error(`process ${pid} is gone`);
    readings.push(kb / 1024);
  }
  return { mb: median(readings.slice(-HELD_READINGS)), readings };
}

async function daemonRss(ctx, r) {
  const { resources, log } = ctx;
  const servers = {};
  for (let i = 1; i <= DAEMON_SERVERS; i++) servers[`s${i}`] = { command: process.execPath, args: [MCP_FIXTURE, "--name", `s${i}`] };
  const daemon = await startDaemon(resources, servers);
  const workers = [];
  const rss = {};
  try {
    let connected = 0;
    for (const target of CLIENT_STEPS) {
      while (connected < target) {
        const n = Math.min(CLIENTS_PER_WORKER, target - connected);
        const server = `s${(workers.length % DAEMON_SERVERS) + 1}`;
        workers.push(
          await startWorker(
            resources,
            CLIENT_WORKER,
            { path: "c", serverName: server, socketPath: daemon.socketPath, connections: n },
            { name: `holder-${workers.length}` },
          ),
        );
        connected += n;
      }
      await Promise.all(workers.map((w) => w.request({ cmd: "each" }, "each")));
      rss[target] = await sampleRssMb(daemon.pid);
      log(`  round ${r + 1}: daemon RSS with ${DAEMON_SERVERS} servers and ${target} clients: ${num(rss[target])} MB`);
    }
    const held = await heldRssMb(daemon.pid);
    rss.held = held.mb;
    log(
      `  round ${r + 1}: held idle ${HELD_MS / 1000} s: ${num(held.mb)} MB (readings each second: ${held.readings.map((v) => num(v)).join(", ")})`,
    );
    checkWorkers(workers);
    const control = await daemon.control();
    try {
      const status = await control.status();
      // The control connection asks, and the asking connection is not listed.
      if (status.clients.length !== CLIENT_STEPS.at(-1))
        throw new Error(`the daemon reports ${status.clients.length} clients, expected ${CLIENT_STEPS.at(-1)}`);
    } finally {
      await control.close();
    }
  } finally {
    await Promise.all(workers.map((w) => w.stop().catch(() => {})));
    await daemon.stop();
  }
  return rss;
}

/**
 * Grows `agents` to `n` agents, started three at a time (the next ones once their tools are listed), as
 * agents are opened over a working day: starting 10 agents x 5 servers at once on 2 cores makes the direct agents'
 * own requests time out.
 */
async function growAgents(resources, agents, n, specFor, name) {
  while (agents.length < n) {
    // A few at a time: no start-up storm, and the run stays short.
    const batch = [];
    for (let k = 0; k < AGENTS_AT_ONCE && agents.length < n; k++) {
      const a = new Worker(resources, AGENT_WORKER, specFor(agents.length), { name: `${name}-${agents.length}` });
      agents.push(a);
      batch.push(a);
    }
    await Promise.all(batch.map((a) => a.next("listed", 180_000)));
  }
  resources.noteTrees();
}

/** For N = 1, 5, 10 agents: the footprint of agents spawning the 5 servers themselves, then through mcpd. */
async function agents(ctx, r, dir, AGENT_COUNTS) {
  const { resources, log } = ctx;
  const out = {};
  const daemonDir = join(dir, `daemon-${r}`);
  mkdirSync(daemonDir);
  const daemon = await startDaemon(resources, asConfig(realisticServers(AGENT_SERVERS, daemonDir)));
  const direct = [];
  const via = [];
  try {
    const directSpec = (i) => {
      const d = join(dir, `direct-${r}-${i}`);
      mkdirSync(d);
      return { mode: "direct", hold: true, servers: realisticServers(AGENT_SERVERS, d) };
    };
    let t = Date.now();
    for (const n of AGENT_COUNTS) {
      await growAgents(resources, direct, n, directSpec, "direct-agent");
      out[n] = { direct: treeFootprint(direct.map((a) => a.pid)) };
    }
    log(`  round ${r + 1}: ${AGENT_COUNTS.at(-1)} direct agents started in ${num((Date.now() - t) / 1000)} s`);
    checkWorkers(direct);
    await Promise.all(direct.splice(0).map((a) => a.stop()));
    t = Date.now();
    for (const n of AGENT_COUNTS) {
      await growAgents(resources, via, n, () => ({ mode: "mcpd-sdk", hold: true, socketPath: daemon.socketPath }), "mcpd-agent");
      out[n].mcpd = treeFootprint([daemon.pid, ...via.map((a) => a.pid)]);
      // The daemon's tree is the daemon plus its servers.
      out[n].perServer = (treeFootprint([daemon.pid]).processes - 1) / AGENT_SERVERS;
      const { direct: fd, mcpd: fm } = out[n];
      if (n === AGENT_COUNTS.at(-1)) log(`  round ${r + 1}: ${n} agents through mcpd started in ${num((Date.now() - t) / 1000)} s`);
      log(
        `  round ${r + 1}, ${n} agent(s): direct ${fd.processes} processes ${num(fd.rssMb)} MB; via mcpd ${fm.processes} processes ${num(fm.rssMb)} MB (${out[n].perServer} process per server)`,
      );
    }
    checkWorkers(via);
  } finally {
    await Promise.all([...direct, ...via].map((a) => a.stop().catch(() => {})));
    await daemon.stop();
  }
  return out;
}

/**
 * (C) The daemon's RSS growth per connected agent on `path` ("c": a socket connection, "e": an HTTP front-end
 * session), in MB: a fresh daemon with one fast server, RSS read after SESSIONS_WARM agents and again after
 * SESSIONS_MEASURED more, every agent having made one `tools/call` (HTTP agents also hold the standalone
 * GET stream the SDK opens). Checks the daemon counts them all.
 */
async function daemonGrowth(ctx, r, path) {
  const { resources, log } = ctx;
  const daemon = await startDaemon(resources, { fast: fastServer("fast") });
  const workers = [];
  try {
    const front = await daemon.httpFront();
    const rss = [];
    for (const n of [SESSIONS_WARM, SESSIONS_MEASURED]) {
      const w = await startWorker(
        resources,
        CLIENT_WORKER,
        {
          path,
          serverName: "fast",
          socketPath: daemon.socketPath,
          url: front.serverUrl("fast"),
          tokenFile: front.tokenFile,
          connections: n,
        },
        { name: `growth-${path}-${workers.length}` },
      );
      workers.push(w);
      await w.request({ cmd: "each" }, "each");
      rss.push(await sampleRssMb(daemon.pid));
    }
    checkWorkers(workers);
    const total = SESSIONS_WARM + SESSIONS_MEASURED;
    const control = await daemon.control();
    try {
      const status = await control.status();
      const counted = path === "e" ? status.http?.sessions : status.clients.length;
      if (counted !== total) throw new Error(`(C) ${path}: the daemon reports ${counted} sessions, expected ${total}`);
    } finally {
      await control.close();
    }
    const per = (rss[1] - rss[0]) / SESSIONS_MEASURED;
    log(
      `  round ${r + 1}: daemon RSS ${num(rss[0])} MB with ${SESSIONS_WARM} ${path === "e" ? "HTTP sessions" : "socket connections"}, ${num(rss[1])} MB with ${total}: ${num(per * 1024)} KB each`,
    );
    return per;
  } finally {
    await Promise.all(workers.map((w) => w.stop().catch(() => {})));
    await daemon.stop();
  }
}

/** (C) Median RSS in MB of the processes an agent adds on `path` ("a": the server it spawns, "d": its bridge). */
async function addedProcessRss(ctx, r, path) {
  const { resources, log } = ctx;
  const daemon = path === "d" ? await startDaemon(resources, { fast: fastServer("fast") }) : undefined;
  let w;
  try {
    w = await startWorker(
      resources,
      CLIENT_WORKER,
      { path, server: fastServer("direct"), serverName: "fast", socketPath: daemon?.socketPath, connections: PROCESSES_READ },
      { name: `added-${path}` },
    );
    await w.request({ cmd: "each" }, "each");
    if (w.ready.pids.length !== PROCESSES_READ)
      throw new Error(`(C) ${path}: ${w.ready.pids.length} processes, expected ${PROCESSES_READ}`);
    const v = [];
    for (const pid of w.ready.pids) v.push(await sampleRssMb(pid));
    checkWorkers([w]);
    log(
      `  round ${r + 1}: ${path === "d" ? "`mcpd connect` bridge" : "directly spawned server"} RSS ${v.map((x) => `${num(x)} MB`).join(", ")}`,
    );
    return median(v);
  } finally {
    await w?.stop().catch(() => {});
    await daemon?.stop();
  }
}

export async function run(ctx) {
  const { resources, rounds, quick } = ctx;
  // Quick mode (a smoke run) stops at 5 agents: 10 direct agents are 60 processes to start.
  const AGENT_COUNTS = quick ? [1, 5] : [1, 5, 10];
  const topN = AGENT_COUNTS.at(-1);
  const dir = resources.tempDir("mcpdb-fp-");
  const rss = Object.fromEntries([...CLIENT_STEPS, "held"].map((c) => [c, []]));
  const ag = {};
  for (const n of AGENT_COUNTS) ag[n] = { dProc: [], dRss: [], mProc: [], mRss: [], rssRatio: [], procRatio: [], perServer: [] };
  const added = { a: [], c: [], d: [], e: [], dTotal: [], eOverD: [], eOverC: [] };
  for (let r = 0; r < rounds; r++) {
    const x = {};
    for (const p of rotate(["c", "e"], r)) x[p] = await daemonGrowth(ctx, r, p);
    for (const p of ["a", "d"]) x[p] = await addedProcessRss(ctx, r, p);
    for (const p of ["a", "c", "d", "e"]) added[p].push(x[p]);
    // A `mcpd connect` agent costs its bridge process and, in the daemon, one socket connection.
    added.dTotal.push(x.d + x.c);
    added.eOverD.push(x.e / (x.d + x.c));
    added.eOverC.push(x.e / x.c);
    const d = await daemonRss(ctx, r);
    for (const c of [...CLIENT_STEPS, "held"]) rss[c].push(d[c]);
    const a = await agents(ctx, r, dir, AGENT_COUNTS);
    for (const n of AGENT_COUNTS) {
      const x = a[n];
      ag[n].dProc.push(x.direct.processes);
      ag[n].dRss.push(x.direct.rssMb);
      ag[n].mProc.push(x.mcpd.processes);
      ag[n].mRss.push(x.mcpd.rssMb);
      ag[n].rssRatio.push(x.direct.rssMb / x.mcpd.rssMb);
      ag[n].procRatio.push(x.direct.processes / x.mcpd.processes);
      ag[n].perServer.push(x.perServer);
    }
  }
  const rs = Object.fromEntries([...CLIENT_STEPS, "held"].map((c) => [c, summarize(rss[c])]));
  const as = Object.fromEntries(
    Object.entries(ag).map(([n, v]) => [n, Object.fromEntries(Object.entries(v).map(([k, vals]) => [k, summarize(vals)]))]),
  );
  const perClientKb = summarize(rss[1000].map((v, i) => ((v - rss[0][i]) * 1024) / 1000));
  const maxPerServer = Math.max(...Object.values(ag).flatMap((v) => v.perServer));
  const ad = Object.fromEntries(Object.entries(added).map(([k, v]) => [k, summarize(v)]));
  const top = CLIENT_STEPS.at(-1);
  return {
    id,
    title,
    description: `The daemon runs as \`mcpd start\` launches it: with its node flags (\`${DAEMON_NODE_FLAGS.join(" ")}\`) and glibc allocator settings. (A) ${DAEMON_SERVERS} servers (tests/fixtures/servers/mcp-fixture.mjs, ~20 tools, prompts and resources each); clients are @mcpd/client connections held by client processes of ${CLIENTS_PER_WORKER} connections each, every one having made one \`tools/call\`; RSS is the median of 5 readings 100 ms apart, read as soon as the clients of a step have made their calls, and then once more after the ${top.toLocaleString("en-US")} clients have been held idle for ${HELD_MS / 1000} s (the median of the last ${HELD_READINGS} of readings one a second): right after a burst of handshakes V8 still holds the young generation it grew and the old generation's garbage, which it gives back once allocation has been quiet for a while, and that held state is where a daemon holding its clients spends its day. (B) The 5 servers: server-everything, server-memory and 3 mcp-fixture copies; agents are started three at a time (1, then 4 more, then 5 more) and hold their sessions while the trees are measured (processes and summed VmRSS of every process in the agents' trees, plus the daemon's tree through mcpd; RSS sums count shared pages once per process, as \`ps\` does). (C) One server (the fast server); the daemon's growth per agent is its RSS after ${SESSIONS_WARM} + ${SESSIONS_MEASURED} agents minus its RSS after ${SESSIONS_WARM}, over ${SESSIONS_MEASURED}, in a fresh daemon per path, every agent having made one \`tools/call\` (HTTP agents are SDK clients over \`StreamableHTTPClientTransport\`, each holding the standalone GET stream the SDK opens); a process's RSS is the median over ${PROCESSES_READ} of them. A negative growth is the noise of RSS readings (a few hundred KB) over ${SESSIONS_MEASURED} agents.`,
    tables: [
      {
        caption: "(A) Daemon RSS with 20 servers",
        columns: ["connected clients", "daemon RSS"],
        rows: [
          ...CLIENT_STEPS.map((c) => [c.toLocaleString("en-US"), range(rs[c], mb)]),
          [`${top.toLocaleString("en-US")}, held idle ${HELD_MS / 1000} s`, range(rs.held, mb)],
          ["per added client (0 -> 1,000)", range(perClientKb, (v) => `${num(v)} KB`)],
        ],
      },
      {
        caption: "(B) N agents using the same 5 servers",
        columns: [
          "agents",
          "direct: processes",
          "direct: RSS",
          "via mcpd: processes",
          "via mcpd: RSS",
          "RSS direct / mcpd",
          "processes per server via mcpd",
        ],
        rows: AGENT_COUNTS.map((n) => [
          String(n),
          range(as[n].dProc, int),
          range(as[n].dRss, mb),
          range(as[n].mProc, int),
          range(as[n].mRss, mb),
          range(as[n].rssRatio, ratio),
          range(as[n].perServer, count),
        ]),
      },
      {
        caption: "(C) Memory one more connected agent costs, by path",
        columns: ["path", "processes added per agent", "RSS of the added process", "daemon RSS growth per agent", "total per agent"],
        rows: [
          ["(a) SDK Client, direct stdio", "1 (the server it spawns)", range(ad.a, size), "", range(ad.a, size)],
          ["(c) @mcpd/client via mcpd", "0", "", range(ad.c, size), range(ad.c, size)],
          [
            "(d) SDK Client via `mcpd connect`",
            "1 (the bridge)",
            range(ad.d, size),
            "as (c): one socket connection",
            range(ad.dTotal, size),
          ],
          ["(e) SDK Client via mcpd's HTTP front end", "0", "", range(ad.e, size), range(ad.e, size)],
        ],
      },
    ],
    headline: [
      {
        metric: `Daemon RSS, 20 servers, ${top.toLocaleString("en-US")} clients held idle ${HELD_MS / 1000} s`,
        value: rs.held,
        format: mb,
        target: "<= 60 MB",
        pass: rs.held.median <= 60,
      },
      { metric: `Daemon RSS, 20 servers, ${top.toLocaleString("en-US")} clients, right after their calls`, value: rs[top], format: mb },
      {
        metric: `Processes per server through mcpd, N = ${AGENT_COUNTS.join(", ")} agents (max)`,
        value: summarize([maxPerServer]),
        format: count,
        target: "1",
        pass: maxPerServer === 1,
      },
      { metric: `${topN} agents x 5 servers: total RSS direct / via mcpd`, value: as[topN].rssRatio, format: ratio },
      { metric: `${topN} agents x 5 servers: processes direct / via mcpd`, value: as[topN].procRatio, format: ratio },
      {
        metric: "Memory per connected agent: (e) HTTP front end / (d) `mcpd connect` (bridge + connection)",
        value: ad.eOverD,
        format: ratio,
      },
      { metric: "Daemon RSS growth per agent: (e) HTTP session / (c) socket connection", value: ad.eOverC, format: ratio },
    ],
    frontHow: `(e) and (c): a fresh daemon with one server, its RSS after ${SESSIONS_WARM} + ${SESSIONS_MEASURED} agents minus after ${SESSIONS_WARM}, over ${SESSIONS_MEASURED} (each agent made one call); (d) and (a): the RSS of the bridge or server process, the median of ${PROCESSES_READ}.`,
    front: [
      {
        figure:
          "memory per connected agent ((a): the server it spawns; (c), (e): the daemon's growth; (d): the bridge process + the daemon's growth as (c))",
        format: size,
        better: "lower",
        values: { a: ad.a, c: ad.c, d: ad.dTotal, e: ad.e },
        ratio: ad.eOverD,
      },
    ],
    data: { rss: rs, agents: as, perClientKb, added: ad },
  };
}
