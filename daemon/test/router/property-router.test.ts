/**
 * Property: random requests, duplicate ids, cancels, progress, server crashes and disconnects across
 * connections, through the real Router before two fake servers in memory that answer when the run says so
 * (`step`: a held call's next progress or its answer; real processes: tests/e2e/). Whatever the
 * interleaving: each connection gets only answers to its own ids, at most once (an id re-used while in
 * flight: the original's answer and one "already in flight" error); a request neither cancelled nor
 * disconnected is answered once (-32062 if its server crashed under it); progress only under the
 * connection's own tokens, never after the answer; nothing after a disconnect; then no table holds an entry.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { FakeCall, FakeUpstream } from "./fake-upstream.js";
import type { MemoryClient, Message } from "./memory-client.js";
import { memoryRouter, type MemoryRouter } from "./memory-router.js";

type Id = string | number;
type Kind = "echo" | "slow" | "progress" | "aggregate" | "list" | "ping";
type Server = "a" | "b";

interface Sent {
  id: Id;
  kind: Kind;
  server: Server;
  /** The text an echo/slow answer must carry: it names the connection, so a misrouted answer shows. */
  text?: string;
  token?: string;
  steps?: number;
  /** A second request with the same id was sent while this one was in flight. */
  dup: boolean;
  cancelled: boolean;
  /** Its server crashed while it was in flight: its answer is -32062. */
  crashed: boolean;
}

interface Conn {
  n: number;
  client: MemoryClient;
  sent: Map<string, Sent>;
  next: number;
}

type Action =
  | { t: "connect" }
  | { t: "request"; conn: number; kind: Kind; steps: number; dup: boolean; server: Server }
  | { t: "cancel"; conn: number; pick: number }
  | { t: "disconnect"; conn: number }
  | { t: "step"; server: Server; pick: number }
  | { t: "crash"; server: Server }
  | { t: "tick" };

const key = (id: Id): string => JSON.stringify(id);
const isResponse = (m: Message): boolean => m.id !== undefined && m.method === undefined;
const isDupError = (m: Message): boolean => m.error?.code === -32600 && /already in flight/.test(m.error.message);
const textOf = (m: Message): string | undefined => m.result?.content?.[0]?.text;
/** The tag a call's arguments carry (which request it is). */
const tagOf = (call: FakeCall): string => String((call.params?.arguments as Message | undefined)?.tag);
/** Lets every promise the router made settle (initialize, listings): one turn of the event loop. */
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 1, arbitrary: fc.constant({ t: "connect" as const }) },
  {
    weight: 8,
    arbitrary: fc.record({
      t: fc.constant("request" as const),
      conn: fc.nat(7),
      kind: fc.constantFrom<Kind>("echo", "slow", "slow", "progress", "aggregate", "list", "ping"),
      steps: fc.integer({ min: 1, max: 3 }),
      dup: fc.integer({ min: 0, max: 9 }).map((n) => n < 3),
      server: fc.constantFrom<Server>("a", "b"),
    }),
  },
  { weight: 3, arbitrary: fc.record({ t: fc.constant("cancel" as const), conn: fc.nat(7), pick: fc.nat(50) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("disconnect" as const), conn: fc.nat(7) }) },
  { weight: 5, arbitrary: fc.record({ t: fc.constant("step" as const), server: fc.constantFrom<Server>("a", "b"), pick: fc.nat(50) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("crash" as const), server: fc.constantFrom<Server>("a", "b") }) },
  { weight: 2, arbitrary: fc.constant({ t: "tick" as const }) },
);

/** One run's world: the router, its connections, and which request each held call is. */
class World {
  readonly r: MemoryRouter = memoryRouter({
    servers: { a: { tools: ["echo", "slow", "progress"] }, b: { tools: ["echo", "slow", "progress"] } },
  });
  readonly conns: Conn[] = [];
  /** The text of every call's arguments -> the request it is (its connection's own record), and its connection. */
  private readonly byTag = new Map<string, { sent: Sent; conn: Conn }>();
  /** Progress sent so far per held progress call. */
  private readonly progressed = new Map<FakeCall, number>();
  private counter = 0;

  constructor() {
    for (const name of ["a", "b"] as const) {
      const fake = this.r.upstream(name).hold("tools/call");
      fake.on("tools/call:echo", (call) => call.answer({ content: [{ type: "text", text: tagOf(call) }] }));
    }
  }

  open(): Conn[] {
    return this.conns.filter((c) => !c.client.closed);
  }

  connect(): void {
    const conn: Conn = { n: ++this.counter, client: this.r.attach(), sent: new Map(), next: 0 };
    conn.client.send({
      jsonrpc: "2.0",
      id: "init",
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: `p${conn.n}`, version: "1" } },
    });
    conn.client.notify("notifications/initialized");
    this.conns.push(conn);
  }

  request(conn: Conn, a: Extract<Action, { t: "request" }>): void {
    // Ids 0, "0", 1, "1", ... on every connection: equal across connections, equal as strings within one.
    const i = conn.next++;
    const id: Id = i % 2 === 0 ? i / 2 : String((i - 1) / 2);
    const tag = `c${conn.n}-${key(id)}`;
    const sent: Sent = { id, kind: a.kind, server: a.server, dup: a.dup, cancelled: false, crashed: false };
    const routed = { "mcpd/server": a.server };
    let params: Message | undefined;
    if (a.kind === "echo" || a.kind === "slow") {
      sent.text = tag;
      params = { name: a.kind, arguments: { tag }, _meta: routed };
    } else if (a.kind === "progress") {
      // The same token on every connection: the router must keep them apart.
      sent.token = `tok-${i}`;
      sent.steps = a.steps;
      params = { name: "progress", arguments: { tag, steps: a.steps }, _meta: { ...routed, progressToken: sent.token } };
    } else if (a.kind === "aggregate") {
      sent.text = tag;
      params = { name: `${a.server}__slow`, arguments: { tag } };
    }
    const method = a.kind === "list" ? "tools/list" : a.kind === "ping" ? "ping" : "tools/call";
    conn.sent.set(key(id), sent);
    this.byTag.set(tag, { sent, conn });
    const wire = { jsonrpc: "2.0", id, method, ...(params ? { params } : {}) };
    conn.client.send(wire);
    // A call goes upstream synchronously: a second one with the same id right now is a duplicate (an echo is answered already).
    if (a.dup && method === "tools/call" && a.kind !== "echo") conn.client.send(wire);
    else sent.dup = false;
  }

  cancel(conn: Conn, pick: number): void {
    const sent = [...conn.sent.values()];
    const s = sent[pick % Math.max(1, sent.length)];
    if (!s) return;
    // Only a request still unanswered can lose its answer; cancelling an answered one changes nothing.
    if (this.answers(conn, s.id).length < (s.dup ? 2 : 1)) s.cancelled = true;
    conn.client.cancel(s.id, "property");
  }

  /** The server advances one held call: its next progress notification, or its answer. */
  step(fake: FakeUpstream, pick: number): void {
    const held = [...fake.pending];
    const call = held[pick % Math.max(1, held.length)];
    if (!call) return;
    const args = call.params?.arguments as Message;
    const steps = typeof args.steps === "number" ? args.steps : 0;
    const done = this.progressed.get(call) ?? 0;
    if (done < steps) {
      this.progressed.set(call, done + 1);
      call.progress(done + 1, steps);
      return;
    }
    call.answer({ content: [{ type: "text", text: steps > 0 ? "done" : String(args.tag) }] });
  }

  /** The server's process dies and comes back: its calls in flight fail. */
  crash(fake: FakeUpstream): void {
    for (const call of fake.pending) {
      const held = this.byTag.get(tagOf(call));
      if (held) held.sent.crashed = true;
    }
    fake.crash("property");
    fake.setState("ready", "restarted");
  }

  /** No server still holds a call its client cancelled or left: the router gave each up upstream at once. */
  checkHeld(): void {
    for (const name of ["a", "b"] as const) {
      for (const call of this.r.upstream(name).pending) {
        const held = this.byTag.get(tagOf(call));
        // Checked after every action: a plain condition, an expect() only when it fails.
        if (held?.sent.cancelled !== false || held.conn.client.closed)
          expect.fail(`${name} still holds ${JSON.stringify(call.params)}: its request was cancelled or its client left`);
      }
    }
  }

  answers(conn: Conn, id: Id): Message[] {
    return conn.client.received.filter((m) => isResponse(m) && key(m.id) === key(id));
  }

  /** Answers every held call, step by step, until no server holds one. */
  async drain(): Promise<void> {
    for (let round = 0; round < 20; round++) {
      await tick();
      const fakes = [this.r.upstream("a"), this.r.upstream("b")];
      if (fakes.every((f) => f.pending.size === 0)) return;
      for (const f of fakes) for (let n = f.pending.size * 4; n > 0 && f.pending.size > 0; n--) this.step(f, 0);
    }
  }
}

async function run(actions: Action[]): Promise<void> {
  const w = new World();
  w.connect();
  w.connect();
  for (const a of actions) {
    if (a.t === "connect") {
      if (w.open().length < 6) w.connect();
    } else if (a.t === "tick") await tick();
    else if (a.t === "step") w.step(w.r.upstream(a.server), a.pick);
    else if (a.t === "crash") w.crash(w.r.upstream(a.server));
    else {
      const live = w.open();
      const conn = live[a.conn % Math.max(1, live.length)];
      if (!conn) w.connect();
      else if (a.t === "request") w.request(conn, a);
      else if (a.t === "cancel") w.cancel(conn, a.pick);
      else void conn.client.disconnect();
    }
    w.checkHeld();
  }
  await w.drain();
  for (const c of w.open()) check(w, c, true);
  const clients = w.conns.map((c) => c.client);
  await w.r.close();
  expect(clients.every((c) => c.session.inFlight.size === 0)).toBe(true);
  for (const c of w.conns) check(w, c, false);
  count(w);
}

function check(w: World, c: Conn, live: boolean): void {
  const where = `connection c${c.n}`;
  expect(c.client.afterClose, `${where}: messages after disconnect`).toBe(0);
  const tokens = new Map([...c.sent.values()].filter((s) => s.token).map((s) => [s.token as string, s]));
  for (const [index, m] of c.client.received.entries()) {
    if (m.method !== undefined) {
      expect(m.id, `${where}: no server-to-client request expected`).toBeUndefined();
      if (m.method !== "notifications/progress") continue;
      const s = tokens.get(m.params?.progressToken);
      expect(s, `${where}: progress under a token it never issued: ${JSON.stringify(m)}`).toBeDefined();
      expect(m.params.total, `${where}: progress of another request`).toBe(s?.steps);
      const answeredAt = c.client.received.findIndex((r) => isResponse(r) && key(r.id) === key((s as Sent).id) && !isDupError(r));
      expect(answeredAt === -1 || index < answeredAt, `${where}: progress after the answer`).toBe(true);
      continue;
    }
    if (m.id === "init") continue;
    expect(c.sent.get(key(m.id)), `${where}: answer to an id it never sent: ${JSON.stringify(m)}`).toBeDefined();
  }
  if (live) expect(w.answers(c, "init"), `${where}: initialize answered`).toHaveLength(1);
  for (const s of c.sent.values()) {
    const got = w.answers(c, s.id);
    const what = `${where} id ${key(s.id)} (${s.kind}${s.dup ? ", duplicated" : ""}${s.cancelled ? ", cancelled" : ""}${s.crashed ? ", crashed" : ""})`;
    const dupErrors = got.filter(isDupError);
    const own = got.filter((m) => !dupErrors.includes(m));
    expect(dupErrors, `${what}: duplicate-id errors`).toHaveLength(s.dup ? 1 : 0);
    expect(own.length, `${what}: answered more than once: ${JSON.stringify(got)}`).toBeLessThanOrEqual(1);
    if (live && !s.cancelled) expect(own, `${what}: not answered`).toHaveLength(1);
    const answer = own[0];
    if (answer === undefined) continue;
    if (s.crashed) {
      expect(answer.error?.code, `${what}: not the crash's error: ${JSON.stringify(answer)}`).toBe(-32062);
      continue;
    }
    expect(answer.error, `${what}: unexpected error ${JSON.stringify(answer.error)}`).toBeUndefined();
    if (s.text !== undefined) expect(textOf(answer), `${what}: someone else's answer`).toBe(s.text);
    if (s.kind === "progress") expect(textOf(answer)).toBe("done");
  }
}

/** What the runs exercised, so a generator that drifts into trivial sequences fails the test. */
const covered = { requests: 0, cancelled: 0, duplicated: 0, crashed: 0, progress: 0, connections: 0 };

function count(w: World): void {
  const sent = w.conns.flatMap((c) => [...c.sent.values()]);
  covered.requests += sent.length;
  covered.cancelled += sent.filter((x) => x.cancelled).length;
  covered.duplicated += sent.filter((x) => x.dup).length;
  covered.crashed += sent.filter((x) => x.crashed).length;
  covered.progress += w.conns.flatMap((c) => c.client.notifications("notifications/progress")).length;
  covered.connections += w.conns.length;
}

describe("router property: random interleavings across connections", () => {
  it("answers each request at most once, only to its own connection, exactly once unless cancelled or disconnected, and leaves no table entry", async () => {
    await fc.assert(fc.asyncProperty(fc.array(action, { minLength: 10, maxLength: 80, size: "large" }), run), { numRuns: 300 });
    expect(covered.requests).toBeGreaterThan(2000);
    expect(covered.cancelled).toBeGreaterThan(100);
    expect(covered.duplicated).toBeGreaterThan(100);
    expect(covered.crashed).toBeGreaterThan(20);
    expect(covered.progress).toBeGreaterThan(100);
    expect(covered.connections).toBeGreaterThan(600);
  });
});
