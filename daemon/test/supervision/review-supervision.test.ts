/**
 * Regression tests for defects a review of the supervision layer found (per-client sessions and reload,
 * health under traffic, reload of stopped servers, the tool cache's key, re-arming the health monitor,
 * shutdown after a recycle). Each drives MCPManager with the real fixture server.
 */
import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createTransport } from "@mcpd/transports";
import { parseConfig } from "../../src/config/index.js";
import { isAlive, waitFor } from "../../../tests/helpers/process.js";
import { MCPManager } from "../../src/supervision/manager.js";
import type { ServerHandle } from "../../src/supervision/server-handle.js";

const FIXTURE = resolve(import.meta.dirname, "../../../tests/fixtures/servers/mcp-fixture.mjs");
const dirs: string[] = [];
const managers: MCPManager[] = [];
const pids: number[] = [];

function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), "mcpd-rsup-"));
  dirs.push(d);
  return d;
}

function config(servers: Record<string, unknown>, dir: string) {
  return parseConfig(JSON.stringify({ mcpServers: servers }), join(dir, "config.json"), process.env);
}

function fx(args: string[] = [], extra: Record<string, unknown> = {}) {
  return { command: process.execPath, args: [FIXTURE, ...args], ...extra };
}

function manager(dir: string): MCPManager {
  const m = new MCPManager({
    createTransport: (cfg, logger) => createTransport(cfg, { logger }),
    cacheDir: join(dir, "cache"),
    childrenFile: join(dir, "children.json"),
  });
  m.watch({
    state: (h: ServerHandle) => {
      if (h.pid !== undefined && !pids.includes(h.pid)) pids.push(h.pid);
    },
  });
  managers.push(m);
  return m;
}

/** The private session of `conn` for `name`, used once so that it runs; resolves with it. */
async function used(m: MCPManager, name: string, conn: string): Promise<ServerHandle> {
  const h = await m.handleFor(name, conn);
  await h.request("tools/list", {}, { waitMs: 10_000 });
  return h;
}

function until<T>(cond: () => T | Promise<T>, what: string, timeoutMs = 20_000): Promise<NonNullable<T>> {
  return waitFor(cond, { message: what, timeoutMs });
}

/** Processes a test stopped with SIGSTOP: continued at its end, so that nothing is left stopped. */
const frozen: number[] = [];

afterEach(async () => {
  for (const pid of frozen.splice(0)) {
    try {
      process.kill(pid, "SIGCONT");
    } catch {}
  }
  for (const m of managers.splice(0)) await m.shutdown();
  for (const pid of pids.splice(0)) expect(isAlive(pid), `fixture ${pid} left running`).toBe(false);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("per-client sessions", () => {
  it("regression: a per-client session follows its server's reload and removal (it kept running the old command, and a re-added server got the stale session)", async () => {
    const dir = tmp();
    const m = manager(dir);
    const pc = (name: string, extra: Record<string, unknown> = {}) => fx(["--name", name], { sharing: "per-client", ...extra });
    await m.discoverAndConnect(config({ p: pc("p1") }, dir));
    const h = await used(m, "p", "conn1");
    const pid1 = h.pid as number;
    expect(h.client?.serverInfo?.name).toBe("p1");

    await m.reload(config({ p: pc("p2") }, dir));
    const h2 = await used(m, "p", "conn1");
    expect(h2.client?.serverInfo?.name).toBe("p2");
    expect(isAlive(pid1)).toBe(false);

    await m.reload(config({ p: pc("p2", { enabled: false }) }, dir));
    expect(m.privateSessions("p").map((s) => s.state)).toEqual(["disabled"]);
    expect(h2.pid).toBeUndefined();

    await m.reload(config({}, dir));
    expect(m.privateSessions("p")).toEqual([]);

    await m.reload(config({ p: pc("p3") }, dir));
    const h3 = await used(m, "p", "conn1");
    expect(h3).not.toBe(h);
    expect(h3.client?.serverInfo?.name).toBe("p3");
  });

  it("regression: restart and disable of a per-client server reach its private sessions (they went on running)", async () => {
    const dir = tmp();
    const m = manager(dir);
    await m.discoverAndConnect(config({ p: fx(["--name", "p"], { sharing: "per-client" }) }, dir));
    const h = await used(m, "p", "conn1");
    const pid1 = h.pid as number;

    await m.restartServer("p", "restart requested");
    expect(h.state).toBe("ready");
    expect(h.pid).not.toBe(pid1);
    expect(isAlive(pid1)).toBe(false);
    const pid2 = h.pid as number;

    await m.disableServer("p", "disabled for the test");
    expect(h.state).toBe("disabled");
    expect(isAlive(pid2)).toBe(false);

    await m.enableServer("p");
    expect(m.require("p").state).not.toBe("disabled");
    const again = await used(m, "p", "conn1");
    expect(again.state).toBe("ready");
  });
});

describe("health", () => {
  it("regression: a hung server that keeps getting calls is recycled (it was pinged only when idle, and every call that timed out made it look used)", async () => {
    const dir = tmp();
    const m = manager(dir);
    await m.discoverAndConnect(config({ h: fx(["--name", "h"], { healthCheckIntervalMs: 500 }) }, dir));
    const h = m.require("h");
    const hung = h.pid as number;
    process.kill(hung, "SIGSTOP");
    frozen.push(hung);
    // Steady traffic: each call times out before a ping interval has passed, and the next follows at once.
    let traffic = true;
    const call = (): void => {
      if (!traffic) return;
      h.request("tools/call", { name: "echo", arguments: { text: "x" } }, { waitMs: 10_000, timeout: 200 }).then(call, call);
    };
    call();
    try {
      await until(() => h.pid !== undefined && h.pid !== hung, "the hung server recycled");
    } finally {
      traffic = false;
    }
    await until(() => !isAlive(hung), "the hung process ended");
  });
});

describe("reload", () => {
  it("regression: a reload that changes the transport of a stopped server (lazy, or stopped when idle) only gives it the new config (it started it)", async () => {
    const dir = tmp();
    const m = manager(dir);
    const servers = (v: string) => ({
      l: fx(["--name", `l${v}`], { startup: "lazy" }),
      i: fx(["--name", `i${v}`], { idleTimeout: 200 }),
    });
    await m.discoverAndConnect(config(servers("1"), dir));
    const idle = m.require("i");
    await until(() => idle.state === "stopped", "the idle server stopped");
    const r = await m.reload(config(servers("2"), dir));
    expect(r.changed.sort()).toEqual(["i", "l"]);
    for (const name of ["l", "i"]) {
      const h = m.require(name);
      expect({ name, state: h.state, pid: h.pid }).toEqual({ name, state: "stopped", pid: undefined });
      await h.request("tools/list", {}, { waitMs: 10_000 });
      expect(h.client?.serverInfo?.name).toBe(`${name}2`);
    }
  });
});

describe("tool cache", () => {
  it("regression: after a reload that changed its transport, a server's tools are cached under its new config (they were written under the old one's hash)", async () => {
    const dir = tmp();
    const before = config({ s: fx(["--name", "old", "--tool", "old_tool"]) }, dir);
    const after = config({ s: fx(["--name", "new", "--tool", "new_tool"]) }, dir);
    const m = manager(dir);
    await m.discoverAndConnect(before);
    await m.reload(after);
    expect(m.require("s").tools.map((t) => t.name)).toContain("new_tool");
    await m.shutdown();

    const cachedNames = async (cfg: typeof before): Promise<string[]> => {
      const fresh = manager(dir);
      await fresh.load(cfg);
      return fresh.require("s").tools.map((t) => t.name);
    };
    expect(await cachedNames(after)).toContain("new_tool");
    expect(await cachedNames(before)).not.toContain("new_tool");
  });
});

describe("reload of timers", () => {
  it("regression: an idleTimeout a reload sets applies to the running server (the health monitor kept the old one)", async () => {
    const dir = tmp();
    const m = manager(dir);
    await m.discoverAndConnect(config({ i: fx(["--name", "i"]) }, dir));
    const h = m.require("i");
    expect(h.state).toBe("ready");
    const r = await m.reload(config({ i: fx(["--name", "i"], { idleTimeout: 200 }) }, dir));
    expect(r.changed).toEqual(["i"]);
    await until(() => h.state === "stopped", "the server stopped when idle");
    expect(h.stateReason).toContain("idle");
  });
});

describe("shutdown", () => {
  it("regression: shutdown right after a stop still under way waits for that stop's process (it saw no session and returned with the process running)", async () => {
    const dir = tmp();
    const m = manager(dir);
    await m.discoverAndConnect(config({ s: fx(["--name", "s"]) }, dir));
    const h = m.require("s");
    const pid = h.pid as number;
    const stopping = h.stop("idle", "idle for a test");
    await m.shutdown();
    expect(isAlive(pid)).toBe(false);
    await stopping;
  });

  it("regression: shutdown waits for the old process of a session the health check recycled (it returned with that process still running)", async () => {
    const dir = tmp();
    const m = manager(dir);
    await m.discoverAndConnect(config({ h: fx(["--name", "h"], { healthCheckIntervalMs: 200 }) }, dir));
    const h = m.require("h");
    const hung = h.pid as number;
    // Stopped, it ignores its stdin's end and SIGTERM: only the last step of its close (SIGKILL) ends it.
    process.kill(hung, "SIGSTOP");
    frozen.push(hung);
    await until(() => h.state === "restarting", "the hung session recycled");
    await m.shutdown();
    expect(isAlive(hung)).toBe(false);
  });
});
