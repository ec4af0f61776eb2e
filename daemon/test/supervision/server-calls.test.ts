/**
 * A server's calls past its concurrency limit, against the real stdio fixture server (which logs every
 * message it receives, in order): what waits in the queue, what goes before it, what overtakes it, and
 * what becomes of it while the server restarts, is reloaded or is stopped.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Cancellation, type JsonObject, type RequestId } from "@mcpd/protocol";
import { waitFor } from "../../../tests/helpers/process.js";
import { parseConfig } from "../../src/config/index.js";
import type { ServerCalls } from "../../src/supervision/server-calls.js";
import type { ServerHandle } from "../../src/supervision/server-handle.js";
import type { MCPManager } from "../../src/supervision/manager.js";
import { type Cleanups, startManager, tempDir } from "../helpers/daemon-parts.js";

const STDIO_FIXTURE = resolve(import.meta.dirname, "../../../tests/fixtures/servers/mcp-fixture.mjs");
const cleanups: Cleanups = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface World {
  dir: string;
  manager: MCPManager;
  h: ServerHandle;
  /** What the server(s) received, in order, one label each (see {@link label}). */
  received: () => string[];
  /** The config entry of the fixture server `s`, with `extra` fields. */
  entry: (extra?: Record<string, unknown>) => Record<string, unknown>;
}

/** `tools/call echo b` -> "call b", `tools/call slow` -> "call slow", a cancel -> "cancelled <upstream id>", else the method. */
function label(m: { method?: string; params?: JsonObject }): string {
  const p = m.params ?? {};
  if (m.method === "tools/call") {
    const args = (p.arguments ?? {}) as JsonObject;
    return `call ${typeof args.text === "string" ? args.text : String(p.name)}`;
  }
  if (m.method === "notifications/cancelled") return `cancelled ${String(p.requestId)}`;
  return m.method ?? "?";
}

/** A manager running the fixture as server `s` with `maxConcurrency: 1` and `extra` fields. */
async function world(extra: Record<string, unknown> = {}): Promise<World> {
  const dir = tempDir(cleanups, "mcpd-queue-");
  const log = join(dir, "received.jsonl");
  const entry = (more: Record<string, unknown> = {}): Record<string, unknown> => ({
    command: process.execPath,
    args: [STDIO_FIXTURE, "--log", log],
    maxConcurrency: 1,
    ...extra,
    ...more,
  });
  const manager = await startManager(cleanups, dir, { s: entry() });
  const h = manager.require("s");
  expect(h.state).toBe("ready");
  const received = (): string[] =>
    existsSync(log)
      ? readFileSync(log, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((line) => label(JSON.parse(line)))
      : [];
  return { dir, manager, h, received, entry };
}

/** Tasks waiting in `h`'s queue (calls, and the session's list re-reads, which `h.inFlight` does not count). */
const waiting = (h: ServerHandle): number => (h as unknown as { calls: ServerCalls }).calls.waiting;

/** A `tools/call` through `h`, as a promise of its outcome (result or error); `cancellation` gives it up. */
function call(h: ServerHandle, name: string, args: JsonObject, cancellation = new Cancellation(), onId?: (id: RequestId) => void) {
  const options: Parameters<ServerHandle["request"]>[2] = { waitMs: 20_000, timeout: 60_000, cancellation };
  if (onId) options.onRequestId = onId;
  return h.request<JsonObject>("tools/call", { name, arguments: args }, options).then(
    (r) => r,
    (err: unknown) => err as Error,
  );
}

const text = (r: unknown): string => ((r as { content?: Array<{ text?: string }> }).content ?? []).map((c) => c.text).join("");

/** A call the server holds (slow, 60 s) in the one slot, once the server has it; its upstream id and how to cancel it. */
async function holdSlot(w: World): Promise<{ id: RequestId; cancel: Cancellation; outcome: Promise<unknown> }> {
  const cancel = new Cancellation();
  let id: RequestId | undefined;
  const outcome = call(w.h, "slow", { ms: 60_000 }, cancel, (i) => (id = i));
  await waitFor(() => id !== undefined && w.received().includes("call slow"), { message: "the slow call reached the server" });
  return { id: id as RequestId, cancel, outcome };
}

describe("a server's calls past its concurrency limit", () => {
  it("a cancellation overtakes queued calls: a cancelled waiting call never reaches the server, and the cancel of a running one is not queued behind the waiting ones", async () => {
    const w = await world();
    const slow = await holdSlot(w);
    const b = new Cancellation();
    const queuedB = call(w.h, "echo", { text: "b" }, b);
    const queuedC = call(w.h, "echo", { text: "c" });
    await waitFor(() => w.h.inFlight === 3, { message: "b and c wait for the slot" });
    const why = new Error("the agent cancelled b");
    b.cancel(why);
    expect(await queuedB).toBe(why);
    expect(w.h.inFlight, "b left at once").toBe(2);
    slow.cancel.cancel(new Error("the agent cancelled the slow call"));
    expect(text(await queuedC)).toBe("c");
    const log = w.received();
    expect(log.slice(log.indexOf("call slow"))).toEqual(["call slow", `cancelled ${String(slow.id)}`, "call c"]);
  });

  it("a list re-read waiting for a slot goes before the calls that waited longer (p-queue priority), within the limit", async () => {
    const w = await world();
    const slow = await holdSlot(w);
    const queued = [call(w.h, "echo", { text: "b" }), call(w.h, "echo", { text: "c" })];
    await waitFor(() => w.h.inFlight === 3, { message: "b and c wait for the slot" });
    void w.h.client?.refresh("tools");
    // The refresher may hold the re-read back for its rate limit (1 s after the first listing) first.
    const lists = (): number => w.received().filter((l) => l === "tools/list").length;
    await waitFor(() => waiting(w.h) === 3 || lists() > 1, { message: "the re-read waits for the slot" });
    expect(lists(), "the re-read waits: the slot is taken").toBe(1);
    slow.cancel.cancel(new Error("done with it"));
    expect((await Promise.all(queued)).map(text)).toEqual(["b", "c"]);
    const after = w.received().slice(w.received().indexOf("call slow"));
    expect(after).toEqual(["call slow", `cancelled ${String(slow.id)}`, "tools/list", "call b", "call c"]);
  });

  it("a health ping is never queued: it reaches a server whose slot is taken while calls wait (pings bypass the limit on purpose)", async () => {
    const w = await world({ healthCheckIntervalMs: 100 });
    const slow = await holdSlot(w);
    const queued = call(w.h, "echo", { text: "b" });
    await waitFor(() => w.h.inFlight === 2, { message: "b waits for the slot" });
    await waitFor(() => w.received().includes("ping"), { message: "a health ping reached the server" });
    expect(w.received()).not.toContain("call b");
    slow.cancel.cancel(new Error("done with it"));
    expect(text(await queued)).toBe("b");
  });

  it("the queue waits while the server restarts: calls that were waiting for a slot when it crashed go to the new process", async () => {
    const w = await world({ restart: { initialDelayMs: 50, maxDelayMs: 50 } });
    const slow = await holdSlot(w);
    const oldPid = w.h.pid as number;
    const queued = [call(w.h, "echo", { text: "b" }), call(w.h, "echo", { text: "c" })];
    await waitFor(() => w.h.inFlight === 3, { message: "b and c wait for the slot" });
    process.kill(oldPid, "SIGKILL");
    const crashed = (await slow.outcome) as Error & { code?: string };
    expect(crashed.code).toBe("MCPD_TRANSPORT_CLOSED");
    expect((await Promise.all(queued)).map(text)).toEqual(["b", "c"]);
    expect(w.h.state).toBe("ready");
    expect(w.h.pid).not.toBe(oldPid);
    // Each went to the new process only: the log holds the old one's messages, then the new one's.
    const log = w.received();
    expect(log.indexOf("call b")).toBeGreaterThan(log.lastIndexOf("initialize"));
    expect(log.filter((l) => l === "call b" || l === "call c")).toEqual(["call b", "call c"]);
  });

  it("calls waiting for a slot when the server gives up fail as calls waiting for it do: -32060 with its reason", async () => {
    const w = await world({ restart: { maxRestarts: 0 } });
    const slow = await holdSlot(w);
    const queued = call(w.h, "echo", { text: "b" });
    await waitFor(() => w.h.inFlight === 2, { message: "b waits for the slot" });
    process.kill(w.h.pid as number, "SIGKILL");
    await slow.outcome;
    const err = (await queued) as Error & { code?: string };
    expect(err.code).toBe("MCPD_SERVER_UNAVAILABLE");
    expect(err.message).toMatch(/^Server "s" is failed: session closed: .*gave up after 0 restarts/);
    expect(w.received()).not.toContain("call b");
  });

  it("over maxQueue a call fails at once with MCPD_QUEUE_FULL; with maxQueue 0 a call with a free slot still goes", async () => {
    const w = await world({ maxQueue: 1 });
    const slow = await holdSlot(w);
    const queued = call(w.h, "echo", { text: "b" });
    await waitFor(() => w.h.inFlight === 2, { message: "b waits for the slot" });
    const refused = (await call(w.h, "echo", { text: "c" })) as Error & { code?: string };
    expect(refused.code).toBe("MCPD_QUEUE_FULL");
    expect(refused.message).toBe('Server "s" has 1 requests waiting (maxQueue 1)');
    slow.cancel.cancel(new Error("done with it"));
    expect(text(await queued)).toBe("b");

    const none = await world({ maxQueue: 0 });
    expect(text(await call(none.h, "echo", { text: "free slot" }))).toBe("free slot");
  });
});

/** Whether `h`'s queue is held (a restart or a drain under way). */
const held = (h: ServerHandle): boolean => (h as unknown as { calls: ServerCalls }).calls.held;

/**
 * A call that runs until the test ends it: the fixture's `roots` tool, which asks mcpd for the roots and
 * answers once it has them, and the test gives them when it wants (`finish`).
 */
async function runningUntilFinished(w: World): Promise<{ outcome: Promise<unknown>; finish: () => void }> {
  let finish: (() => void) | undefined;
  w.manager.serverRequests = () => new Promise<JsonObject>((resolve) => (finish = () => resolve({ roots: [] })));
  const outcome = call(w.h, "roots", {});
  await waitFor(() => finish !== undefined, { message: "the server asked for the roots" });
  return { outcome, finish: () => finish?.() };
}

describe("draining a server's calls on reload and on stop (woken by the calls' ends: see call-queue.test.ts)", () => {
  it("a reload that restarts a server lets its running call finish first, and a call made meanwhile goes to the new process", async () => {
    const w = await world();
    const running = await runningUntilFinished(w);
    const oldPid = w.h.pid;
    const events: string[] = [];
    void running.outcome.then(() => events.push("running call answered"));
    const next = parseConfig(
      JSON.stringify({ mcpServers: { s: w.entry({ env: { CHANGED: "1" } }) } }),
      join(w.dir, "config.json"),
      process.env,
    );
    const reloaded = w.manager.reload(next, undefined, 30_000).then((diff) => {
      events.push("reloaded");
      return diff;
    });
    await waitFor(() => held(w.h) || events.length > 0, { message: "the reload holds the queue while it drains" });
    const during = call(w.h, "echo", { text: "during the reload" });
    await waitFor(() => w.h.inFlight === 2 || events.length > 0, { message: "the new call waits" });
    expect(events, "the reload waits for the running call").toEqual([]);
    expect(w.h.pid, "the server is not restarted while its call runs").toBe(oldPid);
    running.finish();
    expect(text(await running.outcome)).toBe('{"roots":[]}');
    expect((await reloaded).changed).toEqual(["s"]);
    expect(events).toEqual(["running call answered", "reloaded"]);
    expect(text(await during)).toBe("during the reload");
    expect(w.h.pid).not.toBe(oldPid);
    const log = w.received();
    expect(log.indexOf("call during the reload")).toBeGreaterThan(log.lastIndexOf("initialize"));
  });

  it("shutdown lets a running call finish before the server is stopped; a call waiting for a slot then fails with the state", async () => {
    const w = await world();
    const running = await runningUntilFinished(w);
    const queued = call(w.h, "echo", { text: "b" });
    await waitFor(() => w.h.inFlight === 2, { message: "b waits for the slot" });
    const shutdown = w.manager.shutdown(30_000);
    await waitFor(() => held(w.h) || w.h.state !== "ready", { message: "the shutdown holds the queue while it drains" });
    expect(w.h.state, "the server runs until its call has finished").toBe("ready");
    running.finish();
    expect(text(await running.outcome)).toBe('{"roots":[]}');
    await shutdown;
    const err = (await queued) as Error & { code?: string };
    expect(err.code).toBe("MCPD_SERVER_UNAVAILABLE");
    expect(err.message).toBe('Server "s" is stopped: mcpd shutting down');
    expect(w.h.state).toBe("stopped");
    expect(w.received()).not.toContain("call b");
  });
});
