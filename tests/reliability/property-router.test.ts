/**
 * Property: random interleavings of requests, duplicate ids, cancels, progress and disconnects across
 * several connections, run through the real Router and Session in front of real fixture servers.
 * Whatever the interleaving: each connection receives only answers to its own ids, at most once each
 * (twice for an id it re-used while in flight: the original's answer and the "already in flight" error),
 * every request neither cancelled nor disconnected is answered exactly once, progress arrives only under
 * the connection's own tokens and never after the answer, nothing reaches a connection after it left,
 * and once everything settles no table of the router, no session and no server holds an entry.
 */
import fc from "fast-check";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTransport } from "@mcpd/transports";
import { MCPManager, Router, parseConfig, type ServerHandle } from "@mcpd/daemon";
import { FIXTURE, until } from "../e2e/harness.js";
import { isAlive } from "../helpers/process.js";

type Session = ReturnType<Router["attach"]>;
type Id = string | number;
type Kind = "echo" | "slow" | "progress" | "aggregate" | "list" | "ping";

interface Sent {
  id: Id;
  kind: Kind;
  /** The text an echo/slow answer must carry: it names the connection, so a misrouted answer shows. */
  text?: string;
  token?: string;
  steps?: number;
  /** A second request with the same id was sent while this one was in flight. */
  dup: boolean;
  cancelled: boolean;
}

interface Conn {
  n: number;
  session: Session;
  received: any[];
  sent: Map<string, Sent>;
  closed: boolean;
  /** Messages handed to the outbound after the connection was detached: must stay 0. */
  afterClose: number;
  next: number;
}

type Action =
  | { t: "connect" }
  | { t: "request"; conn: number; kind: Kind; ms: number; steps: number; dup: boolean; server: "a" | "b" }
  | { t: "cancel"; conn: number; pick: number }
  | { t: "disconnect"; conn: number }
  | { t: "wait"; ms: number };

const key = (id: Id): string => JSON.stringify(id);
const isResponse = (m: any): boolean => m.id !== undefined && m.method === undefined && ("result" in m || "error" in m);
const isDupError = (m: any): boolean => m.error?.code === -32600 && /already in flight/.test(m.error.message);
const textOf = (m: any): string | undefined => m.result?.content?.[0]?.text;

const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 1, arbitrary: fc.constant({ t: "connect" as const }) },
  {
    weight: 8,
    arbitrary: fc.record({
      t: fc.constant("request" as const),
      conn: fc.nat(7),
      kind: fc.constantFrom<Kind>("echo", "slow", "slow", "progress", "aggregate", "list", "ping"),
      ms: fc.integer({ min: 0, max: 40 }),
      steps: fc.integer({ min: 1, max: 3 }),
      dup: fc.integer({ min: 0, max: 9 }).map((n) => n < 3),
      server: fc.constantFrom("a" as const, "b" as const),
    }),
  },
  { weight: 3, arbitrary: fc.record({ t: fc.constant("cancel" as const), conn: fc.nat(7), pick: fc.nat(50) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("disconnect" as const), conn: fc.nat(7) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant("wait" as const), ms: fc.integer({ min: 0, max: 15 }) }) },
);

let dir: string;
let manager: MCPManager;
let router: Router;
const pids: number[] = [];
let connCounter = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcpd-prop-"));
  const servers = {
    a: { command: process.execPath, args: [FIXTURE, "--name", "a"], healthCheckIntervalMs: 0 },
    b: { command: process.execPath, args: [FIXTURE, "--name", "b"], healthCheckIntervalMs: 0 },
  };
  const config = parseConfig(JSON.stringify({ mcpServers: servers }), join(dir, "config.json"), process.env);
  manager = new MCPManager({
    createTransport: (cfg, logger) => createTransport(cfg, { logger }),
    cacheDir: join(dir, "cache"),
    childrenFile: join(dir, "children.json"),
  });
  router = new Router(manager, {
    maxInFlightPerConnection: 1024,
    clientRequestTimeoutMs: 10_000,
    control: async () => ({ tables: router.tables() }),
  });
  await manager.discoverAndConnect(config);
  for (const h of manager.servers) {
    expect(h.state).toBe("ready");
    pids.push(h.pid as number);
  }
});

afterAll(async () => {
  await manager?.shutdown();
  for (const pid of pids) expect(isAlive(pid), `fixture ${pid} left running`).toBe(false);
  rmSync(dir, { recursive: true, force: true });
});

function connect(conns: Conn[]): Conn {
  const conn: Conn = {
    n: ++connCounter,
    received: [],
    sent: new Map(),
    closed: false,
    afterClose: 0,
    next: 0,
    session: undefined as unknown as Session,
  };
  conn.session = router.attach({
    send: (message) => {
      if (conn.closed) {
        conn.afterClose++;
        return false;
      }
      // A copy, as a socket would serialize it: later mutation upstream must not change what we saw.
      conn.received.push(JSON.parse(JSON.stringify(message)));
      return true;
    },
  });
  conn.session.handle({
    jsonrpc: "2.0",
    id: "init",
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: `p${conn.n}`, version: "1" } },
  });
  conn.session.handle({ jsonrpc: "2.0", method: "notifications/initialized" });
  conns.push(conn);
  return conn;
}

function request(conn: Conn, a: Extract<Action, { t: "request" }>): void {
  // Ids 0, "0", 1, "1", ... on every connection: equal across connections, equal as strings within one.
  const i = conn.next++;
  const id: Id = i % 2 === 0 ? i / 2 : String((i - 1) / 2);
  const tag = `c${conn.n}-${key(id)}`;
  const sent: Sent = { id, kind: a.kind, dup: a.dup, cancelled: false };
  const routed = { "mcpd/server": a.server };
  let msg: object;
  switch (a.kind) {
    case "echo":
      sent.text = tag;
      msg = { name: "echo", arguments: { text: tag }, _meta: routed };
      break;
    case "slow":
      sent.text = tag;
      msg = { name: "slow", arguments: { ms: a.ms, text: tag }, _meta: routed };
      break;
    case "progress":
      // The same token on every connection: the router must keep them apart.
      sent.token = `tok-${i}`;
      sent.steps = a.steps;
      msg = {
        name: "progress",
        arguments: { steps: a.steps, intervalMs: 1 + (a.ms % 5) },
        _meta: { ...routed, progressToken: sent.token },
      };
      break;
    case "aggregate":
      sent.text = tag;
      msg = { name: `${a.server}__slow`, arguments: { ms: a.ms, text: tag } };
      break;
    default:
      msg = {};
  }
  const method = a.kind === "list" ? "tools/list" : a.kind === "ping" ? "ping" : "tools/call";
  conn.sent.set(key(id), sent);
  const wire = { jsonrpc: "2.0", id, method, ...(method === "tools/call" ? { params: msg } : {}) };
  conn.session.handle(wire);
  // A tools/call routed with _meta is in flight synchronously: a second one with the same id right now is a duplicate.
  if (a.dup && a.kind !== "aggregate" && method === "tools/call") conn.session.handle(wire);
  else sent.dup = false;
}

function answers(conn: Conn, id: Id): any[] {
  return conn.received.filter((m) => isResponse(m) && key(m.id) === key(id));
}

/** Requests that must have exactly their expected answers by now. */
function outstanding(conns: Conn[]): string[] {
  const out: string[] = [];
  for (const c of conns) {
    if (c.closed) continue;
    if (answers(c, "init").length !== 1) out.push(`c${c.n} init`);
    for (const s of c.sent.values()) {
      if (!s.cancelled && answers(c, s.id).length < (s.dup ? 2 : 1)) out.push(`c${c.n} ${key(s.id)} ${s.kind}`);
    }
  }
  return out;
}

function settled(sessions: Session[], handles: ServerHandle[]): boolean {
  const t = router.tables();
  return (
    t.progress === 0 &&
    t.subscriptions === 0 &&
    t.relayed === 0 &&
    t.inFlight === 0 &&
    sessions.every((s) => s.inFlight.size === 0) &&
    handles.every((h) => h.stats.inFlight === 0)
  );
}

function check(conns: Conn[]): void {
  for (const c of conns) {
    const where = `connection c${c.n}`;
    expect(c.afterClose, `${where}: messages after disconnect`).toBe(0);
    const tokens = new Map([...c.sent.values()].filter((s) => s.token).map((s) => [s.token as string, s]));
    for (const [index, m] of c.received.entries()) {
      if (m.method !== undefined) {
        expect(m.id, `${where}: no server-to-client request expected`).toBeUndefined();
        if (m.method !== "notifications/progress") continue;
        const s = tokens.get(m.params?.progressToken);
        expect(s, `${where}: progress under a token it never issued: ${JSON.stringify(m)}`).toBeDefined();
        expect(m.params.total, `${where}: progress of another request`).toBe(s?.steps);
        const answeredAt = c.received.findIndex((r) => isResponse(r) && key(r.id) === key((s as Sent).id) && !isDupError(r));
        expect(answeredAt === -1 || index < answeredAt, `${where}: progress after the answer`).toBe(true);
        continue;
      }
      expect(isResponse(m), `${where}: not a response: ${JSON.stringify(m)}`).toBe(true);
      if (m.id === "init") continue;
      const s = c.sent.get(key(m.id));
      expect(s, `${where}: answer to an id it never sent: ${JSON.stringify(m)}`).toBeDefined();
    }
    if (answers(c, "init").length > 0) expect(answers(c, "init")).toHaveLength(1);
    for (const s of c.sent.values()) {
      const got = answers(c, s.id);
      const what = `${where} id ${key(s.id)} (${s.kind}${s.dup ? ", duplicated" : ""}${s.cancelled ? ", cancelled" : ""}${c.closed ? ", disconnected" : ""})`;
      const dupErrors = got.filter(isDupError);
      const own = got.filter((m) => !dupErrors.includes(m));
      expect(dupErrors, `${what}: duplicate-id errors`).toHaveLength(s.dup ? 1 : 0);
      expect(own.length, `${what}: answered more than once: ${JSON.stringify(got)}`).toBeLessThanOrEqual(1);
      if (!s.cancelled && !c.closed) expect(own, `${what}: not answered`).toHaveLength(1);
      const answer = own[0];
      if (answer === undefined) continue;
      expect(answer.error, `${what}: unexpected error ${JSON.stringify(answer.error)}`).toBeUndefined();
      if (s.text !== undefined) expect(textOf(answer), `${what}: someone else's answer`).toBe(s.text);
      if (s.kind === "progress") expect(textOf(answer)).toBe("done");
    }
  }
}

async function run(actions: Action[]): Promise<void> {
  const conns: Conn[] = [];
  connect(conns);
  connect(conns);
  const open = (): Conn[] => conns.filter((c) => !c.closed);
  for (const a of actions) {
    if (a.t === "connect") {
      if (open().length < 6) connect(conns);
      continue;
    }
    if (a.t === "wait") {
      await new Promise((r) => setTimeout(r, a.ms));
      continue;
    }
    const live = open();
    if (live.length === 0) {
      connect(conns);
      continue;
    }
    const conn = live[a.conn % live.length] as Conn;
    if (a.t === "request") request(conn, a);
    else if (a.t === "cancel") {
      const sent = [...conn.sent.values()];
      const s = sent[a.pick % Math.max(1, sent.length)];
      if (!s) continue;
      // Only a request still unanswered can lose its answer; cancelling an answered one changes nothing.
      if (answers(conn, s.id).length < (s.dup ? 2 : 1)) s.cancelled = true;
      conn.session.handle({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: s.id, reason: "property" } });
    } else {
      conn.closed = true;
      void router.detach(conn.session);
    }
  }
  const sessions = conns.map((c) => c.session);
  await until(() => outstanding(conns).length === 0, "every live request answered", 10_000).catch(() => {
    throw new Error(`unanswered: ${outstanding(conns).join(", ")}`);
  });
  for (const c of open()) {
    c.closed = true;
    await router.detach(c.session);
  }
  await until(() => settled(sessions, manager.servers), "router, sessions and servers settled", 10_000).catch(() => {
    throw new Error(
      `not settled: ${JSON.stringify({ tables: router.tables(), sessions: sessions.map((s) => s.inFlight.size), servers: manager.servers.map((h) => h.stats.inFlight) })}`,
    );
  });
  expect(router.sessions.size).toBe(0);
  check(conns);
  for (const c of conns) {
    const sent = [...c.sent.values()];
    covered.requests += sent.length;
    covered.cancelled += sent.filter((x) => x.cancelled).length;
    covered.duplicated += sent.filter((x) => x.dup).length;
    covered.progress += c.received.filter((m) => m.method === "notifications/progress").length;
  }
  covered.connections += conns.length;
}

/** What the runs exercised, so a generator that drifts into trivial sequences fails the test. */
const covered = { requests: 0, cancelled: 0, duplicated: 0, progress: 0, connections: 0 };

describe("router property: random interleavings across connections", () => {
  it("answers each request at most once, only to its own connection, exactly once unless cancelled or disconnected, and leaves no table entry", {
    timeout: 120_000,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 10, maxLength: 80, size: "large" }), run),
      // A failure waits out the settle bounds on every shrink step: stop shrinking after a while and report.
      { numRuns: 30, interruptAfterTimeLimit: 60_000 },
    );
    for (const h of manager.servers) expect(h.state).toBe("ready");
    expect(covered.requests).toBeGreaterThan(200);
    expect(covered.cancelled).toBeGreaterThan(10);
    expect(covered.duplicated).toBeGreaterThan(10);
    expect(covered.progress).toBeGreaterThan(10);
    expect(covered.connections).toBeGreaterThan(60);
  });
});
