/**
 * Regression found reviewing the HTTP front end against a hostile local process: loopback TCP is open
 * to every local user (the socket is only its owner's), so the connections it holds must be bounded
 * before any token is looked at, or anyone on the machine can take every open file of the daemon.
 */
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type TestDaemon, fixture, startTestDaemon, until } from "../e2e/harness.js";
import { httpFront, openSession } from "./http-harness.js";

let d: TestDaemon | undefined;
const held: Socket[] = [];
afterEach(async () => {
  for (const s of held.splice(0)) s.destroy();
  await d?.stop();
  d = undefined;
});

/** A TCP connection to `port` that sends nothing; resolves once connected (or refused). */
function idleConnection(port: number): Promise<Socket> {
  return new Promise((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.on("error", () => {});
    s.once("connect", () => resolve(s));
    s.once("close", () => resolve(s));
  });
}

describe("connections to the HTTP port", () => {
  it("regression: connections that never send a byte (no token needed) took every open file: the socket stopped answering, servers could not start", {
    timeout: 120_000,
  }, async () => {
    d = await startTestDaemon({ fx: fixture("fx"), lazy: fixture("lazy", [], { startup: "lazy" }) }, { nofile: 128 });
    const front = await httpFront(d);
    const port = Number(new URL(front.url).port);
    // More than 128 open files can hold.
    for (let i = 0; i < 200; i++) held.push(await idleConnection(port));
    // The daemon still answers its socket and starts a server on first use.
    const c = await Promise.race([
      d.control(),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error("the socket did not answer")), 20_000)),
    ]);
    expect((await c.request("mcpd/status")).result.http.listening).toBe(true);
    await c.initialize();
    const r = await c.request("tools/call", { name: "echo", arguments: { text: "still" }, _meta: { "mcpd/server": "lazy" } });
    expect(r.result?.content?.[0]?.text, JSON.stringify(r)).toBe("still");
    c.close();
    // Once the idle connections go, HTTP clients are served again.
    for (const s of held.splice(0)) s.destroy();
    await until(async () => (await openSession(front).catch(() => undefined)) !== undefined, "HTTP serves again");
    expect(d.proc.exitCode).toBeNull();
  });
});
