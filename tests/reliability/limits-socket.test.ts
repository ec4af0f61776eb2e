/**
 * The daemon's own bounds on its clients (daemon/src/socket/socket-server.ts, docs/reliability.md): a cap on
 * connections that keeps open files in reserve for its servers, a daemon-wide budget for bytes held for
 * clients (partial input lines and unsent output) that disconnects the client holding the most, and a
 * deadline for a line that never ends. Each is checked on the real daemon, with raw socket clients.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { connect as tcpConnect, type Socket } from "node:net";
import { McpdClient, type McpdError } from "@mcpd/client";
import { afterEach, describe, expect, it } from "vitest";
import { fixture, startTestDaemon, until, type RawClient, type TestDaemon } from "../e2e/harness.js";
import { openFds } from "../helpers/process.js";
import { PidLedger, openClients, sendCall, answers, serverPid, serverStatus, status, textOf } from "./faults-harness.js";

let daemon: TestDaemon | undefined;
const ledger = new PidLedger();

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  ledger.killAll();
});

/** A raw connection and whether the daemon has closed it. */
interface Probe {
  client: RawClient;
  /** `accepted`: its ping was answered; `refused`: it got an error line with id null; `closed`: closed without a word. */
  kind: "accepted" | "refused" | "closed";
  /** The id-null error line, when refused. */
  error?: { code: number; message: string; data?: Record<string, unknown> };
  closed(): boolean;
}

/** Watches a client's socket for the daemon closing it. */
function closeFlag(c: RawClient): () => boolean {
  let closed = c.socket.destroyed;
  c.socket.once("close", () => (closed = true));
  return () => closed;
}

/** The first id-null error line a client received. */
function nullError(c: RawClient): any {
  return c.messages.find((m) => m.id === null && m.error)?.error;
}

/** An initialized control connection: `mcpd/status` shows the daemon's counters only to those. */
async function controlClient(d: TestDaemon): Promise<RawClient> {
  const c = await d.control();
  await c.initialize();
  return c;
}

/** Opens a connection and pings: answered, refused with an error line, or closed. */
async function probe(d: TestDaemon): Promise<Probe> {
  const client = await d.raw();
  const closed = closeFlag(client);
  client.send({ jsonrpc: "2.0", id: "probe", method: "ping" });
  const kind = await until(() => {
    if (client.messages.some((m) => m.id === "probe")) return "accepted" as const;
    if (nullError(client)) return "refused" as const;
    return closed() ? ("closed" as const) : undefined;
  }, "the probe's ping answered, refused or closed");
  return { client, kind, error: nullError(client), closed };
}

/** The beginning of a ping request whose line is not finished; `"}}\n"` finishes it. */
function partialPing(id: string, padBytes: number): string {
  return `{"jsonrpc":"2.0","id":"${id}","method":"ping","params":{"pad":"${"x".repeat(padBytes)}`;
}

/** The daemon's JSON log lines (it runs at debug level in the foreground). */
function logLines(d: TestDaemon): any[] {
  return d
    .stderr()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => {
      try {
        return JSON.parse(l);
      } catch {
        return undefined;
      }
    })
    .filter(Boolean);
}

describe("limits: connections and open files", () => {
  it("under a low open-file limit (regression: with ulimit -n 256 and 276 connections the next server start failed with EMFILE and the daemon died): the connection over the cap gets -32072 and is closed, servers still start and restart, a freed slot is taken again", {
    timeout: 180_000,
  }, async () => {
    const d = (daemon = await startTestDaemon({ a: fixture("a"), l: fixture("l", [], { startup: "lazy" }) }, { nofile: 128 }));
    const control = await controlClient(d);
    await until(async () => (await serverStatus(control, "a")).state === "ready", "a ready");
    ledger.add(d.proc.pid as number, await serverPid(control, "a"));

    const held: RawClient[] = [];
    let refused: Probe | undefined;
    // 150 connections are more than 128 open files can hold: without a cap the daemon runs out.
    for (let i = 0; i < 150 && !refused; i++) {
      const p = await probe(d);
      if (p.kind === "accepted") held.push(p.client);
      else refused = p;
    }
    expect(refused?.kind, `after ${held.length} connections: ${refused?.kind ?? "never refused"}`).toBe("refused");
    expect(refused!.error).toMatchObject({ code: -32072, data: { mcpdCode: "MCPD_TOO_MANY_CONNECTIONS" } });
    expect(refused!.error!.message).toMatch(/^Too many connections: mcpd accepts at most \d+ at once \(open-file limit 128/);
    await until(() => refused!.closed(), "the refused connection closed");
    const st = await status(control);
    expect(st.daemon.maxConnections).toBe(held.length + 1);
    expect(st.daemon.connections).toBe(held.length + 1);
    expect(held.length).toBeGreaterThan(4);

    // More are refused the same way; the connections already open are unaffected.
    for (let i = 0; i < 5; i++) {
      const p = await probe(d);
      expect(p.kind).toBe("refused");
      expect(p.error?.code).toBe(-32072);
    }
    for (const c of [held[0]!, held[held.length - 1]!]) expect((await c.request("ping")).result).toEqual({});

    // The descriptors kept in reserve: a lazy server starts on first use, a killed server restarts.
    expect(textOf(await control.request("tools/call", { name: "echo", arguments: { text: "lazy" }, _meta: { "mcpd/server": "l" } }))).toBe(
      "lazy",
    );
    ledger.add(await serverPid(control, "l"));
    const old = await serverPid(control, "a");
    process.kill(old, "SIGKILL");
    await until(async () => {
      const s = await serverStatus(control, "a");
      return s.state === "ready" && s.pid !== old;
    }, "a restarted");
    ledger.add(await serverPid(control, "a"));
    expect(textOf(await control.request("tools/call", { name: "a__echo", arguments: { text: "again" } }))).toBe("again");

    // Slots freed by closed connections are taken again.
    for (const c of held.splice(0, 3)) c.close();
    await until(async () => (await probe(d)).kind === "accepted", "a new connection accepted after three closed");
    expect(d.proc.exitCode).toBeNull();
    expect(d.proc.signalCode).toBeNull();
    expect(logLines(d).some((l) => /connection refused: too many connections/.test(l.msg))).toBe(true);
  });

  it("mcpd.maxConnections: the connection over it gets -32072 naming the setting and is closed; the others keep working; a freed slot is taken again", async () => {
    const d = (daemon = await startTestDaemon({ a: fixture("a") }, { settings: { maxConnections: 3 } }));
    const accepted = [await probe(d), await probe(d), await probe(d)];
    expect(accepted.map((p) => p.kind)).toEqual(["accepted", "accepted", "accepted"]);
    const over = await probe(d);
    expect(over.kind).toBe("refused");
    expect(over.error).toMatchObject({ code: -32072, data: { mcpdCode: "MCPD_TOO_MANY_CONNECTIONS" } });
    expect(over.error!.message).toMatch(/^Too many connections: mcpd accepts at most 3 at once \(mcpd\.maxConnections\)/);
    await until(() => over.closed(), "the refused connection closed");
    for (const p of accepted) expect((await p.client.request("ping")).result).toEqual({});
    expect(accepted.some((p) => p.closed())).toBe(false);
    // @mcpd/client (and so the CLI) reports the daemon's reason, not "mcpd is not running", and does not autostart.
    const sdk = new McpdClient({ socketPath: d.socketPath, autostart: true, reconnect: false, clientInfo: { name: "sdk", version: "1" } });
    const err = await sdk.connect().then(
      () => undefined,
      (e: McpdError) => e,
    );
    expect(err).toMatchObject({
      code: "MCPD_TOO_MANY_CONNECTIONS",
      message: expect.stringMatching(/^Too many connections: mcpd accepts at most 3 at once/),
    });
    await sdk.close();
    accepted[0]!.client.close();
    await until(async () => (await probe(d)).kind === "accepted", "a new connection accepted after one closed");
  });
});

/** Opens a TCP connection to `url`'s host and port and sends one HTTP request: answered (`accepted`) or closed unanswered (`refused`). */
async function tcpProbe(url: string): Promise<{ kind: "accepted" | "refused"; socket: Socket }> {
  const { hostname, port } = new URL(url);
  const socket = tcpConnect({ host: hostname, port: Number(port) });
  let answered = false;
  let closed = false;
  socket.on("data", () => (answered = true));
  socket.on("error", () => {});
  socket.once("close", () => (closed = true));
  socket.write(`GET /mcp HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`);
  const kind = await until(
    () => (answered ? ("accepted" as const) : closed ? ("refused" as const) : undefined),
    "the HTTP probe answered or closed",
  );
  return { kind, socket };
}

describe("limits: one connection cap for the socket and the HTTP front end", () => {
  it("regression: the two faces each had the whole cap; now they share it and HTTP may hold at most half, so a TCP flood never locks agents out of the socket", async () => {
    const d = (daemon = await startTestDaemon({ a: fixture("a") }, { settings: { maxConnections: 6 } }));
    const control = await controlClient(d); // one of the socket's connections
    const url = (await status(control)).http.url as string;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const tcp: Socket[] = [];
    try {
      // Anyone on the machine can open TCP connections, token or not: they get half of the cap.
      const kinds: string[] = [];
      for (let i = 0; i < 5; i++) {
        const p = await tcpProbe(url);
        kinds.push(p.kind);
        tcp.push(p.socket);
      }
      expect(kinds).toEqual(["accepted", "accepted", "accepted", "refused", "refused"]);
      // The socket keeps the rest: with the control connection and 3 TCP ones held, 2 more, then -32072.
      const accepted = [await probe(d), await probe(d)];
      expect(accepted.map((p) => p.kind)).toEqual(["accepted", "accepted"]);
      const over = await probe(d);
      expect(over.kind).toBe("refused");
      expect(over.error).toMatchObject({ code: -32072 });
      // The socket may use what TCP leaves: with no TCP connection, it holds 5 of the 6...
      for (const s of tcp.splice(0)) s.destroy();
      for (let i = 0; i < 2; i++) {
        await until(async () => {
          const p = await probe(d);
          if (p.kind === "accepted") accepted.push(p);
          else p.client.close();
          return p.kind === "accepted";
        }, "a socket connection accepted once the TCP ones closed");
      }
      // ...and then TCP gets the one slot left, below its half but at the shared cap: the next is refused.
      const last = await tcpProbe(url);
      tcp.push(last.socket);
      expect(last.kind).toBe("accepted");
      const beyond = await tcpProbe(url);
      tcp.push(beyond.socket);
      expect(beyond.kind).toBe("refused");
      for (const p of accepted) expect((await p.client.request("ping")).result).toEqual({});
    } finally {
      for (const s of tcp) s.destroy();
    }
  });
});

describe("limits: accept() out of descriptors", () => {
  const prlimit = ["/usr/bin/prlimit", "/bin/prlimit"].find((p) => existsSync(p));
  it.skipIf(prlimit === undefined || process.getuid?.() !== 0)(
    "accept() failing with EMFILE (descriptors taken by something else, here a lowered limit; needs root and prlimit): that connection is closed, the daemon keeps serving, and accepts again once descriptors are free",
    async () => {
      const d = (daemon = await startTestDaemon({ a: fixture("a") }));
      const control = await controlClient(d);
      await until(async () => (await serverStatus(control, "a")).state === "ready", "a ready");
      ledger.add(d.proc.pid as number, await serverPid(control, "a"));
      const pid = d.proc.pid as number;
      const soft = (n: number | string): void => {
        execFileSync(prlimit!, [`--pid=${pid}`, `--nofile=${n}:`]);
      };
      const limitBefore = /^Max open files\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/limits`, "utf8"))?.[1];
      expect(limitBefore).toBeDefined();
      // The limit at the lowest free descriptor number: every number below it is taken, so the next
      // accept() fails (descriptors above it stay open and working).
      const open = new Set(openFds(pid));
      let lowestFree = 0;
      while (open.has(lowestFree)) lowestFree++;
      soft(lowestFree);
      try {
        const p = await probe(d);
        // libuv accepts it on a descriptor it keeps in reserve for this, and closes it at once.
        expect(p.kind).toBe("closed");
        expect((await control.request("ping")).result).toEqual({});
      } finally {
        soft(limitBefore!);
      }
      expect((await probe(d)).kind).toBe("accepted");
      expect(textOf(await control.request("tools/call", { name: "a__echo", arguments: { text: "alive" } }))).toBe("alive");
      expect(d.proc.exitCode).toBeNull();
    },
  );
});

describe("limits: the daemon-wide budget for buffered client bytes", () => {
  it("several clients each holding a large unfinished line (regression: 200 connections of 4 MiB took RSS from 103 to 877 MiB): past the budget the one holding the most is disconnected with -32073, the others finish their lines", async () => {
    const d = (daemon = await startTestDaemon(
      { a: fixture("a") },
      { settings: { maxBufferedBytesTotal: 2_000_000, partialLineTimeoutMs: 600_000 } },
    ));
    const control = await controlClient(d);
    // What the daemon holds for a line is the memory its pieces keep alive: the line, and at most about as
    // much again (a piece's unused room, the whole of a read a piece is a view of: line-pieces.ts).
    const buffered = async (): Promise<number> => (await status(control)).daemon.bufferedBytes;
    const sizes: Record<string, number> = { A: 500_000, B: 800_000, C: 300_000, D: 600_000 };
    const clients: Record<string, RawClient> = {};
    const closed: Record<string, () => boolean> = {};
    let expected = 0;
    for (const name of ["A", "B", "C"]) {
      const c = (clients[name] = await d.raw());
      closed[name] = closeFlag(c);
      const text = partialPing(name, sizes[name]!);
      c.socket.write(text);
      expected += text.length;
      const want = expected;
      await until(async () => (await buffered()) >= want, `${want} bytes held after ${name}`);
      expect(await buffered()).toBeLessThan(2 * want);
    }
    // D takes the total past 2,000,000: B, holding the most, goes; A, C and D stay.
    const dd = (clients.D = await d.raw());
    closed.D = closeFlag(dd);
    dd.socket.write(partialPing("D", sizes.D!));
    const err = await until(() => nullError(clients.B!), "B told why it is disconnected");
    expect(err).toMatchObject({ code: -32073, data: { mcpdCode: "MCPD_BUFFER_BUDGET_EXCEEDED" } });
    expect(err.message).toMatch(/mcpd\.maxBufferedBytesTotal \(2000000 bytes\)/);
    expect(Number(/this connection held the most \((\d+) bytes/.exec(err.message)?.[1])).toBeGreaterThanOrEqual(800_000);
    await until(() => closed.B!(), "B closed");
    for (const name of ["A", "C", "D"]) {
      expect(closed[name]!(), name).toBe(false);
      expect(nullError(clients[name]!), name).toBeUndefined();
    }
    for (const name of ["A", "C", "D"]) {
      clients[name]!.socket.write('"}}\n');
      expect((await clients[name]!.waitFor((m) => m.id === name, `${name}'s ping answered`)).result).toEqual({});
    }
    expect(await buffered()).toBe(0);
    const line = logLines(d).find((l) => /over the daemon-wide buffer budget/.test(l.msg));
    expect(line, "the log names the disconnected client and what it held").toMatchObject({
      client: expect.any(String),
      heldBytes: expect.any(Number),
      budgetBytes: 2_000_000,
    });
    expect(line.heldBytes).toBeGreaterThanOrEqual(800_000);
    const st = await status(control);
    expect(st.daemon.dropped).toMatchObject({ overBudget: 1 });
    expect(textOf(await control.request("tools/call", { name: "a__echo", arguments: { text: "still here" } }))).toBe("still here");
  });

  it("clients that never read under a notification flood (regression: 60 of them took RSS to 1.4 GiB): each is disconnected once the budget is spent, while other clients' calls go on", {
    timeout: 120_000,
  }, async () => {
    const d = (daemon = await startTestDaemon(
      { fl: fixture("fl"), b: fixture("b") },
      { settings: { maxBufferedBytesTotal: 6 * 1024 * 1024 } },
    ));
    // Three clients that receive the flood and never read it. Each would hold ~13 MB, under the
    // 16 MiB a single connection may hold, so only the daemon-wide budget can stop them.
    const sleepers = await openClients(d, 3);
    for (const c of sleepers) c.socket.pause();
    const caller = await controlClient(d);
    const [other] = await openClients(d, 1);
    for (const c of [caller, other!]) expect((await c.request("logging/setLevel", { level: "error" })).result).toEqual({});
    ledger.add(await serverPid(caller, "fl"), await serverPid(caller, "b"));
    sendCall(caller, "flood", "fl__flood", { count: 12_000, size: 1000 });
    for (let i = 0; i < 10; i++)
      expect(textOf(await other!.request("tools/call", { name: "b__echo", arguments: { text: `o${i}` } }))).toBe(`o${i}`);
    expect(textOf((await answers(caller, ["flood"], 90_000)).get("flood"))).toBe("flooded 12000");
    const st = await until(
      async () => {
        const s = await status(caller);
        return s.daemon.connections === 2 ? s : undefined;
      },
      "the three sleepers disconnected",
      60_000,
    );
    expect(st.daemon.dropped.overBudget).toBe(3);
    expect(st.daemon.bufferedBytes).toBeLessThan(6 * 1024 * 1024);
    const lines = logLines(d).filter((l) => /over the daemon-wide buffer budget/.test(l.msg));
    expect(lines).toHaveLength(3);
    for (const l of lines) expect(l.outputBytes, JSON.stringify(l)).toBeGreaterThan(0);
    // Resumed, each sleeper reads what it had been sent, then finds its connection closed.
    for (const c of sleepers) {
      const closed = closeFlag(c);
      c.socket.resume();
      await until(() => closed(), "a sleeper's connection closed");
    }
    expect(textOf(await other!.request("tools/call", { name: "b__echo", arguments: { text: "after" } }))).toBe("after");
  });
});

describe("limits: a line that never ends", () => {
  it("a partial line not finished within mcpd.partialLineTimeoutMs (regression: it was held forever) closes its connection with -32074; idle clients and lines sent in pieces are unaffected", async () => {
    const d = (daemon = await startTestDaemon({ a: fixture("a") }, { settings: { partialLineTimeoutMs: 500 } }));
    const idle = await controlClient(d);
    const stalled = await d.raw();
    const stalledClosed = closeFlag(stalled);
    stalled.socket.write('{"jsonrpc":"2.0","id":1,"method":"pi');
    // An oversized line is discarded as it streams in; it must not escape the deadline either.
    const endless = await d.raw();
    const endlessClosed = closeFlag(endless);
    endless.socket.write("[" + "1,".repeat(2_600_000));
    const err = await until(() => nullError(stalled), "the stalled client told why it is closed");
    expect(err).toMatchObject({ code: -32074, data: { mcpdCode: "MCPD_LINE_TIMEOUT" } });
    expect(err.message).toBe(
      "Connection closed: a line was not finished within 500 ms (mcpd.partialLineTimeoutMs); every message must end with a newline",
    );
    await until(() => stalledClosed(), "the stalled connection closed");
    await until(() => endlessClosed() || nullError(endless)?.code === -32074, "the endless line's connection closed");
    // idle has been quiet for longer than the deadline, between whole lines: it is not touched.
    expect((await idle.request("ping")).result).toEqual({});
    const pieces = await d.raw();
    pieces.socket.write('{"jsonrpc":"2.0","id":"p","me');
    pieces.socket.write('thod":"ping"}\n');
    expect((await pieces.waitFor((m) => m.id === "p", "the ping sent in two pieces answered")).result).toEqual({});
    const st = await status(idle);
    expect(st.daemon.dropped).toMatchObject({ lineTimeout: 2 });
    expect(logLines(d).some((l) => /line not finished within/.test(l.msg))).toBe(true);
  });
});
