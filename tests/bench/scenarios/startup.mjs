/**
 * Scenario 4: agent start-up. Time from an agent process's start (Node's bootstrap included) to "every tool
 * of 10 servers listed": spawning the servers itself with the official SDK, versus connecting to a warm mcpd
 * that already runs the same 10 servers (with @mcpd/client, with the SDK Client over McpdTransport, over
 * `mcpd connect`, and over Streamable HTTP to the daemon's HTTP front end). Then the `mcpd` command's own
 * start-up on that daemon, beside Node's (lib/cli-startup.mjs).
 */
import { join } from "node:path";
import { mkdirSync } from "node:fs";
import { AGENT_WORKER, MCPD_BIN } from "../lib/env.mjs";
import { startDaemon } from "../lib/daemon.mjs";
import { asConfig, realisticServers } from "../lib/servers.mjs";
import { rotate, summarize } from "../lib/stats.mjs";
import { Worker } from "../lib/worker-host.mjs";
import { mb, ms, num, range, ratio } from "../lib/format.mjs";
import { CLI_LABELS, CLI_ROWS, cliStartupRound } from "../lib/cli-startup.mjs";

export const id = "startup";
export const title = "4. Agent start-up with 10 servers";
const SERVER_COUNT = 10;
const MODES = ["direct", "mcpd-client", "mcpd-sdk", "mcpd-connect", "mcpd-http"];
const LABELS = {
  direct: "SDK Client, spawning the 10 servers",
  "mcpd-client": "@mcpd/client on a warm mcpd (connect + mcpd/tools)",
  "mcpd-sdk": "SDK Client over McpdTransport on a warm mcpd (connect + tools/list)",
  "mcpd-connect": "SDK Client via `mcpd connect` on a warm mcpd (spawn the bridge + initialize + tools/list)",
  "mcpd-http": "SDK Client via mcpd's HTTP front end, warm (initialize + tools/list)",
};

/** Runs one agent to "listed" and lets it exit. */
export async function runAgent(resources, spec, name) {
  const w = new Worker(resources, AGENT_WORKER, spec, { name });
  try {
    const listed = await w.next("listed", 120_000);
    resources.noteTrees();
    return listed;
  } finally {
    await w.stop(15_000);
  }
}

export async function run(ctx) {
  const { resources, rounds, log, quick } = ctx;
  const dir = resources.tempDir("mcpdb-start-");
  mkdirSync(join(dir, "direct"));
  mkdirSync(join(dir, "daemon"));
  const direct = realisticServers(SERVER_COUNT, join(dir, "direct"));
  const daemon = await startDaemon(resources, asConfig(realisticServers(SERVER_COUNT, join(dir, "daemon"))));
  try {
    const front = await daemon.httpFront();
    const specs = {
      direct: { mode: "direct", servers: direct },
      "mcpd-client": { mode: "mcpd-client", socketPath: daemon.socketPath },
      "mcpd-sdk": { mode: "mcpd-sdk", socketPath: daemon.socketPath },
      "mcpd-connect": {
        mode: "mcpd-connect",
        bridge: { command: process.execPath, args: [MCPD_BIN, "connect", "--no-autostart"], env: { MCPD_SOCKET: daemon.socketPath } },
      },
      "mcpd-http": { mode: "mcpd-http", url: front.url, tokenFile: front.tokenFile },
    };
    // One untimed start of each, so every path starts with the same warm file cache.
    for (const m of MODES) await runAgent(resources, specs[m], `agent-warmup-${m}`);
    const per = Object.fromEntries(MODES.map((m) => [m, { at: [], afterBoot: [], boot: [], imp: [], conn: [], list: [] }]));
    const ratios = { client: [], sdk: [], clientAfterBoot: [], work: [], httpOverConnect: [], httpOverConnectAt: [] };
    const tools = {};
    for (let r = 0; r < rounds; r++) {
      const at = {};
      const afterBoot = {};
      for (const m of rotate(MODES, r)) {
        const res = await runAgent(resources, specs[m], `agent-${m}`);
        if (res.servers !== SERVER_COUNT) throw new Error(`${m}: tools of ${res.servers} servers listed, expected ${SERVER_COUNT}`);
        if (!(res.tools > 0)) throw new Error(`${m}: no tools listed`);
        tools[m] = res.tools;
        at[m] = res.atMs;
        afterBoot[m] = res.atMs - res.bootMs;
        per[m].at.push(res.atMs);
        per[m].afterBoot.push(afterBoot[m]);
        // Phases: Node's bootstrap, importing the client library, connecting (mcpd), listing (direct: spawning + connecting + listing).
        per[m].boot.push(res.bootMs);
        per[m].imp.push(res.importedMs - res.bootMs);
        per[m].conn.push(res.connectedMs === undefined ? NaN : res.connectedMs - res.importedMs);
        per[m].list.push(res.atMs - (res.connectedMs ?? res.importedMs));
        log(
          `  round ${r + 1} ${m}: ${num(res.atMs)} ms from process start (${num(afterBoot[m])} ms after Node's bootstrap), ${res.tools} tools`,
        );
      }
      ratios.client.push(at.direct / at["mcpd-client"]);
      ratios.sdk.push(at.direct / at["mcpd-sdk"]);
      ratios.clientAfterBoot.push(afterBoot.direct / afterBoot["mcpd-client"]);
      // Getting the tools once the library is loaded: spawn+connect+list directly vs connect+list on mcpd.
      ratios.work.push(per.direct.list.at(-1) / (per["mcpd-client"].conn.at(-1) + per["mcpd-client"].list.at(-1)));
      // An agent's connect time: connect + initialize + tools/list, once its client library is loaded.
      const connectTime = (m) => per[m].conn.at(-1) + per[m].list.at(-1);
      ratios.httpOverConnect.push(connectTime("mcpd-http") / connectTime("mcpd-connect"));
      ratios.httpOverConnectAt.push(at["mcpd-http"] / at["mcpd-connect"]);
    }
    const opt = (v) => (v.every(Number.isNaN) ? undefined : summarize(v));
    const s = Object.fromEntries(
      MODES.map((m) => [
        m,
        {
          at: summarize(per[m].at),
          afterBoot: summarize(per[m].afterBoot),
          boot: summarize(per[m].boot),
          imp: summarize(per[m].imp),
          conn: opt(per[m].conn),
          list: summarize(per[m].list),
          // connect + initialize + tools/list once the library is loaded (direct: spawning included).
          connectTime: summarize(per[m].list.map((l, i) => l + (Number.isNaN(per[m].conn[i]) ? 0 : per[m].conn[i]))),
        },
      ]),
    );
    const r = Object.fromEntries(Object.entries(ratios).map(([k, v]) => [k, summarize(v)]));

    // The mcpd command's own start-up on the same warm daemon (one of its fixture servers for connect).
    const samples = quick ? 5 : 15;
    const cli = { ...Object.fromEntries(CLI_ROWS.map((row) => [row, []])), serverRssMb: [], connectRssMb: [] };
    for (let round = 0; round < rounds; round++) {
      const res = await cliStartupRound(resources, daemon, "fixture1", samples);
      for (const key of Object.keys(cli)) cli[key].push(res[key]);
      log(
        `  round ${round + 1} cli: node -e 0 ${num(res.node)} ms, mcpd connect to initialize ${num(res.connect)} ms (${num(res.connectRssMb)} MB), ` +
          `--version ${num(res.version)} ms, status ${num(res.status)} ms, call ${num(res.call)} ms`,
      );
    }
    const cliVsNode = (row) => summarize(cli[row].map((v, i) => v / cli.node[i]));
    const c = Object.fromEntries(Object.entries(cli).map(([k, v]) => [k, summarize(v)]));
    return {
      id,
      title,
      description: `The 10 servers: @modelcontextprotocol/server-everything (stdio), @modelcontextprotocol/server-memory and 8 copies of tests/fixtures/servers/mcp-fixture.mjs, all run with \`node\` directly (no npx). Time is \`performance.now()\` inside the agent when the last listing arrived, i.e. from the agent process's start, Node's own bootstrap (~"boot" below) and the import of the client library included. The tool counts differ because mcpd declares sampling, elicitation and roots upstream, so server-everything registers more tools for it (${tools.direct} direct vs ${tools["mcpd-client"]} through mcpd). \`mcpd connect\` and the HTTP front end serve the aggregate view (tools named \`<server>__<tool>\`); over \`mcpd connect\`, "connecting" includes spawning the bridge process (a Node process of its own), over HTTP it is the initialize POST that opens a session (the bearer token is read from the daemon's token file first).`,
      tables: [
        {
          columns: ["agent", "from process start", "after Node's bootstrap", "tools"],
          rows: MODES.map((m) => [LABELS[m], range(s[m].at, ms), range(s[m].afterBoot, ms), String(tools[m])]),
        },
        {
          caption: "Where the time goes (medians)",
          columns: [
            "agent",
            "Node's bootstrap",
            "importing the client library",
            "connecting",
            "listing (direct: spawning, connecting, listing)",
          ],
          rows: MODES.map((m) => [
            LABELS[m],
            ms(s[m].boot.median),
            ms(s[m].imp.median),
            s[m].conn ? ms(s[m].conn.median) : "(in the next column)",
            ms(s[m].list.median),
          ]),
        },
        {
          caption: `The mcpd command's start-up on the same warm daemon (median of ${samples} runs per round, order rotated; \`mcpd connect fixture1\`; time from spawn() in the harness)`,
          columns: ["process", "time", "vs `node -e 0`", "RSS"],
          rows: CLI_ROWS.map((row) => [
            CLI_LABELS[row],
            range(c[row], ms),
            row === "node" ? "1x" : range(cliVsNode(row), ratio),
            row === "connect" ? range(c.connectRssMb, mb) : row === "server" ? range(c.serverRssMb, mb) : "",
          ]),
        },
      ],
      headline: [
        {
          metric: "Agent start-up, 10 servers: spawning directly / warm mcpd (@mcpd/client)",
          value: r.client,
          format: ratio,
          target: ">= 50x",
          pass: r.client.median >= 50,
        },
        { metric: "Agent start-up, 10 servers: spawning directly / warm mcpd (SDK over McpdTransport)", value: r.sdk, format: ratio },
        { metric: "Agent start-up after Node's bootstrap: direct / warm mcpd (@mcpd/client)", value: r.clientAfterBoot, format: ratio },
        { metric: "Getting 10 servers' tools once the library is loaded: direct / warm mcpd (@mcpd/client)", value: r.work, format: ratio },
        {
          metric: "`mcpd connect` until its initialize answer / `node -e 0` whole run",
          value: cliVsNode("connect"),
          format: ratio,
          target: "<= 1.3x",
          pass: cliVsNode("connect").median <= 1.3,
        },
        // The commands a user types are held to the same start-up target as `mcpd connect`.
        ...[
          ["version", "`mcpd --version`"],
          ["status", "`mcpd status`"],
          ["call", "`mcpd call`"],
        ].map(([row, name]) => ({
          metric: `${name} / \`node -e 0\`, whole runs`,
          value: cliVsNode(row),
          format: ratio,
          target: "<= 1.3x",
          pass: cliVsNode(row).median <= 1.3,
        })),
        { metric: "`mcpd connect` RSS at its initialize answer", value: c.connectRssMb, format: mb },
        {
          metric: "Agent connect + initialize + tools/list, 10 servers: HTTP front end / `mcpd connect`",
          value: r.httpOverConnect,
          format: ratio,
        },
      ],
      frontHow: `a fresh agent process per measurement listing every tool of ${SERVER_COUNT} servers the daemon already runs (aggregate view: \`mcpd connect\` without a server, \`/mcp\` over HTTP); one untimed start of each first.`,
      front: [
        {
          figure:
            "an agent's connect + initialize + tools/list of 10 servers, once its client library is loaded (direct: spawning the servers; (c): connect + mcpd/tools)",
          format: ms,
          better: "lower",
          values: {
            a: s.direct.connectTime,
            c: s["mcpd-client"].connectTime,
            d: s["mcpd-connect"].connectTime,
            e: s["mcpd-http"].connectTime,
          },
          ratio: r.httpOverConnect,
        },
        {
          figure: "the same, from the agent process's start (Node's bootstrap and the library's import included)",
          format: ms,
          better: "lower",
          values: { a: s.direct.at, c: s["mcpd-client"].at, d: s["mcpd-connect"].at, e: s["mcpd-http"].at },
          ratio: r.httpOverConnectAt,
        },
      ],
      data: { summary: s, ratios: r, tools, cli: c },
    };
  } finally {
    await daemon.stop();
  }
}
