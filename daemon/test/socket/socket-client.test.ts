/**
 * One SocketClient per connection of the socket face: the connection's state is one object, and the
 * socket's listeners are the same functions for every connection (regression: each connection held seven
 * closures, two contexts and two objects, ~0.5 KB of the daemon's heap). Real Unix socket, real Router.
 */
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConnectionLimitError } from "@mcpd/protocol";
import type { Router } from "../../src/router/router.js";
import type { ClientLimits } from "../../src/socket/client-limits.js";
import { SocketClient } from "../../src/socket/socket-client.js";
import type { SocketServer } from "../../src/socket/socket-server.js";
import { waitFor } from "../../../tests/helpers/process.js";
import { type Cleanups, startManager, startSocketFace, tempDir } from "../helpers/daemon-parts.js";

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A client that sends `initialize` and resolves with its answer line. */
function initialize(path: string): Promise<{ socket: Socket; answer: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    let text = "";
    socket.setEncoding("utf8");
    socket.on("error", reject);
    socket.on("data", (chunk: string) => {
      text += chunk;
      const end = text.indexOf("\n");
      if (end >= 0) resolve({ socket, answer: JSON.parse(text.slice(0, end)) });
    });
    socket.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } })}\n`,
    );
  });
}

/** A socket server on a real Router and manager (no servers), cleaned up after the test. */
async function startServer(): Promise<{ dir: string; server: SocketServer; router: Router }> {
  const dir = tempDir(cleanups, "mcpd-sc-");
  const manager = await startManager(cleanups, dir);
  const { server, router } = await startSocketFace(cleanups, dir, manager, { maxInFlightPerConnection: 8, maxOutgoingBytes: 1 << 20 });
  return { dir, server, router };
}

/** The server's connections, as the socket face holds them. */
function connections(server: SocketServer): SocketClient[] {
  return [...(server as unknown as { limits: { conns: Set<unknown> } }).limits.conns] as SocketClient[];
}

/** Every line the socket receives until it ends. */
function linesUntilEnd(socket: Socket): Promise<string[]> {
  return new Promise((resolve) => {
    let text = "";
    socket.on("data", (chunk: string) => (text += chunk));
    socket.on("close", () => resolve(text.split("\n").filter((l) => l !== "")));
  });
}

/** A server with one initialized client: the server's side of it, and every line the client gets until its end. */
async function oneClient(): Promise<{ server: SocketServer; conn: SocketClient; lines: Promise<string[]> }> {
  const { dir, server } = await startServer();
  const a = await initialize(join(dir, "s.sock"));
  cleanups.push(() => {
    a.socket.destroy();
  });
  const lines = linesUntilEnd(a.socket);
  const [conn] = connections(server) as [SocketClient];
  return { server, conn, lines };
}

describe("SocketClient", () => {
  it("regression: each connection is one SocketClient, and every socket's listeners are shared functions, not closures per connection", async () => {
    const { dir, server, router } = await startServer();
    const a = await initialize(join(dir, "s.sock"));
    const b = await initialize(join(dir, "s.sock"));
    cleanups.push(() => {
      a.socket.destroy();
      b.socket.destroy();
    });
    for (const { answer } of [a, b]) expect(answer).toMatchObject({ id: 1, result: { protocolVersion: "2025-11-25" } });

    const conns = connections(server);
    expect(conns).toHaveLength(2);
    for (const c of conns) expect(c).toBeInstanceOf(SocketClient);
    const [x, y] = conns as [SocketClient, SocketClient];
    expect(x.session.id).not.toBe(y.session.id);
    for (const event of ["data", "error", "close"]) {
      const ours = x.socket.listeners(event);
      expect(ours.length, event).toBeGreaterThan(0);
      // The two sockets' listeners are the very same functions: nothing is made per connection.
      expect(
        ours.every((l) => y.socket.listeners(event).includes(l)),
        `${event}: every listener of one socket is also the other's`,
      ).toBe(true);
    }
    // A closed connection is forgotten and its session detached.
    a.socket.destroy();
    await waitFor(() => server.connections === 1 && router.sessions.size === 1, {
      message: "the closed connection forgotten, its session detached",
    });
  });

  it("regression: the answers a connection was sent in the tick it is closed reach it before the end (they waited for the end of the tick, and closing lost them)", async () => {
    const { server, conn, lines } = await oneClient();
    conn.send({ jsonrpc: "2.0", id: 2, result: { last: true } });
    server.closeAll();
    expect((await lines).map((l) => JSON.parse(l))).toEqual([{ jsonrpc: "2.0", id: 2, result: { last: true } }]);
  });

  it("regression: a connection the daemon drops gets the answers of that tick, then its farewell line", async () => {
    const { server, conn, lines } = await oneClient();
    conn.send({ jsonrpc: "2.0", id: 3, result: { before: "farewell" } });
    const limits = (server as unknown as { limits: ClientLimits }).limits;
    limits.drop(conn, "overBudget", new ConnectionLimitError("MCPD_BUFFER_BUDGET_EXCEEDED", "Connection closed: over budget (test)"));
    const got = (await lines).map((l) => JSON.parse(l));
    expect(got[0]).toEqual({ jsonrpc: "2.0", id: 3, result: { before: "farewell" } });
    expect(got[1]).toMatchObject({ id: null, error: { message: "Connection closed: over budget (test)" } });
    expect(got).toHaveLength(2);
  });
});
