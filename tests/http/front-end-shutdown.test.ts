/**
 * The daemon's exit is not held by its HTTP front end's clients: a connection still busy when the front
 * end closes (a request a client left half sent) gets a moment to finish (`httpCloseLingerMs`), then is
 * cut. It held the exit until the request's deadline (`mcpd.http.requestTimeoutMs`, ten minutes here);
 * a client that stopped reading its GET stream held it for seconds.
 */
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type TestDaemon, fixture, startTestDaemon, until } from "../e2e/harness.js";
import { httpFront } from "./http-harness.js";

let d: TestDaemon | undefined;
afterEach(async () => {
  await d?.stop();
  d = undefined;
});

describe("shutdown with busy HTTP connections", () => {
  it("regression: a request left half sent held the daemon's exit until its deadline: the connection is cut and the daemon exits", async () => {
    d = await startTestDaemon({ fx: fixture("fx") }, { settings: { http: { requestTimeoutMs: 600_000 } } });
    const front = await httpFront(d);
    const socket = connect(Number(new URL(front.origin).port), "127.0.0.1");
    let closed = false;
    socket.on("error", () => {});
    socket.on("close", () => (closed = true));
    await new Promise((r) => socket.once("connect", r));
    socket.write(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${front.token}\r\nContent-Type: application/json\r\n` +
        `Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{"jsonrpc":`,
    );
    const proc = d.proc;
    proc.kill("SIGTERM");
    // Far below the request's deadline (600 s), far above the linger (0.5 s).
    await until(() => proc.exitCode !== null || proc.signalCode !== null, "the daemon to exit", 30_000);
    expect([proc.exitCode, proc.signalCode]).toEqual([0, null]);
    await until(() => closed, "the half-sent request's connection to be closed");
    socket.destroy();
  });
});
