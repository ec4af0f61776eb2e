/**
 * Starts the real mcpd daemon (`mcpd start --foreground`) in a fresh short MCPD_HOME with a given set of
 * servers, waits until every server is ready, and stops it (SIGTERM: the daemon ends its servers). Its HTTP
 * front end listens on a free port (MCPD_HTTP_PORT=0), so a run never collides with a daemon on 7767.
 * It runs as the daemon `mcpd start` and the service files launch does: with the daemon's node flags
 * (DAEMON_NODE_FLAGS) and allocator settings (DAEMON_ALLOCATOR_ENV), which `--foreground` cannot give itself.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect } from "@mcpd/client";
import { DAEMON_ALLOCATOR_ENV, DAEMON_NODE_FLAGS } from "@mcpd/daemon";
import { FAST_SERVER, MCPD_BIN, until } from "./env.mjs";

/** A server entry running the benchmark's fast server. */
export function fastServer(name, extraArgs = []) {
  return { command: process.execPath, args: [FAST_SERVER, "--name", name, ...extraArgs] };
}

/**
 * @param resources the run's Resources.
 * @param servers `mcpServers` entries.
 * @param opts.nodeArgs extra node flags for the daemon (e.g. --cpu-prof).
 * @param opts.mcpd the config's `mcpd` block.
 * @returns {home, socketPath, configFile, env, proc, pid, stop()}
 */
export async function startDaemon(resources, servers, opts = {}) {
  const home = resources.tempDir("mcpdb-");
  const configFile = join(home, "config.json");
  const config = { mcpServers: servers };
  if (opts.mcpd) config.mcpd = opts.mcpd;
  writeFileSync(configFile, JSON.stringify(config, null, 2));
  const env = {
    ...DAEMON_ALLOCATOR_ENV,
    ...process.env,
    MCPD_HOME: home,
    MCPD_CONFIG: configFile,
    MCPD_SOCKET: join(home, "mcpd.sock"),
    MCPD_HTTP_PORT: "0",
  };
  delete env.XDG_RUNTIME_DIR;
  const proc = resources.spawn(
    "mcpd daemon",
    process.execPath,
    [...DAEMON_NODE_FLAGS, ...(opts.nodeArgs ?? []), MCPD_BIN, "start", "--foreground", "--log-level", "warn"],
    {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  proc.stdout.resume();
  const socketPath = env.MCPD_SOCKET;
  const exited = () => proc.exitCode !== null || proc.signalCode !== null;
  await until(() => existsSync(socketPath) || exited(), "the daemon's socket", 30_000);
  if (exited()) throw new Error(`mcpd exited (${proc.exitCode ?? proc.signalCode}) before listening:\n${proc.tail()}`);
  const names = Object.keys(servers);
  // The socket file appears at bind(), a moment before listen(): retry while the daemon lives.
  let control;
  await until(
    async () => {
      if (exited()) throw new Error(`mcpd exited (${proc.exitCode ?? proc.signalCode}):\n${proc.tail()}`);
      control = await connect({ socketPath, reconnect: false, clientInfo: { name: "bench-control", version: "1" } });
      return true;
    },
    "a connection to the daemon",
    30_000,
  ).catch((err) => {
    throw new Error(`${err.message}\ndaemon stderr:\n${proc.tail()}`);
  });
  let fatal;
  try {
    await until(
      async () => {
        if (exited()) fatal = new Error(`mcpd exited:\n${proc.tail()}`);
        const list = fatal ? [] : await control.servers();
        const failed = list.find((s) => s.state === "failed");
        if (failed) fatal = new Error(`server ${failed.name} failed to start:\n${proc.tail()}`);
        return fatal || names.every((n) => list.find((s) => s.name === n)?.state === "ready");
      },
      `all ${names.length} servers ready`,
      60_000,
      50,
    );
  } finally {
    await control.close();
  }
  if (fatal) throw fatal;
  resources.noteTrees();
  const controlClient = () => connect({ socketPath, reconnect: false, control: true, clientInfo: { name: "bench-control", version: "1" } });
  return {
    home,
    socketPath,
    configFile,
    env,
    proc,
    pid: proc.pid,
    /** A control client (caller closes it). */
    control: controlClient,
    /**
     * The HTTP front end, from `mcpd/status` on a control connection: `{url, tokenFile, serverUrl(name)}`
     * (`url` is the aggregate view's endpoint; `serverUrl` one server's transparent view). Throws when it
     * is not listening.
     */
    async httpFront() {
      const control = await controlClient();
      let http;
      try {
        http = (await control.status()).http;
      } finally {
        await control.close();
      }
      if (!http?.url) throw new Error(`the daemon's HTTP front end is not listening: ${http?.error ?? "no http in mcpd/status"}`);
      const base = new URL(http.url);
      return {
        url: http.url,
        tokenFile: http.tokenFile,
        serverUrl: (name) => new URL(`/servers/${encodeURIComponent(name)}/mcp`, base).href,
      };
    },
    async stop() {
      const diedEarly = proc.exitCode !== null || proc.signalCode !== null;
      await resources.stop(proc, 10_000);
      if (diedEarly) throw new Error(`mcpd died during the scenario (${proc.exitCode ?? proc.signalCode}):\n${proc.tail()}`);
      if (proc.exitCode !== 0 && proc.exitCode !== null) throw new Error(`mcpd exited with code ${proc.exitCode}:\n${proc.tail()}`);
      resources.releaseDir(home);
    },
  };
}
