/**
 * Scenario 9: peers in the same run. The tools a user would pick instead of mcpd (mcp-proxy, supergateway
 * in stateful mode, mcp-hub's aggregated endpoint), installed at bench time (lib/peer-install.mjs) and
 * started in front of the same fast server (lib/peer-relays.mjs), beside direct stdio and mcpd's paths
 * (`@mcpd/client`, `mcpd connect`, the HTTP front end per server and aggregated). Every row but
 * `@mcpd/client` is the official SDK `Client`, each in its own agent process (workers/peer-agent.mjs).
 * Per row: p50 of sequential `tools/call`, calls/s with 16 in flight from one client, an agent's connect
 * + `tools/list`, and, on a freshly started relay with 4 agents connected (each having made a call), the
 * server processes and the relay's resident memory per agent. A peer that cannot be installed or started
 * is skipped, saying why.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { FAST_SERVER, MCPD_BIN, ROOT, sleep } from "../lib/env.mjs";
import { fastServer, startDaemon } from "../lib/daemon.mjs";
import { PEER_VERSIONS, installPeer } from "../lib/peer-install.mjs";
import { startPeer } from "../lib/peer-relays.mjs";
import { Histogram } from "../lib/histogram.mjs";
import { processTable, processTree, rssKb } from "../lib/procfs.mjs";
import { median, rotate, summarize } from "../lib/stats.mjs";
import { checkWorkers, startWorker } from "../lib/worker-host.mjs";
import { int, mb, ms, num, range, ratio, us } from "../lib/format.mjs";
import { loadWindow } from "./throughput.mjs";

export const id = "peers";
export const title = "9. Peers in the same run";
const PEER_AGENT = join(ROOT, "tests/bench/workers/peer-agent.mjs");
const SERVER = "fast";
const SERVER_SPEC = { name: SERVER, ...fastServer(SERVER) };
const IN_FLIGHT = 16;
const AGENTS = 4;
const PEERS = Object.keys(PEER_VERSIONS);
/** mcpd's HTTP endpoints: what the headline sets against the peers, which are all HTTP relays. */
const FRONT = ["mcpd-http", "mcpd-http-aggregate", "mcpd-sse-aggregate"];

function packageVersion(dir) {
  return JSON.parse(readFileSync(join(ROOT, dir, "package.json"), "utf8")).version;
}
const MCPD_VERSION = packageVersion("daemon");

/**
 * The rows. `relay` names what must run for the row ("none", "mcpd" or a peer); `spec(relay)` is what the
 * row's agents open (a workers/peer-agent.mjs spec).
 */
const ROWS = [
  { id: "stdio", relay: "none", label: "SDK Client, direct stdio (no relay)", spec: () => ({ kind: "stdio", server: SERVER_SPEC }) },
  { id: "mcpd-client", relay: "mcpd", label: `@mcpd/client via mcpd ${MCPD_VERSION}`, spec: (m) => ({ kind: "mcpd-client", ...m.socket }) },
  {
    id: "mcpd-connect",
    relay: "mcpd",
    label: `SDK Client via \`mcpd connect\` (mcpd ${MCPD_VERSION})`,
    spec: (m) => ({ kind: "mcpd-connect", ...m.socket }),
  },
  {
    id: "mcpd-http",
    relay: "mcpd",
    label: `SDK Client via mcpd ${MCPD_VERSION} HTTP front end, /servers/${SERVER}/mcp`,
    spec: (m) => ({ kind: "streamable", url: m.endpoint(`/servers/${SERVER}/mcp`), headers: m.auth }),
  },
  {
    id: "mcpd-http-aggregate",
    relay: "mcpd",
    label: `SDK Client via mcpd ${MCPD_VERSION} HTTP front end, aggregated /mcp`,
    spec: (m) => ({ kind: "streamable", url: m.endpoint("/mcp"), headers: m.auth, tool: `${SERVER}__echo` }),
  },
  {
    // The transport of mcp-hub's aggregated endpoint (legacy HTTP+SSE), on the same view.
    id: "mcpd-sse-aggregate",
    relay: "mcpd",
    label: `SDK Client via mcpd ${MCPD_VERSION} HTTP front end, aggregated /sse (HTTP+SSE)`,
    spec: (m) => ({ kind: "sse", url: m.endpoint("/sse"), headers: m.auth, tool: `${SERVER}__echo` }),
  },
  ...PEERS.map((name) => ({
    id: name,
    relay: name,
    peer: true,
    label: `SDK Client via ${name} ${PEER_VERSIONS[name]}, ${
      name === "mcp-hub" ? "aggregated /mcp (HTTP+SSE)" : name === "supergateway" ? "stateful, Streamable HTTP" : "Streamable HTTP"
    }`,
    spec: (p) => ({ kind: p.transport, url: p.url, tool: p.tool }),
  })),
];

/**
 * Whether `pid` is a fast-server process: `node <FAST_SERVER> ...`. Not the relays and agents whose own
 * arguments name the script, nor a shell a peer runs it through.
 */
function isServer(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[1] === FAST_SERVER;
  } catch {
    return false;
  }
}

/**
 * mcpd with the fast server. The HTTP front end's endpoint and bearer token are read as a user would:
 * `mcpd status --json`, then the token file it names.
 */
async function startMcpd(resources) {
  // Port 0: the front end must not take mcpd's fixed port (a user's daemon may hold it).
  const daemon = await startDaemon(resources, { [SERVER]: fastServer(SERVER) }, { mcpd: { http: { port: 0 } } });
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [MCPD_BIN, "status", "--json"], { env: daemon.env, timeout: 30_000 });
    const http = JSON.parse(stdout).http;
    if (!http?.listening || !http.url) throw new Error(`mcpd's HTTP front end is not listening: ${JSON.stringify(http)}`);
    const token = readFileSync(http.tokenFile, "utf8").trim();
    return {
      pid: daemon.pid,
      socket: { socketPath: daemon.socketPath, serverName: SERVER },
      endpoint: (path) => new URL(path, http.url).href,
      auth: { authorization: `Bearer ${token}` },
      stop: () => daemon.stop(),
    };
  } catch (err) {
    await daemon.stop().catch(() => {});
    throw err;
  }
}

/** Starts what a row needs: nothing, mcpd, or a peer (`peers[name]` is its install). */
function startRelay(resources, kind, peers) {
  if (kind === "none") return { pid: undefined, stop: async () => {} };
  if (kind === "mcpd") return startMcpd(resources);
  return startPeer(resources, peers[kind], SERVER_SPEC);
}

/** Median of 5 summed-VmRSS readings 100 ms apart, in MB (one reading is noisy). */
async function sampleRssMb(pids) {
  const v = [];
  for (let i = 0; i < 5; i++) {
    if (i) await sleep(100);
    v.push(pids.reduce((kb, p) => kb + rssKb(p), 0) / 1024);
  }
  return median(v);
}

/**
 * 4 agents on one row, on a relay started for them, each having made a call: server processes, relay
 * processes and the relay's RSS per agent. Relay processes: the relay's tree (daemon or peer, and the
 * shells a peer runs its server through) and every agent's own relay process (`mcpd connect`), servers
 * excluded.
 */
async function footprint(resources, row, peers) {
  const relay = await startRelay(resources, row.relay, peers);
  const agents = [];
  try {
    const spec = row.spec(relay);
    await Promise.all(
      Array.from({ length: AGENTS }, async (_, i) => {
        agents.push(await startWorker(resources, PEER_AGENT, spec, { name: `peers-${row.id}-agent-${i}` }));
      }),
    );
    await Promise.all(agents.map((a) => a.request({ cmd: "each" }, "each")));
    resources.noteTrees();
    const table = processTable();
    const agentPids = new Set(agents.map((a) => a.pid));
    const pids = new Set();
    for (const root of [...(relay.pid ? [relay.pid] : []), ...agentPids]) for (const p of processTree(root, table)) pids.add(p);
    const servers = [...pids].filter(isServer);
    const relayPids = [...pids].filter((p) => !agentPids.has(p) && !servers.includes(p));
    const rssMb = relayPids.length ? await sampleRssMb(relayPids) : 0;
    checkWorkers(agents);
    return { servers: servers.length, relayProcesses: relayPids.length, rssPerAgentMb: rssMb / AGENTS };
  } finally {
    await Promise.all(agents.map((a) => a.stop().catch(() => {})));
    await relay.stop();
  }
}

/** The best of `ids` at figure `key` in round `i`. */
function best(per, ids, key, i, better) {
  return (better === "lower" ? Math.min : Math.max)(...ids.map((x) => per[x][key][i]));
}

export async function run(ctx) {
  const { resources, quick, rounds, log } = ctx;
  // Relays over HTTP take milliseconds per call on 2 loaded cores: these counts keep 9 rows x 3 rounds near 3 minutes.
  const calls = quick ? 150 : 300;
  const warmup = quick ? 30 : 50;
  const durationMs = quick ? 1_000 : 1_500;
  const connects = quick ? 3 : 5;

  const peers = {};
  const skipped = {};
  for (const name of PEERS) {
    peers[name] = await installPeer(resources, name, log);
    if (peers[name].skipped) skipped[name] = peers[name].skipped;
    else if (peers[name].cached) log(`  ${name}@${peers[name].version}: in the cache`);
  }

  // Calls and connections: one relay of each kind for the whole phase, one agent per row.
  const relays = {};
  const workers = {};
  const per = Object.fromEntries(
    ROWS.map((r) => [r.id, { p50: [], rate: [], relayCpu: [], connect: [], servers: [], relayProcesses: [], rss: [] }]),
  );
  try {
    for (const kind of new Set(ROWS.map((r) => r.relay))) {
      if (skipped[kind]) continue;
      try {
        relays[kind] = await startRelay(resources, kind, peers);
      } catch (err) {
        if (kind === "none" || kind === "mcpd") throw err;
        skipped[kind] = err.message;
      }
    }
    for (const [name, why] of Object.entries(skipped)) log(`  SKIPPED ${name}: ${why}`);
    const live = ROWS.filter((r) => !skipped[r.relay]);
    for (const r of live) workers[r.id] = await startWorker(resources, PEER_AGENT, r.spec(relays[r.relay]), { name: `peers-${r.id}` });
    // One untimed window each first: the first burst of concurrent calls opens connections and compiles code
    // paths the sequential warm-up does not reach, which the first timed row would otherwise pay alone.
    for (const r of live) await loadWindow([workers[r.id]], { inFlight: IN_FLIGHT, durationMs: 500, warmupMs: 100 });
    for (let round = 0; round < rounds; round++) {
      for (const r of rotate(live, round)) {
        const w = workers[r.id];
        const l = await w.request({ cmd: "latency", calls, warmup }, "latency");
        const p50 = Histogram.fromJSON(l.hist).quantile(0.5);
        // The relay's CPU over the window: the daemon or the peer, and the agent's own `mcpd connect`.
        const watch = Object.fromEntries(
          [relays[r.relay].pid, ...(r.id === "mcpd-connect" ? w.ready.pids : [])].filter(Boolean).map((p) => [p, p]),
        );
        const load = await loadWindow([w], { inFlight: IN_FLIGHT, durationMs, warmupMs: 500, watch });
        const relayCpu = Object.values(load.cpuUsPerCall).reduce((a, b) => a + b, 0);
        const cl = await w.request({ cmd: "connect-list", times: connects }, "connect-list", 180_000);
        const connect = median(cl.ms);
        per[r.id].p50.push(p50);
        per[r.id].rate.push(load.rate);
        per[r.id].relayCpu.push(relayCpu);
        per[r.id].connect.push(connect);
        log(
          `  round ${round + 1} ${r.id}: p50 ${num(p50)} µs, ${num(load.rate)} calls/s with ${IN_FLIGHT} in flight (p99 ${num(load.hist.quantile(0.99) / 1000)} ms, max ${num(load.hist.maxUs / 1000)} ms; relay CPU ${num(relayCpu)} µs/call), connect + list ${num(connect)} ms`,
        );
      }
    }
    checkWorkers(Object.values(workers));
  } finally {
    await Promise.all(Object.values(workers).map((w) => w.stop().catch(() => {})));
    for (const relay of Object.values(relays)) await relay.stop().catch(() => {});
  }

  // Footprint: each row's relay started afresh, so each has served nothing but its 4 agents.
  const live = ROWS.filter((r) => !skipped[r.relay]);
  for (let round = 0; round < rounds; round++) {
    for (const r of rotate(live, round)) {
      const f = await footprint(resources, r, peers);
      per[r.id].servers.push(f.servers);
      per[r.id].relayProcesses.push(f.relayProcesses);
      per[r.id].rss.push(f.rssPerAgentMb);
      log(
        `  round ${round + 1} ${r.id}, ${AGENTS} agents: ${f.servers} server process(es), ${f.relayProcesses} relay process(es), relay RSS ${num(f.rssPerAgentMb)} MB per agent`,
      );
    }
  }

  const s = Object.fromEntries(live.map((r) => [r.id, Object.fromEntries(Object.entries(per[r.id]).map(([k, v]) => [k, summarize(v)]))]));
  // The best of mcpd's HTTP endpoints against the best peer at each figure, round by round: every peer is an
  // HTTP relay, so an agent that could use one talks HTTP. Above 1x, mcpd is ahead.
  const ran = live.filter((r) => r.peer).map((r) => r.id);
  const vsBest = (key, better) =>
    summarize(
      per[FRONT[0]][key].map((_, i) => {
        const mine = best(per, FRONT, key, i, better);
        const theirs = best(per, ran, key, i, better);
        return better === "lower" ? theirs / mine : mine / theirs;
      }),
    );
  const headline = ran.length
    ? [
        ["p50 latency: best peer / best mcpd HTTP endpoint", vsBest("p50", "lower")],
        [`calls/s, ${IN_FLIGHT} in flight: best mcpd HTTP endpoint / best peer`, vsBest("rate", "higher")],
        [`relay CPU per call, ${IN_FLIGHT} in flight: best peer / best mcpd HTTP endpoint`, vsBest("relayCpu", "lower")],
        ["agent connect + list: best peer / best mcpd HTTP endpoint", vsBest("connect", "lower")],
        [`relay RSS per agent, ${AGENTS} agents: best peer / best mcpd HTTP endpoint`, vsBest("rss", "lower")],
      ].map(([metric, value]) => ({ metric: `Peers, ${metric}`, value, format: ratio, target: ">= 1x", pass: value.median >= 1 }))
    : [];
  const versions = PEERS.map((n) =>
    skipped[n]
      ? `${n} ${PEER_VERSIONS[n]} (skipped)`
      : `${n} ${peers[n].version}${peers[n].sdk.length ? ` (with ${peers[n].sdk.join(", ")})` : " (its MCP SDK bundled)"}`,
  );
  return {
    id,
    title,
    description: [
      `Every row calls \`echo\` on the same fast server (tests/bench/fixtures/fast-server.mjs), one agent process per row (tests/bench/workers/peer-agent.mjs) using the official SDK \`Client\` (@modelcontextprotocol/sdk ${packageVersion("node_modules/@modelcontextprotocol/sdk")}) except the \`@mcpd/client\` row. mcpd runs one daemon for its rows; each peer runs in front of its own copy of the server, started as its README says (tests/bench/lib/peer-relays.mjs), on 127.0.0.1 and a free port. Versions: ${versions.join("; ")}. The peers are installed at bench time into tests/bench/.peers/ (gitignored), not as dependencies.`,
      `p50: ${calls.toLocaleString("en-US")} sequential calls after ${warmup} warm-up calls. Calls/s: ${IN_FLIGHT} calls in flight from the one client for ${durationMs / 1000} s after a 0.5 s warm-up (and, before the first round, one untimed 0.6 s window per row); relay CPU per call is the user + system time over that window of the daemon or the peer process (plus the agent's \`mcpd connect\`), read from /proc, divided by the calls. Connect + list: a new client opened (initialize; spawning the server for direct stdio, \`mcpd connect\` for its row, a new session over HTTP) and its tools listed, the median of ${connects} one after the other, the SDK already loaded. ${AGENTS} agents: on a relay started for them, ${AGENTS} agent processes connected at once, each having made a call; server processes are the fast-server processes in the relay's and the agents' trees; relay processes are everything else in those trees but the agents (the daemon or the peer, the shells a peer runs its server through, each agent's \`mcpd connect\`); RSS per agent is their summed VmRSS (median of 5 readings) divided by ${AGENTS}. The peers keep their default logging except supergateway (\`--logLevel none\`); mcpd runs at \`--log-level warn\`.`,
      ...Object.entries(skipped).map(([name, why]) => `Skipped: ${name}: ${String(why).split("\n")[0]}`),
    ].join("\n\n"),
    tables: [
      {
        columns: [
          "path",
          "p50 tools/call",
          `calls/s, ${IN_FLIGHT} in flight`,
          "agent connect + list",
          `server processes, ${AGENTS} agents`,
          `relay processes, ${AGENTS} agents`,
          "relay RSS per agent",
          `relay CPU per call, ${IN_FLIGHT} in flight`,
        ],
        rows: ROWS.map((r) => {
          if (skipped[r.relay]) return [r.label, "skipped", "", "", "", "", "", ""];
          const x = s[r.id];
          return [
            r.label,
            range(x.p50, us),
            range(x.rate),
            range(x.connect, ms),
            range(x.servers, int),
            range(x.relayProcesses, int),
            r.relay === "none" ? "none" : range(x.rss, mb),
            r.relay === "none" ? "none" : range(x.relayCpu, us),
          ];
        }),
      },
    ],
    headline,
    data: { summary: s, skipped, versions },
  };
}
