/**
 * Shared helpers of the fault-injection tests (tests/reliability/faults-*.test.ts): clients that fire
 * many calls at once and check that each gets exactly one answer, status reads, and a ledger of every
 * process a test saw so it can assert that none is left behind.
 */
import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { expect } from "vitest";
import { isAlive } from "../helpers/process.js";
import { ROOT, until, type RawClient, type TestDaemon } from "../e2e/harness.js";

/** The fault fixture server (close_stdout, big_result_first, trickle). */
export const FAULT_SERVER = join(ROOT, "tests/fixtures/faults/fault-server.mjs");

/** A config entry for the fault fixture server. */
export function faultServer(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: process.execPath, args: [FAULT_SERVER, "--name", name], ...extra };
}

/** Waits until every configured server is `ready`. */
export async function allReady(c: RawClient): Promise<void> {
  await until(async () => (await status(c)).servers.every((s: any) => s.state === "ready"), "every server ready");
}

/** Opens `n` raw clients, each bound to `server` (transparent view) or the aggregate view, initialized. */
export async function openClients(d: TestDaemon, n: number, server?: string): Promise<RawClient[]> {
  const out: RawClient[] = [];
  for (let i = 0; i < n; i++) {
    const c = await d.raw();
    if (server !== undefined) await c.request("mcpd/select", { server });
    await c.initialize();
    out.push(c);
  }
  return out;
}

/** `mcpd/status` over a client. */
export async function status(c: RawClient): Promise<any> {
  const r = await c.request("mcpd/status");
  if (!r.result) throw new Error(`mcpd/status failed: ${JSON.stringify(r.error)}`);
  return r.result;
}

/** One server's status entry. */
export async function serverStatus(c: RawClient, name: string): Promise<any> {
  const s = (await status(c)).servers.find((x: any) => x.name === name);
  if (!s) throw new Error(`no server ${name} in status`);
  return s;
}

/** The text of a tools/call response, or throws with the error it carried. */
export function textOf(response: any): string {
  if (!response?.result) throw new Error(`expected a result, got ${JSON.stringify(response?.error ?? response)}`);
  return (response.result.content ?? []).map((c: any) => c.text ?? "").join("");
}

/** Sends a tools/call without waiting; the caller picks the id. */
export function sendCall(c: RawClient, id: string, name: string, args: Record<string, unknown> = {}, server?: string): void {
  const params: Record<string, unknown> = { name, arguments: args };
  if (server !== undefined) params._meta = { "mcpd/server": server };
  c.send({ jsonrpc: "2.0", id, method: "tools/call", params });
}

/** Waits until every id has an answer on `c`, then checks there is exactly one answer per id. */
export async function answers(c: RawClient, ids: string[], timeoutMs = 30_000): Promise<Map<string, any>> {
  const wanted = new Set(ids);
  await until(
    () => {
      const got = new Set<string>();
      for (const m of c.messages) if (wanted.has(m.id) && ("result" in m || "error" in m)) got.add(m.id);
      return got.size === wanted.size;
    },
    `${ids.length} answers`,
    timeoutMs,
  );
  const out = new Map<string, any>();
  for (const m of c.messages) {
    if (!wanted.has(m.id) || !("result" in m || "error" in m)) continue;
    expect(out.has(m.id), `a second answer for ${m.id}: ${JSON.stringify(m).slice(0, 300)}`).toBe(false);
    out.set(m.id, m);
  }
  return out;
}

/** Checks that no id got a second answer since {@link answers} ran (call at the end of a test). */
export function expectSingleAnswers(c: RawClient): void {
  const seen = new Set<unknown>();
  for (const m of c.messages) {
    if (m.id === undefined || m.method !== undefined) continue;
    expect(seen.has(m.id), `two answers for id ${JSON.stringify(m.id)}`).toBe(false);
    seen.add(m.id);
  }
}

/** Reads a pid written by `--spawn-grandchild FILE` once the file exists. */
export async function pidFromFile(file: string): Promise<number> {
  return until(() => {
    const pid = Number(readFileSync(file, "utf8"));
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  }, `pid file ${file}`);
}

/**
 * Every process a test saw (server pids from the `pid` tool, grandchildren, daemons). At the end,
 * {@link PidLedger.expectAllGone} waits (bounded) for all of them to be gone; {@link PidLedger.killAll}
 * is the afterEach safety net, so a failing test never leaves them running either.
 */
export class PidLedger {
  readonly pids = new Set<number>();

  add(...pids: number[]): void {
    for (const p of pids) if (Number.isInteger(p) && p > 0) this.pids.add(p);
  }

  alive(): number[] {
    return [...this.pids].filter((p) => isAlive(p));
  }

  async expectAllGone(timeoutMs = 15_000): Promise<void> {
    await until(() => this.alive().length === 0, `processes ${JSON.stringify(this.alive())} to be gone`, timeoutMs).catch(() => {});
    expect(this.alive()).toEqual([]);
  }

  killAll(): void {
    for (const p of this.alive()) {
      try {
        process.kill(p, "SIGKILL");
      } catch {
        // Gone meanwhile.
      }
    }
    this.pids.clear();
  }
}

/** The pid of a server, through its `pid` tool. */
export async function serverPid(c: RawClient, server?: string): Promise<number> {
  const params: Record<string, unknown> = { name: "pid", arguments: {} };
  if (server !== undefined) params._meta = { "mcpd/server": server };
  return Number(textOf(await c.request("tools/call", params)));
}

/**
 * A raw aggregate-view client that only counts the lines containing `needle` (a notification flood would
 * make a parse-everything client the bottleneck). Other lines are parsed and kept in `messages`.
 */
export class NotificationCounter {
  count = 0;
  readonly messages: any[] = [];
  private rest = "";

  private constructor(
    private readonly socket: Socket,
    private readonly needle: string,
  ) {
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => this.push(chunk));
    socket.on("error", () => {});
  }

  static async open(socketPath: string, needle: string): Promise<NotificationCounter> {
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = connect(socketPath);
      s.once("connect", () => resolve(s));
      s.once("error", reject);
    });
    const counter = new NotificationCounter(socket, needle);
    socket.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "counter", version: "1" } } })}\n`,
    );
    await until(() => counter.messages.some((m) => m.id === 1), "counter initialized");
    socket.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
    return counter;
  }

  private push(chunk: string): void {
    const data = this.rest + chunk;
    let start = 0;
    let nl: number;
    while ((nl = data.indexOf("\n", start)) !== -1) {
      const line = data.slice(start, nl);
      start = nl + 1;
      if (line.includes(this.needle)) this.count++;
      else if (line.trim()) this.messages.push(JSON.parse(line));
    }
    this.rest = data.slice(start);
  }

  close(): void {
    this.socket.destroy();
  }
}

/** The processes of a test's world (see CliWorld.processes) that are fixture servers, by their `--name`. */
export function serversByName(world: { processes(): number[] }): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const pid of world.processes()) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      const at = argv.indexOf("--name");
      if (at >= 0) {
        const name = argv[at + 1] as string;
        out.set(name, [...(out.get(name) ?? []), pid]);
      }
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}
