/**
 * Start-up of the `mcpd` command's processes, against Node's own: `node -e 0` run to its end, a trivial MCP
 * server spawned directly until it answers `initialize`, `mcpd connect SERVER` (what every agent session
 * spawns) until it answers `initialize` through a warm daemon (both with their resident memory at that
 * moment), and `mcpd --version`, `mcpd status` and `mcpd call` run to their end. Times are taken in the harness from spawn() to the
 * event, so every row pays the same fork and exec.
 */
import { FAST_SERVER, MCPD_BIN } from "./env.mjs";
import { rssKb } from "./procfs.mjs";
import { median, rotate } from "./stats.mjs";

/** The rows, in the order the report lists them. */
export const CLI_ROWS = ["node", "server", "connect", "version", "status", "call"];
export const CLI_LABELS = {
  node: "`node -e 0`, whole run",
  server: "a trivial MCP server (tests/bench/fixtures/fast-server.mjs) spawned directly, until its `initialize` answer",
  connect: "`mcpd connect SERVER` on a warm daemon, until its `initialize` answer",
  version: "`mcpd --version`, whole run",
  status: "`mcpd status` on a warm daemon, whole run",
  call: "`mcpd call SERVER echo` on a warm daemon, whole run",
};

const INITIALIZE = `${JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench-cli", version: "1" } },
})}\n`;

const BOUND_MS = 30_000;

/** Runs a process to its end; resolves with the ms from spawn() to its exit. Rejects on a non-zero exit. */
function timeRun(resources, name, args, env) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = resources.spawn(name, process.execPath, args, { env, stdio: ["ignore", "ignore", "pipe"] });
    const timer = setTimeout(() => child.kill("SIGKILL"), BOUND_MS);
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      const ms = performance.now() - t0;
      clearTimeout(timer);
      if (code === 0) resolve(ms);
      else reject(new Error(`${name} exited ${code ?? signal}: ${child.tail()}`));
    });
  });
}

/**
 * Spawns a stdio MCP server command, sends `initialize` at once and resolves with the ms from spawn() to
 * the first line it answers (which must be the result), and its VmRSS in KiB at that moment. Then closes its
 * stdin and waits for it to exit.
 */
function timeInitialize(resources, name, args, env) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = resources.spawn(name, process.execPath, args, { env, stdio: ["pipe", "pipe", "pipe"] });
    const timer = setTimeout(() => child.kill("SIGKILL"), BOUND_MS);
    let out = "";
    let answer;
    child.once("error", reject);
    child.stdin.on("error", () => {}); // the process may be gone before its stdin is flushed; its exit says why
    child.stdin.write(INITIALIZE);
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      if (answer) return;
      out += chunk;
      const nl = out.indexOf("\n");
      if (nl < 0) return;
      answer = { ms: performance.now() - t0, rssKb: rssKb(child.pid), line: out.slice(0, nl) };
      child.stdin.end();
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      if (!answer) return reject(new Error(`${name} exited (${code ?? signal}) before answering initialize: ${child.tail()}`));
      const reply = JSON.parse(answer.line);
      if (reply.id !== 1 || !reply.result?.serverInfo)
        return reject(new Error(`${name} answered initialize with ${answer.line.slice(0, 300)}`));
      resolve({ ms: answer.ms, rssKb: answer.rssKb });
    });
  });
}

/**
 * One round: `samples` runs of every row, in an order rotated per sample. Returns the median of each row's
 * times (ms), and of the RSS (MB) of the trivial server (`serverRssMb`) and of `mcpd connect` (`connectRssMb`).
 * @param daemon a running daemon from startDaemon(); `server` one of its servers.
 */
export async function cliStartupRound(resources, daemon, server, samples) {
  const times = Object.fromEntries(CLI_ROWS.map((r) => [r, []]));
  const rss = { server: [], connect: [] };
  const env = daemon.env;
  const answered = async (row, name, args) => {
    const r = await timeInitialize(resources, name, args, env);
    rss[row].push(r.rssKb / 1024);
    return r.ms;
  };
  const runners = {
    node: () => timeRun(resources, "node -e 0", ["-e", "0"], env),
    server: () => answered("server", "fast-server", [FAST_SERVER]),
    connect: () => answered("connect", "mcpd connect", [MCPD_BIN, "connect", server]),
    version: () => timeRun(resources, "mcpd --version", [MCPD_BIN, "--version"], env),
    status: () => timeRun(resources, "mcpd status", [MCPD_BIN, "status"], env),
    call: () => timeRun(resources, "mcpd call", [MCPD_BIN, "call", server, "echo", '{"text":"hi"}'], env),
  };
  // One untimed run of each first, so every row starts with the same warm file cache.
  for (const row of CLI_ROWS) await runners[row]();
  rss.server.length = 0;
  rss.connect.length = 0;
  for (let i = 0; i < samples; i++) for (const row of rotate(CLI_ROWS, i)) times[row].push(await runners[row]());
  return {
    ...Object.fromEntries(CLI_ROWS.map((r) => [r, median(times[r])])),
    serverRssMb: median(rss.server),
    connectRssMb: median(rss.connect),
  };
}
