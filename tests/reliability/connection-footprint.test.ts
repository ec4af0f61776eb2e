/**
 * What one more connection costs the daemon's heap. Sessions are attached to the real Router in front of a
 * real fixture server; each initializes and makes one `tools/call`, as most agents do. Structures most
 * connections never use are made on first use: the JSON-RPC peer for server-to-client requests (sampling,
 * roots, elicitation), the subscription tables, the set of private (per-client) sessions; and the aggregate
 * view calls its session instead of a closure per method. (docs/operations.md, "The daemon's memory".)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTransport } from "@mcpd/transports";
import { MCPManager, ManagerDirectory, Router, parseConfig } from "@mcpd/daemon";
import { FIXTURE, until } from "../e2e/harness.js";
import { isAlive } from "../helpers/process.js";

type Session = ReturnType<Router["attach"]>;

let dir: string;
let manager: MCPManager;
let router: Router;
let pid: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcpd-footprint-"));
  const servers = { a: { command: process.execPath, args: [FIXTURE, "--name", "a"], healthCheckIntervalMs: 0 } };
  const config = parseConfig(JSON.stringify({ mcpServers: servers }), join(dir, "config.json"), process.env);
  manager = new MCPManager({
    createTransport: (cfg, logger) => createTransport(cfg, { logger }),
    cacheDir: join(dir, "cache"),
    childrenFile: join(dir, "children.json"),
  });
  router = new Router(new ManagerDirectory(manager), {
    maxInFlightPerConnection: 64,
    clientRequestTimeoutMs: 10_000,
    control: async () => ({}),
  });
  await manager.discoverAndConnect(config);
  pid = manager.servers[0]?.pid as number;
});

afterAll(async () => {
  for (const s of [...router.sessions.values()]) await router.detach(s);
  await manager?.shutdown();
  expect(isAlive(pid), `fixture ${pid} left running`).toBe(false);
  rmSync(dir, { recursive: true, force: true });
});

/** A session whose messages land in `received`; initialized (capabilities as given). */
function open(capabilities: object = {}): { session: Session; received: any[] } {
  const received: any[] = [];
  const session = router.attach({
    send: (message) => {
      received.push(message);
      return true;
    },
  });
  session.handle({
    jsonrpc: "2.0",
    id: "init",
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities, clientInfo: { name: "footprint", version: "1" } },
  });
  session.handle({ jsonrpc: "2.0", method: "notifications/initialized" });
  return { session, received };
}

const answerTo = (received: any[], id: string | number): any => received.find((m) => m.id === id && m.method === undefined);

/** A full collection (gc exposed at run time: the test process is not started with --expose-gc). */
function collect(): void {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  gc();
  gc();
}

describe("the daemon's heap per connection", () => {
  it("regression: no JSON-RPC peer is made for server-to-client requests until a server asks the client something (it cost ~1 KB per connection)", async () => {
    const { session, received } = open({ roots: {} });
    session.handle({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "hi" }, _meta: { "mcpd/server": "a" } },
    });
    await until(() => answerTo(received, 1), "the echo answer");
    expect(session.outgoing.allocated).toBe(false);

    // A server's roots/list reaches the client and its answer goes back: the peer is made then.
    session.handle({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "roots", arguments: {}, _meta: { "mcpd/server": "a" } },
    });
    const ask = await until(() => received.find((m) => m.method === "roots/list"), "the server's roots/list");
    expect(session.outgoing.allocated).toBe(true);
    session.handle({ jsonrpc: "2.0", id: ask.id, result: { roots: [{ uri: "file:///tmp/x", name: "x" }] } });
    const answer = await until(() => answerTo(received, 2), "the roots answer");
    expect(JSON.stringify(answer.result)).toContain("file:///tmp/x");
    await router.detach(session);
  });

  it("regression: a connection that is never asked anything, never subscribes and uses one server's view makes none of the structures for those (each cost ~0.1 KB per connection)", async () => {
    const received: any[] = [];
    const session = router.attach({
      send: (message) => {
        received.push(message);
        return true;
      },
    });
    // The transparent view of server `a`, as `mcpd connect a` selects it, then an agent's handshake and call.
    session.handle({ jsonrpc: "2.0", id: "select", method: "mcpd/select", params: { server: "a" } });
    session.handle({
      jsonrpc: "2.0",
      id: "init",
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "footprint", version: "1" } },
    });
    await until(() => answerTo(received, "init"), "the initialize answer");
    expect(answerTo(received, "select").result).toBeDefined();
    session.handle({ jsonrpc: "2.0", method: "notifications/initialized" });
    session.handle({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { text: "hi" } } });
    await until(() => answerTo(received, 1), "the echo answer");
    expect(JSON.stringify(answerTo(received, 1).result)).toContain("hi");
    // An answer to nothing the client was asked is ignored, and makes nothing either.
    session.handle({ jsonrpc: "2.0", id: 99, result: {} });
    const parts = session as unknown as Record<"asked" | "uriForms" | "aggregateView", unknown>;
    expect(parts.asked).toBeUndefined();
    expect(parts.uriForms).toBeUndefined();
    expect(parts.aggregateView).toBeUndefined();
    await router.detach(session);
    // An aggregate-view session makes its view at initialize, and nothing else.
    const aggregate = open().session as unknown as Record<"asked" | "uriForms" | "aggregateView", unknown>;
    expect(aggregate.aggregateView).toBeDefined();
    expect(aggregate.asked).toBeUndefined();
    expect(aggregate.uriForms).toBeUndefined();
    await router.detach(aggregate as unknown as Session);
  });

  it("regression: 3,000 initialized sessions that each made one call hold under 2 KB of heap each (3.1 KB before: a peer, subscription tables and closures per connection; about 1.5 KB now)", async () => {
    // Enough sessions that the heap's own noise (a few hundred KB, whatever N) is small per session: with
    // 1,000 it moved the figure by ±300 bytes and failed now and then.
    const N = 3_000;
    // Warm: first-use costs (compiled code, the catalog, pools) out of the figure.
    const warm = Array.from({ length: 20 }, () => open());
    for (const [i, w] of warm.entries())
      w.session.handle({
        jsonrpc: "2.0",
        id: i,
        method: "tools/call",
        params: { name: "echo", arguments: { text: "w" }, _meta: { "mcpd/server": "a" } },
      });
    await until(() => warm.every((w, i) => answerTo(w.received, i)), "the warm-up answers", 30_000);
    collect();
    const attached = router.sessions.size;
    const before = process.memoryUsage().heapUsed;
    const sessions = Array.from({ length: N }, () => open());
    for (const s of sessions)
      s.session.handle({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "echo", arguments: { text: "x" }, _meta: { "mcpd/server": "a" } },
      });
    await until(() => sessions.every((s) => answerTo(s.received, 1)), "every session's answer", 60_000);
    // What the test itself holds per session (the messages it received) is not the daemon's: dropped.
    for (const s of sessions) s.received.length = 0;
    collect();
    const perSession = (process.memoryUsage().heapUsed - before) / N;
    expect(router.sessions.size).toBe(attached + N);
    expect(perSession, `${Math.round(perSession)} bytes per session`).toBeLessThan(2_048);
    for (const s of [...sessions, ...warm]) await router.detach(s.session);
  });
});
