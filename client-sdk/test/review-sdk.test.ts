/**
 * Regressions found by the review of the client SDK: calls made while connect() runs, and close()
 * while connect() or start() is still opening the socket. Against a real socket peer (jsonl-peer).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { McpdError } from "@mcpd/protocol";
import { McpdClient } from "../src/mcpd-client.js";
import { McpdTransport } from "../src/mcpd-transport.js";
import { type JsonlPeer, startPeer, waitFor } from "./jsonl-peer.js";

let peer: JsonlPeer;
let cleanup: () => Promise<void>;
const closers: Array<{ close(): Promise<void> }> = [];

beforeEach(async () => {
  ({ peer, cleanup } = await startPeer());
});
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c.close()));
  await cleanup();
});

function newClient(options: ConstructorParameters<typeof McpdClient>[0] = {}): McpdClient {
  const c = new McpdClient({ socketPath: peer.socketPath, reconnect: { initialDelayMs: 20, maxDelayMs: 100 }, ...options });
  closers.push(c);
  return c;
}

/** Settles to "resolved" or the error's code, and records that it settled. */
function outcome(p: Promise<unknown>): { settled: () => string | undefined; done: Promise<string> } {
  let value: string | undefined;
  const done = p.then(
    () => (value = "resolved"),
    (err: McpdError) => (value = err.code),
  );
  return { settled: () => value, done };
}

describe("McpdClient: calls made while connect() runs", () => {
  it("regression: a call made during connect() is sent once connected, not held until its timeout", async () => {
    const c = newClient();
    const connecting = c.connect();
    // A deadline far past the test's wait: on the old code the ping sat in the queue until it.
    const ping = outcome(c.ping({ timeout: 600_000 }));
    await connecting;
    expect(c.state).toBe("ready");
    await waitFor(() => ping.settled(), "the ping made during connect() to be answered", 10_000);
    expect(ping.settled()).toBe("resolved");
    expect(peer.messages("ping")).toHaveLength(1);
  });

  it("regression: a call made during a connect() that fails fails with connect()'s error, not at its timeout", async () => {
    peer.methods["mcpd/select"] = () => ({
      error: { code: -32602, message: 'Unknown server "nope"; configured: a', data: { mcpdCode: "MCPD_UNKNOWN_SERVER" } },
    });
    const c = newClient({ view: "nope" });
    const connecting = outcome(c.connect());
    const ping = outcome(c.ping({ timeout: 600_000 }));
    expect(await connecting.done).toBe("MCPD_UNKNOWN_SERVER");
    await waitFor(() => ping.settled(), "the ping made during the failed connect() to fail", 10_000);
    expect(ping.settled()).toBe("MCPD_UNKNOWN_SERVER");
    expect(c.state).toBe("idle");
  });
});

describe("McpdClient: close() during connect()", () => {
  it("regression: close() while connect() runs wins: connect() rejects, the socket is closed, no reconnection", async () => {
    const c = newClient();
    let reconnected = 0;
    c.on("reconnected", () => reconnected++);
    const connecting = outcome(c.connect());
    await c.close();
    expect(await connecting.done).toBe("MCPD_CONNECTION_LOST");
    expect(c.state).toBe("closed");
    // The connection the pending handshake opened is closed by the client, not kept.
    await waitFor(() => peer.connections.size === 0, "the handshake's connection to be closed", 10_000);
    expect(await outcome(c.ping()).done).toBe("MCPD_CONNECTION_LOST");
    expect(reconnected).toBe(0);
    expect(c.state).toBe("closed");
  });
});

describe("McpdTransport: close() during start()", () => {
  it("regression: close() while start() opens the socket: start() rejects and the socket is destroyed", async () => {
    const t = new McpdTransport({ socketPath: peer.socketPath });
    closers.push(t);
    let closes = 0;
    t.onclose = () => closes++;
    const starting = outcome(t.start());
    await t.close();
    expect(await starting.done).toBe("MCPD_CONNECTION_LOST");
    expect(closes).toBe(1);
    await waitFor(() => peer.connections.size === 0, "the transport's socket to be closed", 10_000);
    expect(await outcome(t.send({ jsonrpc: "2.0", id: 1, method: "ping" })).done).toBe("MCPD_CONNECTION_LOST");
    expect(peer.messages("ping")).toHaveLength(0);
  });
});
