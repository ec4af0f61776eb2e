import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Cancellation, type JsonObject, type RequestId } from "@mcpd/protocol";
import { startHttpFixture, type HttpFixture } from "../../../tests/fixtures/http/http-fixture.mjs";
import { waitFor } from "../../../tests/helpers/process.js";
import type { RelayOptions } from "../../src/supervision/server-calls.js";
import type { ServerHandle } from "../../src/supervision/server-handle.js";
import type { MCPManager } from "../../src/supervision/manager.js";
import { type Cleanups, startManager, tempDir } from "../helpers/daemon-parts.js";

const STDIO_FIXTURE = resolve(import.meta.dirname, "../../../tests/fixtures/servers/mcp-fixture.mjs");
const cleanups: Cleanups = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A Cancellation that counts the AbortSignals it had to make. */
class CountingCancellation extends Cancellation {
  signalsMade = 0;
  override get signal(): AbortSignal {
    this.signalsMade++;
    return super.signal;
  }
}

function managerWith(servers: Record<string, unknown>): Promise<MCPManager> {
  return startManager(cleanups, tempDir(cleanups, "mcpd-cancel-"), servers);
}

/** `h.relay(...)` with a reply object, as a promise of how the call ended: its result or its error. */
function relayOutcome(
  h: ServerHandle,
  params: JsonObject,
  options: RelayOptions = { timeout: 0, waitMs: 1000, cancellation: new Cancellation() },
): Promise<unknown> {
  return new Promise((done) => h.relay("tools/call", params, options, { resolve: done, reject: done }));
}

/**
 * Once the HTTP fixture got the call, cancels it through `c`: the call ends with the reason, the server gets
 * `notifications/cancelled` for the id it was sent under (`upstreamId()`), and no AbortSignal was made.
 */
async function cancelsById(
  f: HttpFixture,
  c: CountingCancellation,
  outcome: Promise<unknown>,
  upstreamId: () => RequestId | undefined,
): Promise<void> {
  await waitFor(() => f.received("POST", "tools/call").length === 1, { message: "tools/call reached the server" });
  const reason = new Error("the agent cancelled");
  c.cancel(reason);
  expect(await outcome).toBe(reason);
  await waitFor(() => f.cancelled.length === 1, { message: "notifications/cancelled reached the server" });
  expect(f.cancelled[0]).toEqual({ requestId: upstreamId(), reason: "the agent cancelled" });
  expect(c.signalsMade).toBe(0);
}

describe("ServerHandle.request: one cancellation path", () => {
  it("regression: an HTTP server's relayed request is cancelled by id, with no AbortSignal made (it used to need one)", async () => {
    const f: HttpFixture = await startHttpFixture({ mode: "sse" });
    cleanups.push(() => f.close());
    const m = await managerWith({ h: { type: "http", url: f.url } });
    const h = m.require("h");
    expect(h.state).toBe("ready");
    const c = new CountingCancellation();
    let upstreamId: RequestId | undefined;
    const call = h.request(
      "tools/call",
      { name: "slow", arguments: { ms: 30_000 } },
      { waitMs: 10_000, cancellation: c, onRequestId: (id) => (upstreamId = id) },
    );
    const outcome = call.then(
      () => "resolved",
      (err: unknown) => err,
    );
    await cancelsById(f, c, outcome, () => upstreamId);
  });

  it("a stdio server's relayed request is cancelled by id the same way", async () => {
    const m = await managerWith({ s: { command: process.execPath, args: [STDIO_FIXTURE] } });
    const h = m.require("s");
    const c = new CountingCancellation();
    let upstreamId: RequestId | undefined;
    const call = h.request(
      "tools/call",
      { name: "slow", arguments: { ms: 30_000 } },
      { waitMs: 10_000, cancellation: c, onRequestId: (id) => (upstreamId = id) },
    );
    await waitFor(() => upstreamId !== undefined, { message: "the request was sent" });
    const reason = new Error("the agent cancelled");
    c.cancel(reason);
    await expect(call).rejects.toBe(reason);
    expect(c.signalsMade).toBe(0);
  });

  it("the relay path (a reply object, no promise) cancels an HTTP server's request by id, with no AbortSignal made", async () => {
    const f: HttpFixture = await startHttpFixture({ mode: "sse" });
    cleanups.push(() => f.close());
    const m = await managerWith({ h: { type: "http", url: f.url } });
    const h = m.require("h");
    const c = new CountingCancellation();
    let upstreamId: RequestId | undefined;
    const outcome = relayOutcome(
      h,
      { name: "slow", arguments: { ms: 30_000 } },
      { timeout: 0, waitMs: 10_000, cancellation: c, onRequestId: (id) => (upstreamId = id) },
    );
    expect(upstreamId, "a ready server's call is sent before relay() returns").toBeDefined();
    await cancelsById(f, c, outcome, () => upstreamId);
    expect(h.inFlight, "the call's slot and count are given back").toBe(0);
  });

  it("regression: a transport whose call() throws instead of refusing keeps no slot (the next call with one slot still goes)", async () => {
    const m = await managerWith({ s: { command: process.execPath, args: [STDIO_FIXTURE], maxConcurrency: 1 } });
    const h = m.require("s");
    const transport = h.client?.transport as { call: (...args: unknown[]) => void };
    const real = transport.call;
    transport.call = () => {
      throw new TypeError("this transport cannot call");
    };
    const first = await relayOutcome(h, { name: "echo", arguments: { text: "a" } });
    expect((first as Error).message).toBe("this transport cannot call");
    expect(h.inFlight).toBe(0);
    transport.call = real;
    const second = await h.request("tools/call", { name: "echo", arguments: { text: "b" } }, { waitMs: 1000, timeout: 5000 });
    expect(second).toEqual({ content: [{ type: "text", text: "b" }] });
  });

  it("a transport without call() (optional in MCPTransport) is relayed through its request()", async () => {
    const m = await managerWith({ s: { command: process.execPath, args: [STDIO_FIXTURE] } });
    const h = m.require("s");
    const transport = h.client?.transport as unknown as { call: unknown; request: (...args: unknown[]) => Promise<unknown> };
    transport.call = undefined;
    const request = transport.request.bind(transport);
    let requests = 0;
    transport.request = (...args) => {
      requests++;
      return request(...args);
    };
    const answer = await relayOutcome(h, { name: "echo", arguments: { text: "via request" } });
    expect(answer).toEqual({ content: [{ type: "text", text: "via request" }] });
    expect(requests).toBe(1);
    expect(h.inFlight).toBe(0);
  });
});
