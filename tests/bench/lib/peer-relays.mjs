/**
 * Starts each peer of the "peers" scenario the way its README says, in front of one stdio server, on
 * 127.0.0.1 only and on a port nobody else uses, and says how a client reaches it:
 *
 *   mcp-proxy     `mcp-proxy --host 127.0.0.1 --port 0 -- <server command>`: one server process for every
 *                 client; Streamable HTTP at /mcp
 *   supergateway  `supergateway --stdio "<server command>" --outputTransport streamableHttp --stateful
 *                 --port 0 --logLevel none`: one server process per session; Streamable HTTP at /mcp
 *   mcp-hub       `mcp-hub --port P --config <file naming the server>`: one server process for every client;
 *                 its aggregated endpoint, HTTP+SSE at /mcp (the SDK's SSEClientTransport), tools named
 *                 `<server>__<tool>`
 *
 * Every peer runs with Node's `--require tests/bench/fixtures/loopback-listen.cjs`, which binds a listen()
 * given no host to 127.0.0.1 (supergateway and mcp-hub take no listen address) and reports the port a peer
 * got (supergateway and mcp-proxy print the port they were asked for, 0). mcp-hub refuses port 0, so it is
 * given a port found free a moment before. Peers keep their default logging except supergateway, whose
 * per-request log is turned off (`--logLevel none`, as mcpd runs at `warn` here).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { ROOT, until } from "./env.mjs";

const LOOPBACK_LISTEN = join(ROOT, "tests/bench/fixtures/loopback-listen.cjs");
const START_TIMEOUT_MS = 60_000;

/** A TCP port free on 127.0.0.1 a moment ago (for a peer that cannot be given 0). */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** A command line for `sh -c` (supergateway runs its server through the shell). */
function shellLine(command, args) {
  return [command, ...args].map((a) => `'${String(a).replace(/'/g, `'\\''`)}'`).join(" ");
}

/** The first address a peer reported listening on (lib/../fixtures/loopback-listen.cjs writes them). */
function listenedPort(file) {
  if (!existsSync(file)) return undefined;
  const first = readFileSync(file, "utf8").split("\n")[0];
  return first ? JSON.parse(first).port : undefined;
}

/**
 * Starts `peer` (an {@link installPeer} result) in front of `server` ({name, command, args}).
 * @returns {name, version, url, transport: "streamable" | "sse", tool, proc, pid, stop()}
 * @throws when the peer exits or is not serving within 60 s (with the end of its output).
 */
export async function startPeer(resources, peer, server) {
  const dir = resources.tempDir("mcpdb-peer-");
  const listenFile = join(dir, "listen.jsonl");
  let args;
  let port;
  let transport = "streamable";
  let tool = "echo";
  const env = { ...process.env, MCPD_BENCH_LISTEN_FILE: listenFile };
  switch (peer.name) {
    case "mcp-proxy":
      args = ["--host", "127.0.0.1", "--port", "0", "--", server.command, ...server.args];
      break;
    case "supergateway":
      args = ["--stdio", shellLine(server.command, server.args), "--outputTransport", "streamableHttp", "--stateful", "--port", "0"];
      args.push("--logLevel", "none");
      break;
    case "mcp-hub": {
      const config = join(dir, "mcp-hub.json");
      writeFileSync(config, JSON.stringify({ mcpServers: { [server.name]: { command: server.command, args: server.args } } }, null, 2));
      port = await freePort();
      args = ["--port", String(port), "--config", config];
      transport = "sse";
      tool = `${server.name}__echo`;
      // mcp-hub keeps its state (workspaces, logs, a marketplace cache) under the home and XDG directories.
      Object.assign(env, {
        HOME: dir,
        XDG_STATE_HOME: join(dir, "state"),
        XDG_DATA_HOME: join(dir, "data"),
        XDG_CONFIG_HOME: join(dir, "config"),
      });
      break;
    }
    default:
      throw new Error(`unknown peer ${JSON.stringify(peer.name)}`);
  }
  const proc = resources.spawn(peer.name, process.execPath, ["--require", LOOPBACK_LISTEN, peer.bin, ...args], {
    cwd: dir,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  // Its log is drained (a full pipe would stall it) and its end kept for error messages.
  let out = "";
  proc.stdout.setEncoding("utf8");
  proc.stdout.on("data", (d) => {
    out = (out + d).slice(-8_000);
  });
  const tail = () => `${out.slice(-2_000)}\n${proc.tail()}`.trim();
  const exited = () => proc.exitCode !== null || proc.signalCode !== null;
  const stop = async () => {
    await resources.stop(proc, 5_000);
    resources.releaseDir(dir);
  };
  try {
    const got = await until(
      () => {
        if (exited()) throw new Error(`${peer.name} exited (${proc.exitCode ?? proc.signalCode})`);
        return listenedPort(listenFile);
      },
      `${peer.name} to listen`,
      START_TIMEOUT_MS,
      50,
    );
    port ??= got;
    const base = `http://127.0.0.1:${port}`;
    if (peer.name === "mcp-hub") {
      // It listens first, then starts its servers: serving means its health says ready with the server connected.
      await until(
        async () => {
          if (exited()) throw new Error(`${peer.name} exited (${proc.exitCode ?? proc.signalCode})`);
          const res = await fetch(`${base}/api/health`);
          const health = await res.json();
          return health.state === "ready" && health.servers?.find((s) => s.name === server.name)?.status === "connected";
        },
        `${peer.name} to report ${server.name} connected`,
        START_TIMEOUT_MS,
        100,
      );
    }
  } catch (err) {
    await stop();
    throw new Error(`${peer.name} ${peer.version} did not start: ${err.message}\n${tail()}`);
  }
  resources.noteTrees();
  return { name: peer.name, version: peer.version, url: `http://127.0.0.1:${port}/mcp`, transport, tool, proc, pid: proc.pid, tail, stop };
}
