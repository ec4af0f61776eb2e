import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { readProcStat } from "@mcpd/transports/procfs";
import { afterEach, describe, expect, it } from "vitest";
import { alive, CliWorld, until } from "./cli-harness.js";

let world: CliWorld;
afterEach(async () => {
  await world?.dispose();
});

describe("mcpd start / stop", () => {
  it("start twice runs one daemon; stop leaves no mcpd or server process", async () => {
    world = new CliWorld();
    world.writeConfig({ fx: world.fixture("fx") });
    const first = await world.run(["start"]);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    const pid = world.daemonPid() as number;
    expect(first.stdout).toContain(`mcpd started (pid ${pid})`);
    expect(first.stdout).toContain(`socket: ${join(world.mcpdHome, "mcpd.sock")}`);

    const second = await world.run(["start"]);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(`mcpd is already running (pid ${pid})`);
    expect(world.daemonPid()).toBe(pid);
    // In the foreground too: said, exit 0 (a service manager must not restart-loop on it).
    const fg = await world.run(["start", "--foreground"]);
    expect(fg.code).toBe(0);
    expect(fg.stderr).toMatch(/already running/);

    // The fixture server came up under the one daemon.
    await until(() => world.processes().length === 2, "daemon + one server");
    expect(world.processes()).toContain(pid);

    const stop = await world.run(["stop"]);
    expect(stop.code).toBe(0);
    expect(stop.stdout).toContain(`mcpd stopped (pid ${pid})`);
    expect(alive(pid)).toBe(false);
    expect(world.processes()).toEqual([]);
    expect(existsSync(join(world.mcpdHome, "mcpd.sock"))).toBe(false);

    const again = await world.run(["stop"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("mcpd is not running");
  });

  it("start after kill -9 of the daemon works and leaves no orphans", async () => {
    world = new CliWorld();
    // --ignore-sigterm: this server outlives its stdin closing, so only the manager's cleanup ends it.
    world.writeConfig({ hung: world.fixture("hung", ["--ignore-sigterm"]) });
    expect((await world.run(["start"])).code).toBe(0);
    const oldDaemon = world.daemonPid() as number;
    const oldServers = await until(() => {
      const p = world.processes().filter((x) => x !== oldDaemon);
      return p.length === 1 ? p : undefined;
    }, "the server to start");
    // Ready first: a server that answers initialize after the daemon died gets EPIPE and exits by itself
    // (the fixture exits on a stdout error), which is not the orphan this test is about.
    await until(
      async () => JSON.parse((await world.run(["status", "--json"])).stdout).servers[0]?.state === "ready",
      "the server to be ready",
    );

    process.kill(oldDaemon, "SIGKILL");
    await until(() => !alive(oldDaemon), "the daemon to die");
    // The orphaned server is still there: this is what the restart must clean up.
    expect(alive(oldServers[0] as number)).toBe(true);

    const start = await world.run(["start"]);
    expect(start.code).toBe(0);
    const newDaemon = world.daemonPid() as number;
    expect(newDaemon).not.toBe(oldDaemon);
    expect(start.stdout).toContain(`mcpd started (pid ${newDaemon})`);
    await until(() => !alive(oldServers[0] as number), "the orphaned server to be ended");
    await until(() => world.processes().filter((x) => x !== newDaemon).length === 1, "the new server");

    expect((await world.run(["stop"])).code).toBe(0);
    await until(() => world.processes().length === 0, "no process left");
  });

  it("start --foreground runs the daemon in the foreground (as this process's child: cli-foreground-reexec), logging to stderr, until SIGTERM", async () => {
    world = new CliWorld();
    world.writeConfig({ fx: world.fixture("fx") });
    const fg = world.spawn(["start", "--foreground"]);
    let err = "";
    fg.stderr?.on("data", (d: Buffer) => (err += d.toString()));
    await until(async () => (await world.run(["status"])).code === 0, "the foreground daemon to answer");
    const s = JSON.parse((await world.run(["status", "--json"])).stdout);
    // The daemon is the process started or, as from a plain node, its child.
    expect(s.daemon.pid === fg.pid || readProcStat(s.daemon.pid)?.ppid === fg.pid).toBe(true);
    expect(s.daemon.logFile).toBeNull();
    expect(err).toMatch(/mcpd started/);
    expect(existsSync(join(world.mcpdHome, "mcpd.log"))).toBe(false);
    const exited = new Promise<number | null>((r) => fg.once("exit", (code) => r(code)));
    fg.kill("SIGTERM");
    expect(await exited).toBe(0);
    await until(() => world.processes().length === 0, "no process left");
  });

  it("a daemon that cannot start: exit 1 with the reason from its log", async () => {
    world = new CliWorld();
    world.writeConfig({ "bad name!": { command: "x" } });
    const r = await world.run(["start"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/exited with code 1/);
    expect(r.stderr).toMatch(/bad name!/);
    expect(r.stderr).toContain(join(world.mcpdHome, "mcpd.log"));
    expect(world.processes()).toEqual([]);
  });

  it("commands that need the daemon exit 3 when it is not running", async () => {
    world = new CliWorld();
    for (const args of [
      ["status"],
      ["tools"],
      ["restart"],
      ["reload"],
      ["call", "a", "b"],
      ["logs", "fx"],
      ["connect", "--no-autostart"],
    ]) {
      const r = await world.run(args);
      expect(r.code, args.join(" ")).toBe(3);
      expect(r.stderr, args.join(" ")).toMatch(/not running|not reachable/);
    }
  });
});

describe("running daemon commands", () => {
  it("status --json parses, follows the documented schema and contains no planted secret", async () => {
    world = new CliWorld();
    world.writeConfig({
      fx: world.fixture("fx", [], { env: { PLANTED_SECRET: "s3cr3t-env-value" } }),
      remote: { type: "http", url: "http://alice:s3cr3t-url-password@127.0.0.1:9/mcp", headers: { Authorization: "Bearer s3cr3t-header" } },
      missing: { command: "mcpd-no-such-command-xyz" },
    });
    expect((await world.run(["start"])).code).toBe(0);
    await until(async () => {
      const r = await world.run(["status", "--json"]);
      const s = JSON.parse(r.stdout);
      return s.servers.find((x: { name: string }) => x.name === "fx").state === "ready";
    }, "fx ready");
    // A call so that the counters move.
    expect((await world.run(["call", "fx", "echo", "--arg", "text=hi"])).code).toBe(0);

    const r = await world.run(["status", "--json"]);
    expect(r.code).toBe(0);
    for (const secret of ["s3cr3t-env-value", "s3cr3t-url-password", "s3cr3t-header"]) expect(r.stdout).not.toContain(secret);
    const s = JSON.parse(r.stdout);
    expect(Object.keys(s)).toEqual(["daemon", "servers", "clients", "http"]);
    expect(Object.keys(s.http).sort()).toEqual(["enabled", "error", "legacySessions", "listening", "sessions", "tokenFile", "url"]);
    expect(s.http).toMatchObject({ enabled: true, listening: true, url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/) });
    expect(s.daemon).toMatchObject({
      pid: world.daemonPid(),
      version: expect.any(String),
      socketPath: join(world.mcpdHome, "mcpd.sock"),
      configFile: world.configFile,
    });
    const fx = s.servers.find((x: { name: string }) => x.name === "fx");
    expect(Object.keys(fx).sort()).toEqual(
      [
        "commandFound",
        "enabled",
        "era",
        "errors",
        "hint",
        "inFlight",
        "lastError",
        "lastStderr",
        "latencyMs",
        "mode",
        "name",
        "pid",
        "rejectedTools",
        "requests",
        "restarts",
        "startedAt",
        "state",
        "stateReason",
        "tools",
        "transport",
        "uiSession",
        "uptimeMs",
      ].sort(),
    );
    expect(fx).toMatchObject({ state: "ready", transport: "stdio", commandFound: true, pid: expect.any(Number), uiSession: null });
    expect(fx.requests).toBeGreaterThanOrEqual(1);
    expect(s.servers.find((x: { name: string }) => x.name === "missing").commandFound).toBe(false);
    // The asking CLI's own connection is not a client it reports.
    expect(s.clients).toEqual([]);

    const human = await world.run(["status"]);
    expect(human.code).toBe(0);
    for (const secret of ["s3cr3t-env-value", "s3cr3t-url-password", "s3cr3t-header"]) expect(human.stdout).not.toContain(secret);
    expect(human.stdout).toMatch(/^SERVER +STATE +TRANSPORT +PID/m);
    expect(human.stdout).toMatch(/^fx +ready +stdio +\d+/m);
    expect(human.stdout).toContain("missing: command not found on the daemon's PATH");
    // NO_COLOR is set and stdout is a pipe: no escape codes.
    expect(human.stdout).not.toContain("\u001b[");
  });

  it("restart, disable, enable, reload (and SIGHUP), tools, prompts, resources, logs", async () => {
    world = new CliWorld();
    world.writeConfig({ fx: world.fixture("fx") });
    expect((await world.run(["start"])).code).toBe(0);
    const status = async (): Promise<{ servers: Array<{ name: string; state: string; pid: number | null; restarts: number }> }> =>
      JSON.parse((await world.run(["status", "--json"])).stdout);
    await until(async () => (await status()).servers[0]?.state === "ready", "fx ready");
    const pid1 = (await status()).servers[0]?.pid as number;

    const restart = await world.run(["restart", "fx"]);
    expect(restart.code).toBe(0);
    expect(restart.stdout).toContain("restarted: fx");
    await until(async () => {
      const s = (await status()).servers[0];
      return s?.state === "ready" && s.pid !== pid1;
    }, "fx restarted");
    await until(() => !alive(pid1), "the old fx process to end");

    const disable = await world.run(["disable", "fx"]);
    expect(disable.stdout).toContain("fx: disabled");
    expect((await world.run(["call", "fx", "echo", "--arg", "text=x"])).code).toBe(1);
    expect((await world.run(["enable", "fx"])).stdout).toMatch(/fx: (ready|starting)/);
    await until(async () => (await status()).servers[0]?.state === "ready", "fx ready again");

    const unknown = await world.run(["restart", "nope"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/nope/);

    world.writeConfig({ fx: world.fixture("fx"), fy: world.fixture("fy") });
    const reload = await world.run(["reload"]);
    expect(reload.code).toBe(0);
    expect(reload.stdout).toContain("added: fy");
    expect(reload.stdout).toContain("unchanged: fx");
    // SIGHUP does the same.
    world.writeConfig({ fx: world.fixture("fx") });
    process.kill(world.daemonPid() as number, "SIGHUP");
    await until(async () => (await status()).servers.length === 1, "fy removed by SIGHUP");
    // An invalid file keeps the old config and says why.
    world.writeConfig({ "bad name!": { command: "x" } });
    const bad = await world.run(["reload"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/bad name!/);
    world.writeConfig({ fx: world.fixture("fx") });
    await until(async () => (await status()).servers[0]?.state === "ready", "fx ready");

    const tools = await world.run(["tools"]);
    expect(tools.code).toBe(0);
    expect(tools.stdout).toMatch(/^NAME +SERVER +TOOL +DESCRIPTION/m);
    expect(tools.stdout).toMatch(/^fx__echo +fx +echo/m);
    const toolsJson = JSON.parse((await world.run(["tools", "fx", "--json"])).stdout);
    expect(toolsJson.find((t: { name: string }) => t.name === "slow")).toMatchObject({ server: "fx", exposedName: "fx__slow" });
    const prompts = await world.run(["prompts"]);
    expect(prompts.stdout).toMatch(/^fx__greet +fx +name/m);
    const resources = await world.run(["resources", "--json"]);
    expect(JSON.parse(resources.stdout).resources.some((r: { uri: string }) => r.uri === "fixture://static/one")).toBe(true);

    // Server stderr through the daemon, and the daemon's log from its file.
    expect((await world.run(["call", "fx", "stderr", "--arg", "text=hello-from-stderr"])).code).toBe(0);
    await until(async () => (await world.run(["logs", "fx"])).stdout.includes("hello-from-stderr"), "server stderr in logs");
    const logs = await world.run(["logs", "-n", "500"]);
    expect(logs.code).toBe(0);
    expect(logs.stdout).toMatch(/^\d{4}-\d\d-\d\d.* INFO +mcpd started/m);
    expect(logs.stdout).not.toMatch(/^\{"level"/m);
  });

  it("logs -f follows the daemon's log and a server's stderr", async () => {
    world = new CliWorld();
    world.writeConfig({ fx: world.fixture("fx") });
    expect((await world.run(["start"])).code).toBe(0);
    await until(async () => JSON.parse((await world.run(["status", "--json"])).stdout).servers[0].state === "ready", "fx ready");

    const follow = world.spawn(["logs", "-f", "-n", "1"]);
    let out = "";
    follow.stdout?.on("data", (d: Buffer) => (out += d.toString()));
    await until(() => out.length > 0, "the first line");
    expect((await world.run(["reload"])).code).toBe(0);
    await until(() => out.includes("config reloaded"), "the reload line to be followed");

    const serverFollow = world.spawn(["logs", "fx", "-f"]);
    let sout = "";
    serverFollow.stdout?.on("data", (d: Buffer) => (sout += d.toString()));
    expect((await world.run(["call", "fx", "stderr", "--arg", "text=followed-line"])).code).toBe(0);
    await until(() => sout.includes("followed-line"), "the server's new stderr line");

    for (const p of [follow, serverFollow]) {
      const exited = new Promise((r) => p.once("exit", r));
      p.kill("SIGINT");
      await exited;
      expect(p.exitCode).toBe(0);
    }
  });

  it("connect bridges stdio to the daemon, starting it when needed", async () => {
    world = new CliWorld();
    world.writeConfig({ fx: world.fixture("fx") });
    const bridge = world.spawn(["connect", "fx"], { stdin: "pipe" });
    let out = "";
    let err = "";
    bridge.stdout?.on("data", (d: Buffer) => (out += d.toString()));
    bridge.stderr?.on("data", (d: Buffer) => (err += d.toString()));
    const send = (msg: object): void => void bridge.stdin?.write(`${JSON.stringify(msg)}\n`);
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    });
    await until(() => out.includes('"id":1'), "initialize answer");
    const init = JSON.parse(out.trim().split("\n")[0] as string);
    expect(init.result.serverInfo.name).toBe("fx");
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: { text: "through the bridge" } } });
    await until(() => out.includes('"id":2'), "tools/call answer");
    expect(out).toContain("through the bridge");
    // Only MCP on stdout; the autostart note on stderr.
    for (const line of out.trim().split("\n")) expect(JSON.parse(line).jsonrpc).toBe("2.0");
    expect(err).toMatch(/started the daemon \(pid \d+\)/);
    bridge.stdin?.end();
    await until(() => bridge.exitCode !== null, "the bridge to exit");
    expect(bridge.exitCode).toBe(0);
    expect(world.daemonPid()).toBeDefined();
    expect(readFileSync(join(world.mcpdHome, "mcpd.pid"), "utf8").trim()).toBe(String(world.daemonPid()));
    expect((await world.run(["stop"])).code).toBe(0);
    await until(() => world.processes().length === 0, "no process left");
  });

  /**
   * Runs `fn` while the daemon of a fresh world is stopped with SIGSTOP, then lets it go on and stops it.
   * The kernel still completes connections to a stopped process's listening socket: only no answer comes.
   */
  async function whileDaemonStopped(fn: () => Promise<void>): Promise<void> {
    world = new CliWorld();
    world.writeConfig({ fx: world.fixture("fx") });
    expect((await world.run(["start"])).code).toBe(0);
    const pid = world.daemonPid() as number;
    process.kill(pid, "SIGSTOP");
    try {
      await fn();
    } finally {
      process.kill(pid, "SIGCONT");
    }
    expect((await world.run(["stop"])).code).toBe(0);
  }

  it("regression: connect to a daemon that accepts but never answers (stopped with SIGSTOP) exits 3 after MCPD_CONNECT_TIMEOUT_MS instead of hanging", async () => {
    await whileDaemonStopped(async () => {
      const r = await world.run(["connect", "fx", "--no-autostart"], {
        env: { ...world.env, MCPD_CONNECT_TIMEOUT_MS: "500" },
        timeoutMs: 30_000,
      });
      expect(r.code).toBe(3);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain(`did not answer on ${join(world.mcpdHome, "mcpd.sock")} within 500 ms`);
    });
  });

  it("regression: status, call and logs -f against a daemon that accepts but never answers exit 3 after MCPD_CONNECT_TIMEOUT_MS, naming it (status and call waited out the request's 60 s deadline; logs -f exited 1 with a bare timeout)", async () => {
    await whileDaemonStopped(async () => {
      const env = { ...world.env, MCPD_CONNECT_TIMEOUT_MS: "500" };
      for (const args of [["status"], ["call", "fx", "echo", '{"text":"hi"}'], ["logs", "fx", "-f"]]) {
        const r = await world.run(args, { env, timeoutMs: 30_000 });
        expect(r.code, `${args[0]}: ${r.stderr}`).toBe(3);
        expect(r.stdout).toBe("");
        expect(r.stderr).toContain(`mcpd accepted the connection on ${join(world.mcpdHome, "mcpd.sock")} but did not answer within 500 ms`);
      }
    });
  });
});
