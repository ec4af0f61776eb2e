import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createTransport } from "@mcpd/transports";
import { parseConfig } from "../../src/config/index.js";
import { UpstreamClient } from "../../src/supervision/upstream-client.js";
import { isAlive, waitFor } from "../../../tests/helpers/process.js";
import { MCPManager } from "../../src/supervision/manager.js";
import type { ServerHandle, StateChange } from "../../src/supervision/server-handle.js";

const FIXTURE = resolve(import.meta.dirname, "../../../tests/fixtures/servers/mcp-fixture.mjs");
const dirs: string[] = [];
const managers: MCPManager[] = [];
const clients: UpstreamClient[] = [];
const pids: number[] = [];

function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), "mcpd-mgr-"));
  dirs.push(d);
  return d;
}

const alive = isAlive;

function until<T>(cond: () => T | Promise<T>, what: string, timeoutMs = 20_000): Promise<NonNullable<T>> {
  return waitFor(cond, { message: what, timeoutMs });
}

function config(servers: Record<string, unknown>, dir = tmp()) {
  return parseConfig(JSON.stringify({ mcpServers: servers }), join(dir, "config.json"), process.env);
}

function fx(args: string[] = [], extra: Record<string, unknown> = {}) {
  return { command: process.execPath, args: [FIXTURE, ...args], ...extra };
}

function manager(dir = tmp()): MCPManager {
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

function client(args: string[]): UpstreamClient {
  const c = new UpstreamClient(createTransport({ command: process.execPath, args: [FIXTURE, ...args] }));
  clients.push(c);
  return c;
}

function logOf(file: string): any[] {
  return existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
}

const text = (r: any): string => (r.content ?? []).map((c: any) => c.text ?? "").join("");

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  for (const m of managers.splice(0)) await m.shutdown();
  for (const pid of pids.splice(0)) expect(alive(pid), `fixture ${pid} left running`).toBe(false);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("UpstreamClient", () => {
  it("completes the handshake and keeps serverInfo, capabilities, instructions and the version", async () => {
    const log = join(tmp(), "log.jsonl");
    const c = client(["--name", "hs", "--instructions", "be nice", "--log", log]);
    const init = await c.connect();
    expect(init.protocolVersion).toBe("2025-11-25");
    expect(c.serverInfo?.name).toBe("hs");
    expect(c.instructions).toBe("be nice");
    expect(c.capabilities.tools).toBeDefined();
    const got = logOf(log).map((m) => m.method);
    expect(got.slice(0, 2)).toEqual(["initialize", "notifications/initialized"]);
    expect(logOf(log)[0].params.protocolVersion).toBe("2025-11-25");
  });

  it("accepts an older supported version and refuses an unsupported one with a clear error", async () => {
    const old = client(["--version-answer", "2024-11-05"]);
    expect((await old.connect()).protocolVersion).toBe("2024-11-05");
    const bad = client(["--version-answer", "1999-01-01"]);
    await expect(bad.connect()).rejects.toMatchObject({ code: "MCPD_PROTOCOL_VIOLATION", message: expect.stringContaining("1999-01-01") });
    expect(bad.transport.connected).toBe(false);
  });

  it("follows nextCursor across pages", async () => {
    const log = join(tmp(), "log.jsonl");
    const all = client([]);
    await all.connect();
    const total = all.tools.length;
    const pageSize = Math.ceil(total / 3);
    const paged = client(["--page-size", String(pageSize), "--log", log]);
    await paged.connect();
    expect(paged.tools.map((t) => t.name)).toEqual(all.tools.map((t) => t.name));
    expect(logOf(log).filter((m) => m.method === "tools/list").length).toBe(3);
  });

  it("re-lists on list_changed and emits a change event", async () => {
    const c = client([]);
    await c.connect();
    const changed = new Promise<string>((r) => c.once("listChanged", r));
    await c.callTool("change_tools");
    expect(await changed).toBe("tools");
    await until(() => c.tools.some((t) => t.name.startsWith("added_")), "new tool listed");
  });

  it("fails fast, without going upstream, when the server lacks the capability", async () => {
    const log = join(tmp(), "log.jsonl");
    const c = client(["--capabilities-minimal", "--log", log]);
    await c.connect();
    await expect(c.listPrompts()).rejects.toMatchObject({ code: "MCPD_CAPABILITY_NOT_SUPPORTED" });
    expect(logOf(log).some((m) => m.method === "prompts/list")).toBe(false);
  });

  it("fails fast on resources/subscribe when the server's resources capability has no subscribe (MCP_METHODS: server.resources.subscribe)", async () => {
    const log = join(tmp(), "log.jsonl");
    const c = client(["--no-subscribe", "--log", log]);
    await c.connect();
    await expect(c.request("resources/subscribe", { uri: "fixture://static" })).rejects.toMatchObject({
      code: "MCPD_CAPABILITY_NOT_SUPPORTED",
      message: expect.stringContaining('no "resources.subscribe" capability'),
    });
    expect(logOf(log).some((m) => m.method === "resources/subscribe")).toBe(false);
  });

  it("answers the server's ping itself and hands other server requests up (-32601 when unhandled)", async () => {
    const c = client([]);
    await c.connect();
    expect(text(await c.callTool("ping_client"))).toContain("pong");
    const roots = await c.callTool("roots");
    expect(JSON.stringify(roots)).toMatch(/-32601|Method not found/);
    c.requestHandler = async () => ({ roots: [{ uri: "file:///x", name: "x" }] });
    expect(JSON.stringify(await c.callTool("roots"))).toContain("file:///x");
  });
});

describe("MCPManager", () => {
  it("starts eager servers, leaves lazy ones stopped until first use, and stops idle ones", async () => {
    const m = manager();
    await m.discoverAndConnect(config({ eager: fx(), lazy: fx([], { startup: "lazy" }), idle: fx([], { idleTimeout: 300 }) }));
    expect(m.require("eager").state).toBe("ready");
    expect(m.require("lazy").state).toBe("stopped");
    const r = await m.require("lazy").request("tools/call", { name: "echo", arguments: { text: "woke" } }, { waitMs: 20_000 });
    expect(text(r)).toBe("woke");
    expect(m.require("lazy").state).toBe("ready");
    const idle = m.require("idle");
    await until(() => idle.state === "stopped", "idle stop");
    expect(idle.stateReason).toContain("idle");
    const again = await idle.request("tools/call", { name: "echo", arguments: { text: "again" } }, { waitMs: 20_000 });
    expect(text(again)).toBe("again");
  });

  it("serves tools from the disk cache while a slow server starts, and a call made meanwhile succeeds", async () => {
    const dir = tmp();
    const cfg = config({ slow: fx(["--init-delay", "5000"]) }, dir);
    const first = manager(dir);
    await first.discoverAndConnect(cfg);
    const tools = first.require("slow").tools.map((t) => t.name);
    expect(tools).toContain("echo");
    await first.shutdown();

    const second = manager(dir);
    const started = second.discoverAndConnect(cfg);
    const h = await until(() => second.get("slow"), "handle");
    expect(h.state).toBe("starting");
    expect(h.tools.map((t) => t.name)).toEqual(tools);
    const call = h.request("tools/call", { name: "echo", arguments: { text: "waited" } }, { waitMs: 30_000 });
    expect(h.state).toBe("starting");
    expect(text(await call)).toBe("waited");
    await started;
  });

  it("restarts a server killed with SIGKILL and serves again", async () => {
    const m = manager();
    await m.discoverAndConnect(config({ k: fx([], { restart: { initialDelayMs: 50 } }) }));
    const h = m.require("k");
    const pid = h.pid!;
    const states: string[] = [];
    h.on("state", (c: StateChange) => states.push(c.state));
    process.kill(pid, "SIGKILL");
    await until(() => h.state === "ready" && h.pid !== pid, "restarted");
    expect(states).toContain("restarting");
    expect(h.restarts).toBe(1);
    expect(text(await h.request("tools/call", { name: "echo", arguments: { text: "ok" } }, { waitMs: 10_000 }))).toBe("ok");
  });

  it("marks a server that exits at once failed after 5 restarts, keeping its last stderr line", async () => {
    const m = manager();
    await m.discoverAndConnect(config({ bad: fx(["--exit-at-start", "7"], { restart: { initialDelayMs: 10, maxDelayMs: 40 } }) }));
    const h = m.require("bad");
    await until(() => h.state === "failed", "failed state");
    expect(h.restarts).toBe(5);
    expect(h.lastStderr).toContain("fatal: boom");
    await expect(h.request("tools/list", {}, { waitMs: 1000 })).rejects.toMatchObject({
      code: "MCPD_SERVER_UNAVAILABLE",
      message: expect.stringContaining("fatal: boom"),
    });
  });

  it("reload touches only the changed server; the others keep their processes", async () => {
    const dir = tmp();
    const m = manager(dir);
    await m.discoverAndConnect(config({ a: fx(["--name", "a"]), b: fx(["--name", "b"]), c: fx(["--name", "c"]) }, dir));
    const before = Object.fromEntries(m.servers.map((h) => [h.name, h.pid]));
    const result = await m.reload(config({ a: fx(["--name", "a"]), b: fx(["--name", "b2"]), d: fx(["--name", "d"]) }, dir));
    expect(result).toMatchObject({ added: ["d"], removed: ["c"], changed: ["b"], unchanged: ["a"] });
    expect(m.require("a").pid).toBe(before.a);
    expect(m.require("b").pid).not.toBe(before.b);
    expect(m.require("b").client?.serverInfo?.name).toBe("b2");
    expect(m.get("c")).toBeUndefined();
    await until(() => !alive(before.c!), "removed server ended");
    expect(m.require("d").state).toBe("ready");
  });

  it("leaves no process of any server after shutdown, grandchildren included", async () => {
    const dir = tmp();
    const pidFile = join(dir, "grandchild.pid");
    const m = manager(dir);
    await m.discoverAndConnect(config({ a: fx(), g: fx(["--spawn-grandchild", pidFile, "--ignore-sigterm"]) }, dir));
    const grandchild = Number(await until(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim(), "grandchild pid"));
    const all = [...m.servers.map((h) => h.pid!), grandchild];
    for (const p of all) expect(alive(p)).toBe(true);
    await m.shutdown();
    for (const p of all) expect(alive(p)).toBe(false);
  });

  it("regression (overlapping reloads started each added server twice and orphaned one copy): two reloads at once add and start each server once", async () => {
    const dir = tmp();
    const m = manager(dir);
    await m.discoverAndConnect(config({ a: fx(["--name", "a"]) }, dir));
    const added: string[] = [];
    const started: Array<[string, number]> = [];
    m.watch({
      added: (h: ServerHandle) => added.push(h.name),
      state: (h: ServerHandle, change: StateChange) => {
        if (change.state === "ready") started.push([h.name, h.pid as number]);
      },
    });
    const next = config({ a: fx(["--name", "a"]), b: fx(["--name", "b"]), c: fx(["--name", "c"]) }, dir);
    const [r1, r2] = await Promise.all([m.reload(next), m.reload(next)]);
    expect([...r1.added, ...r2.added].sort()).toEqual(["b", "c"]);
    expect(added.sort()).toEqual(["b", "c"]);
    expect(started.map(([n]) => n).sort()).toEqual(["b", "c"]);
    for (const [name, pid] of started) expect(m.require(name).pid).toBe(pid);
  });

  it("a reload whose signal aborted while it read the tool cache, or one after shutdown, applies nothing (MCPD_SHUTTING_DOWN)", async () => {
    const dir = tmp();
    const m = manager(dir);
    await m.discoverAndConnect(config({ a: fx(["--name", "a"]) }, dir));
    const states: string[] = [];
    m.watch({ state: (h: ServerHandle, change: StateChange) => states.push(`${h.name} ${change.state}`) });
    const next = config({ a: fx(["--name", "a2"]), b: fx(["--name", "b"]) }, dir);
    const abort = new AbortController();
    const reload = m.reload(next, abort.signal);
    const reason = new Error("shutting down");
    abort.abort(reason);
    await expect(reload).rejects.toBe(reason);
    await m.shutdown();
    await expect(m.reload(next)).rejects.toMatchObject({ code: "MCPD_SHUTTING_DOWN" });
    expect(m.servers.map((h) => h.name)).toEqual(["a"]);
    expect(states).toEqual(["a stopped"]);
  });

  it("a changed server's restart that overlaps shutdown does not start it again", async () => {
    const dir = tmp();
    const m = manager(dir);
    await m.discoverAndConnect(config({ a: fx(["--name", "a"]) }, dir));
    const states: string[] = [];
    let shutdown: Promise<void> | undefined;
    m.watch({
      state: (_h: ServerHandle, change: StateChange) => {
        states.push(`${change.state} (${change.reason})`);
        // The restart has stopped the old process and waits for it to exit: shutdown begins before it starts the new one.
        if (change.reason === "config changed") shutdown ??= m.shutdown();
      },
    });
    await m.reload(config({ a: fx(["--name", "a2"]) }, dir));
    await shutdown;
    expect(states).toEqual(["stopped (config changed)", "stopped (mcpd shutting down)"]);
    expect(m.require("a").pid).toBeUndefined();
  });

  it("a per-client server's two first requests from one connection at once share one private session", async () => {
    const dir = tmp();
    const m = manager(dir);
    await m.discoverAndConnect(config({ p: fx(["--name", "p"], { sharing: "per-client" }) }, dir));
    const [h1, h2] = await Promise.all([m.handleFor("p", "c1"), m.handleFor("p", "c1")]);
    expect(h1).toBe(h2);
    expect(m.privateSessions("p")).toEqual([h1]);
    await m.shutdown();
    await expect(m.handleFor("p", "c2")).rejects.toMatchObject({ code: "MCPD_SHUTTING_DOWN" });
  });
});
