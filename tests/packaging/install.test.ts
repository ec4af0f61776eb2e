/**
 * Installing mcpd as a user does, away from this repository: the publishable workspaces are packed
 * (`npm pack`), the tarballs installed into a temporary global prefix (`npm install -g --prefix`, run from
 * a temporary directory so nothing of the repository's node_modules is visible), and `mcpd` is then run
 * from that prefix's PATH: --version, start with a fixture stdio server, call, connect driven by the
 * official SDK Client, install-service --print and stop. Third-party dependencies come from the npm
 * cache, or the registry when the cache lacks them.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliWorld, ROOT, collect, until, type CliRun } from "../cli/cli-harness.js";
import { loadedModules, recordingEnv } from "../helpers/module-log.js";

/** The workspaces that are published, by folder and package name. The tests workspace is not one of them. */
const PUBLISHED = [
  ["protocol", "@mcpd/protocol"],
  ["transports", "@mcpd/transports"],
  ["client-sdk", "@mcpd/client"],
  ["daemon", "@mcpd/daemon"],
] as const;

/** Packing and installing take seconds with a warm npm cache; a cold one downloads ~25 packages. */
const INSTALL_TIMEOUT_MS = 300_000;

let world: CliWorld;
let prefix: string;
let tarballs: string[];
/** The environment every installed command runs with: the prefix's bin first on PATH, no npm_* variables. */
let env: NodeJS.ProcessEnv;
const VERSION = JSON.parse(readFileSync(join(ROOT, "daemon/package.json"), "utf8")).version as string;

/** Runs `command args` to completion, bounded; stdout and stderr collected. */
function exec(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<CliRun> {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
  return collect(child, options.timeoutMs ?? 60_000, `${command} ${args.join(" ")}`);
}

/** `mcpd ARGS` as a user's shell runs it: found on PATH, in the installed prefix. */
function mcpd(args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  return exec("mcpd", args, { cwd: world.root, env: { ...env, ...extraEnv } });
}

/** `env` without the variables an enclosing `npm test` sets (npm_config_local_prefix would point npm back here). */
function withoutNpmVariables(from: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(from).filter(([k]) => !/^npm_/i.test(k)));
}

beforeAll(async () => {
  if (!existsSync(join(ROOT, "daemon/dist/cli-bundle/main.cjs"))) throw new Error("the packages are not built: run `npm run build` first");
  world = new CliWorld();
  prefix = join(world.root, "prefix");
  const packs = join(world.root, "tarballs");
  mkdirSync(packs);
  // npm runs with this user's own settings and cache (the world's HOME is empty), minus an enclosing npm's.
  const npmEnv = withoutNpmVariables(process.env);
  // --ignore-scripts: the build is the test run's (prepack would only rebuild what is up to date).
  const pack = await exec(
    "npm",
    ["pack", ...PUBLISHED.flatMap(([dir]) => ["-w", dir]), "--pack-destination", packs, "--ignore-scripts", "--json"],
    { cwd: ROOT, env: npmEnv, timeoutMs: INSTALL_TIMEOUT_MS },
  );
  expect(pack.code, pack.stderr).toBe(0);
  tarballs = (JSON.parse(pack.stdout) as Array<{ filename: string }>).map((p) => join(packs, p.filename));
  // From the temporary root: npm must find no project, and no node_modules, around it.
  const install = await exec(
    "npm",
    ["install", "-g", "--prefix", prefix, "--prefer-offline", "--no-audit", "--no-fund", "--loglevel", "error", ...tarballs],
    { cwd: world.root, env: npmEnv, timeoutMs: INSTALL_TIMEOUT_MS },
  );
  expect(install.code, install.stderr).toBe(0);
  const clean = withoutNpmVariables(world.env);
  env = { ...clean, PATH: [join(prefix, "bin"), dirname(process.execPath), clean.PATH].join(":") };
  world.writeConfig({ fx: world.fixture("fx") });
}, INSTALL_TIMEOUT_MS);

afterAll(async () => {
  if (env) await mcpd(["stop"]).catch(() => {});
  await world?.dispose();
});

describe("the packed packages", () => {
  it("are the four published workspaces, each with its license, compiled code and types; never the tests workspace", () => {
    expect(tarballs.map((t) => t.slice(t.lastIndexOf("/") + 1)).sort()).toEqual(
      ["mcpd-client", "mcpd-daemon", "mcpd-protocol", "mcpd-transports"].map((n) => `${n}-${VERSION}.tgz`),
    );
    const installed = join(prefix, "lib/node_modules");
    expect(readdirSync(installed).sort()).toEqual(["@mcpd"]);
    expect(readdirSync(join(installed, "@mcpd")).sort()).toEqual(["client", "daemon", "protocol", "transports"]);
    const license = readFileSync(join(ROOT, "LICENSE"), "utf8");
    for (const [, name] of PUBLISHED) {
      const dir = join(installed, name);
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      expect(manifest.version, name).toBe(VERSION);
      expect(manifest.private, name).toBeUndefined();
      expect(readFileSync(join(dir, "LICENSE"), "utf8"), name).toBe(license);
      expect(existsSync(join(dir, "dist/index.js")), name).toBe(true);
      expect(existsSync(join(dir, "dist/index.d.ts")), name).toBe(true);
      expect(existsSync(join(dir, "dist/.tsbuildinfo")), name).toBe(false);
      // One version scheme: every internal dependency is pinned to the same version.
      for (const [dep, range] of Object.entries(manifest.dependencies as Record<string, string>)) {
        if (dep.startsWith("@mcpd/")) expect(range, `${name} -> ${dep}`).toBe(VERSION);
      }
    }
  });
  it("refuse to include the tests workspace: packing it fails, saying why", async () => {
    const r = await exec("npm", ["pack", "-w", "tests", "--dry-run"], { cwd: ROOT, env: withoutNpmVariables(process.env) });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("never packed, published or installed");
  });
});

describe("mcpd installed from the tarballs, outside the repository", () => {
  it("is the prefix's mcpd on PATH, and prints its version", async () => {
    const which = await exec("sh", ["-c", "command -v mcpd"], { cwd: world.root, env });
    expect(which.stdout.trim()).toBe(join(prefix, "bin/mcpd"));
    expect(await mcpd(["--version"])).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
  });

  it("starts the daemon from the install, calls a tool, serves the SDK Client through `mcpd connect`, prints a service running the installed command, and stops", async () => {
    const log = join(world.root, "modules.log");
    const started = await mcpd(["start"], recordingEnv({}, log));
    expect(started.code, started.stderr).toBe(0);
    const pid = world.daemonPid() as number;
    expect(pid).toBeTypeOf("number");
    // Every module of mcpd's the daemon loaded came from the prefix, none from this repository.
    const ours = loadedModules(log, pid).filter(
      (u) => u.startsWith("file://") && /\/(@mcpd|daemon|protocol|transports|client-sdk)\//.test(u),
    );
    // The installed command runs its bundle (dist/cli-bundle/), the daemon's code inside it.
    expect(ours.some((u) => u.includes("/@mcpd/daemon/dist/cli-bundle/") && u.endsWith("#/daemon/dist/daemon.js"))).toBe(true);
    expect(ours.filter((u) => !u.startsWith(`file://${prefix}/`))).toEqual([]);

    const call = await mcpd(["call", "fx", "echo", '{"text":"from the install"}']);
    expect(call).toMatchObject({ code: 0, stdout: "from the install\n" });

    // As an MCP client's config runs it: the command `mcpd`, found on PATH.
    const transport = new StdioClientTransport({
      command: "mcpd",
      args: ["connect", "fx"],
      env: env as Record<string, string>,
      stderr: "pipe",
    });
    const client = new Client({ name: "packaging", version: "1.0.0" });
    try {
      await client.connect(transport);
      expect(client.getServerVersion()?.name).toBe("fx");
      const result = await client.callTool({ name: "echo", arguments: { text: "through connect" } });
      expect(result.content).toEqual([{ type: "text", text: "through connect" }]);
    } finally {
      await client.close();
    }

    const unit = await mcpd(["install-service", "--print", "--systemd"]);
    expect(unit.code, unit.stderr).toBe(0);
    const installedBin = realpathSync(join(prefix, "bin/mcpd"));
    expect(installedBin).toBe(join(prefix, "lib/node_modules/@mcpd/daemon/bin/mcpd.js"));
    expect(unit.stdout).toContain(
      `ExecStart="${process.execPath}" "--max-semi-space-size=2" "--expose-gc" "${installedBin}" start --foreground\n`,
    );
    // The service's command line runs.
    expect(await exec(process.execPath, [installedBin, "--version"], { cwd: world.root, env })).toMatchObject({
      code: 0,
      stdout: `${VERSION}\n`,
    });

    const stopped = await mcpd(["stop"]);
    expect(stopped.code, stopped.stderr).toBe(0);
    await until(() => world.processes().length === 0, "the daemon and its server to exit");
  });
});
