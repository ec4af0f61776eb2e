/**
 * What the `mcpd` processes load, recorded module by module (tests/helpers/module-recorder.mjs): a command
 * loads its own code and nothing of the others', `mcpd connect` (spawned by every agent session) loads no
 * npm package at all, and a daemon whose servers are all stdio never loads the HTTP (undici) and
 * WebSocket (ws) libraries, which it loads once such a server is configured. The command is CommonJS from its
 * bin on: Node never starts its ES module loader for it.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadedModules, npmPackages, recordingEnv } from "../helpers/module-log.js";
import { CliWorld, MCPD_BIN, until } from "./cli-harness.js";

let world: CliWorld;
let log: string;
beforeEach(() => {
  world = new CliWorld();
  log = join(world.root, "modules.log");
});
afterEach(async () => {
  await world.run(["stop"]).catch(() => {});
  await world.dispose();
});

/** The SDK's stdio transport spawning `mcpd connect fx` in the test's world, with `env`. */
function connectTransport(env: NodeJS.ProcessEnv): StdioClientTransport {
  return new StdioClientTransport({
    command: process.execPath,
    args: [MCPD_BIN, "connect", "fx"],
    env: env as Record<string, string>,
    cwd: world.root,
    stderr: "pipe",
  });
}

/** The command modules (`daemon/dist/cli/commands/<name>.js`, also inside a bundle file) among `urls`, by file name. */
function commandModules(urls: readonly string[]): string[] {
  return urls.flatMap((u) => /\/cli\/commands\/([^/]+)\.js$/.exec(u)?.[1] ?? []).sort();
}

describe("the mcpd command loads only what the command it runs needs", () => {
  it("mcpd --version loads no command, no npm package and no manifest search (regression: the CLI imported every command before running one)", async () => {
    const r = await world.run(["--version"], { env: recordingEnv(world.env, log) });
    expect(r.code).toBe(0);
    const urls = loadedModules(log);
    expect(
      urls.some((u) => u.endsWith("/cli/main.js")),
      "the recorder saw the CLI",
    ).toBe(true);
    expect(commandModules(urls)).toEqual([]);
    expect(npmPackages(urls)).toEqual([]);
    // The version is a constant of the bundle, not found by walking up to package.json at every start.
    expect(urls.filter((u) => u.endsWith("/daemon/dist/infra/package-root.js"))).toEqual([]);
  });

  it("mcpd connect, driven by the SDK Client, loads its own command only: no other command, no npm package (no pino, jsonc-parser, undici, ws), not the client SDK's session code", async () => {
    world.writeConfig({ fx: world.fixture("fx") });
    const started = await world.run(["start"]);
    expect(started.code, started.stderr).toBe(0);

    const transport = connectTransport(recordingEnv(world.env, log));
    const client = new Client({ name: "lazy-loading", version: "1.0.0" });
    try {
      await client.connect(transport);
      const pid = transport.pid;
      expect(pid).toBeTypeOf("number");
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name)).toContain("echo");
      const urls = loadedModules(log, pid as number);
      expect(
        urls.some((u) => u.endsWith("/cli/main.js")),
        "the recorder saw the CLI",
      ).toBe(true);
      expect(commandModules(urls)).toEqual(["connect"]);
      expect(npmPackages(urls)).toEqual([]);
      // ...and from the bundled command (dist/cli-bundle/), not module by module from the compiled packages.
      const files = [...new Set(urls.filter((u) => u.startsWith("file://")).map((u) => u.split("#")[0] as string))];
      expect(files.filter((f) => !f.includes("/daemon/dist/cli-bundle/") && !f.endsWith("/daemon/bin/mcpd.js"))).toEqual([]);
      // A running daemon is found by connecting to it: the full client (sessions, reconnection) is never needed.
      expect(urls.filter((u) => /\/client-sdk\/dist\/(mcpd-client|socket-connection|reconnecting-session)\.js$/.test(u))).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

/**
 * Environment that makes a Node process write, as it exits, the internal modules it loaded (Node's own
 * `process.moduleLoadList`) to `out`. It is preloaded with `--require`, which starts no ES module loader.
 */
function internalModulesEnv(env: NodeJS.ProcessEnv, out: string): NodeJS.ProcessEnv {
  const preload = `${out}.preload.cjs`;
  writeFileSync(
    preload,
    `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(out)}, JSON.stringify(process.moduleLoadList)));\n`,
  );
  return { ...env, NODE_OPTIONS: [env.NODE_OPTIONS, `--require=${preload}`].filter(Boolean).join(" ") };
}

const ESM_LOADER = "NativeModule internal/modules/esm/loader";

/** The list `internalModulesEnv` wrote to `file`; undefined while the process has not written it whole. */
function readList(file: string): string[] | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, "utf8")) as string[];
  } catch {
    return undefined;
  }
}

describe("the mcpd command never starts Node's ES module loader (its async resolve, load and link of every file)", () => {
  it("mcpd --version runs as CommonJS from its bin on (regression: an ES module bin and bundle cost ~10 ms of every start)", async () => {
    const out = join(world.root, "version-internals.json");
    const r = await world.run(["--version"], { env: internalModulesEnv(world.env, out) });
    expect(r.code, r.stderr).toBe(0);
    const internals = JSON.parse(readFileSync(out, "utf8")) as string[];
    expect(internals, "the preload saw Node's bootstrap").toContain("NativeModule internal/modules/cjs/loader");
    expect(internals).not.toContain(ESM_LOADER);
  });

  it("mcpd connect, through a whole session with the SDK Client, never loads it either", async () => {
    world.writeConfig({ fx: world.fixture("fx") });
    const started = await world.run(["start"]);
    expect(started.code, started.stderr).toBe(0);
    const out = join(world.root, "connect-internals.json");
    const transport = connectTransport(internalModulesEnv(world.env, out));
    const client = new Client({ name: "no-esm-loader", version: "1.0.0" });
    await client.connect(transport);
    try {
      const called = await client.callTool({ name: "echo", arguments: { text: "hi" } });
      expect(called.content).toEqual([{ type: "text", text: "hi" }]);
    } finally {
      await client.close();
    }
    const internals = await until(() => readList(out), "mcpd connect to exit and write what it loaded");
    expect(internals).toContain("NativeModule net");
    expect(internals).not.toContain(ESM_LOADER);
  });
});

/** The client SDK's session modules among `urls`: the full client, its reconnecting session, its connection. */
function sessionModules(urls: readonly string[]): string[] {
  return urls.flatMap((u) => /\/client-sdk\/dist\/(mcpd-client|reconnecting-session|socket-connection)\.js$/.exec(u)?.[1] ?? []).sort();
}

/**
 * Checks the modules `urls` of a command that asks the daemon one thing: the one-request client, no session
 * code of the client SDK, its own command module only, no npm package.
 */
function expectOneRequestCommand(urls: readonly string[], command: string): void {
  expect(
    urls.some((u) => u.endsWith("/client-sdk/dist/one-request.js")),
    "the recorder saw the one-request client",
  ).toBe(true);
  expect(sessionModules(urls)).toEqual([]);
  expect(commandModules(urls)).toEqual([command]);
  expect(npmPackages(urls)).toEqual([]);
}

describe("a command that talks to the daemon loads what its one request needs, and nothing it does not run", () => {
  it("mcpd status loads no npm package, no session code of the client SDK (one control request, regression: the whole client, ~4 ms), and neither node:child_process nor node:crypto (regression: the client SDK's index loaded the SSE codec's parser, autostart's child_process and crypto: ~15 ms of every `mcpd status`)", async () => {
    world.writeConfig({ fx: world.fixture("fx") });
    const started = await world.run(["start"]);
    expect(started.code, started.stderr).toBe(0);

    const r = await world.run(["status"], { env: recordingEnv(world.env, log) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("fx");
    expectOneRequestCommand(loadedModules(log), "status");

    // So does a server's stderr tail, asked once (following it, with -f, holds a session).
    const tailLog = join(world.root, "logs-modules.log");
    const logs = await world.run(["logs", "fx", "-n", "1"], { env: recordingEnv(world.env, tailLog) });
    expect(logs.code, logs.stderr).toBe(0);
    expectOneRequestCommand(loadedModules(tailLog), "logs");

    const out = join(world.root, "status-internals.json");
    const again = await world.run(["status"], { env: internalModulesEnv(world.env, out) });
    expect(again.code, again.stderr).toBe(0);
    const internals = JSON.parse(readFileSync(out, "utf8")) as string[];
    expect(internals, "the preload saw the socket").toContain("NativeModule net");
    expect(internals).not.toContain("NativeModule child_process");
    expect(internals).not.toContain("NativeModule crypto");
    expect(internals).not.toContain(ESM_LOADER);
  });

  it("mcpd call loads no session code of the client SDK either (one request, with its progress and cancellation; regression: the whole client and a second round trip)", async () => {
    world.writeConfig({ fx: world.fixture("fx") });
    const started = await world.run(["start"]);
    expect(started.code, started.stderr).toBe(0);

    const r = await world.run(["call", "fx", "echo", '{"text":"hi"}'], { env: recordingEnv(world.env, log) });
    expect(r).toMatchObject({ code: 0, stdout: "hi\n" });
    expectOneRequestCommand(loadedModules(log), "call");
  });
});

describe("the daemon loads its HTTP and WebSocket libraries only for servers that use them", () => {
  it("a daemon whose servers are all stdio loads neither undici nor ws (regression: @mcpd/transports imported them eagerly), nor the OpenTelemetry SDK", async () => {
    world.writeConfig({ fx: world.fixture("fx") });
    const started = await world.run(["start"], { env: recordingEnv(world.env, log) });
    expect(started.code, started.stderr).toBe(0);
    // The stdio server is up and a call went through it: the daemon did what a stdio-only daemon does.
    const call = await world.run(["call", "fx", "echo", '{"text":"hi"}']);
    expect(call).toMatchObject({ code: 0, stdout: "hi\n" });
    const pid = world.daemonPid();
    expect(pid).toBeTypeOf("number");
    const urls = loadedModules(log, pid as number);
    expect(
      urls.some((u) => u.includes("/daemon/dist/daemon.js")),
      "the recorder saw the daemon",
    ).toBe(true);
    expect(npmPackages(urls)).not.toContain("undici");
    expect(npmPackages(urls)).not.toContain("ws");
    // Nor the OpenTelemetry SDK: it is loaded only when mcpd.telemetry.otlp is set.
    expect(npmPackages(urls).filter((p) => p.startsWith("@opentelemetry/"))).toEqual([]);
    // p-queue (a server's calls past its limit) is bundled into the daemon's file, which the recorder sees
    // module by module: the checks above that `mcpd connect`, `status` and `call` load no npm package cover it.
    expect(npmPackages(urls)).toContain("p-queue");
  });

  it("a daemon with an HTTP and a WebSocket server configured loads undici and ws (the same recorder sees them)", async () => {
    // Nothing listens on port 9 (discard) here: the servers fail to start, after their transports connected.
    world.writeConfig({
      fx: world.fixture("fx"),
      web: { type: "http", url: "http://127.0.0.1:9/mcp" },
      sock: { type: "ws", url: "ws://127.0.0.1:9/mcp" },
    });
    const started = await world.run(["start"], { env: recordingEnv(world.env, log) });
    expect(started.code, started.stderr).toBe(0);
    const pid = world.daemonPid() as number;
    await until(() => {
      const npm = npmPackages(loadedModules(log, pid));
      return npm.includes("undici") && npm.includes("ws");
    }, "the daemon to load undici and ws");
  });
});
