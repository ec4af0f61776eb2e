/**
 * Regressions of `mcpd connect` (the stdio bridge) found by the review: a daemon that refuses the
 * connection, and one that goes away mid-session. Real daemon, real bridge process, real socket.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { type TestDaemon, connectCommand, fixture, startTestDaemon, until } from "../e2e/harness.js";

const daemons: TestDaemon[] = [];
const bridges: ChildProcess[] = [];

afterEach(async () => {
  for (const b of bridges.splice(0)) {
    if (b.exitCode === null && b.signalCode === null) {
      b.kill("SIGKILL");
      await until(() => b.exitCode !== null || b.signalCode !== null, "bridge exit");
    }
  }
  await Promise.all(daemons.splice(0).map((d) => d.stop()));
});

async function daemon(settings?: Record<string, unknown>): Promise<TestDaemon> {
  const d = await startTestDaemon({ fx: fixture("fx") }, settings ? { settings } : {});
  daemons.push(d);
  return d;
}

interface Bridge {
  proc: ChildProcess;
  /** Every message the bridge wrote to stdout, parsed. */
  messages: any[];
  stderr: () => string;
  send(msg: object): void;
  /** Resolves with the exit code once the bridge exits. */
  exit: Promise<number | null>;
}

function bridge(d: TestDaemon): Bridge {
  const cmd = connectCommand(d);
  const proc = spawn(cmd.command, cmd.args, { env: cmd.env, stdio: ["pipe", "pipe", "pipe"] });
  bridges.push(proc);
  const messages: any[] = [];
  let buf = "";
  let err = "";
  proc.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    buf += chunk;
    let i: number;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (line.trim()) messages.push(JSON.parse(line));
    }
  });
  proc.stderr!.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  const exit = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  return { proc, messages, stderr: () => err, send: (m) => proc.stdin!.write(`${JSON.stringify(m)}\n`), exit };
}

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "review", version: "1" } },
};

/** Holds the one connection a `maxConnections: 1` daemon accepts, and checks that the next one is refused. */
async function fillToCap(d: TestDaemon): Promise<void> {
  const selects = async (): Promise<any> => {
    const c = await d.raw();
    c.send({ jsonrpc: "2.0", id: "hold", method: "mcpd/select", params: {} });
    return c.waitFor((x) => x.id === "hold" || x.id === null, "the select's answer or the cap's refusal");
  };
  // The harness's own probe of the socket may still hold the slot for a moment: retry until one is held.
  await until(async () => (await selects()).id === "hold", "a connection held at the cap");
  const refused = await selects();
  expect(refused.error?.code).toBe(-32072);
}

describe("mcpd connect", () => {
  it("regression: a daemon at its connection cap ends mcpd connect with exit 1 and the daemon's reason on stderr", async () => {
    const d = await daemon({ maxConnections: 1 });
    await fillToCap(d);
    const b = bridge(d);
    b.send(INITIALIZE);
    expect(await b.exit).toBe(1);
    expect(b.stderr()).toMatch(/^mcpd connect: Too many connections/m);
    expect(b.messages).toEqual([]);
  });

  for (const signal of ["SIGKILL", "SIGTERM"] as const) {
    it(`regression: a daemon that goes away mid-session (${signal}) gets its calls in flight answered, a reason on stderr, exit 1`, async () => {
      const d = await daemon();
      const b = bridge(d);
      b.send(INITIALIZE);
      b.send({ jsonrpc: "2.0", method: "notifications/initialized" });
      await until(() => b.messages.some((m) => m.id === 1), "the initialize answer");
      b.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "fx__slow", arguments: { ms: 600_000 } } });
      // The bridge passes stdin on in order: once the ping is answered, the call has reached the daemon.
      b.send({ jsonrpc: "2.0", id: 3, method: "ping" });
      await until(() => b.messages.some((m) => m.id === 3), "the ping's answer");
      d.proc.kill(signal);
      // stdin stays open: the client is still there, waiting for the call's answer.
      expect(await b.exit).toBe(1);
      const answer = b.messages.find((m) => m.id === 2);
      expect(answer?.error?.code).toBeTypeOf("number");
      expect(answer.result).toBeUndefined();
      expect(b.messages.filter((m) => m.id === 2)).toHaveLength(1);
      expect(b.stderr()).toMatch(/^mcpd connect: .*connection to mcpd.*\n$/);
      expect(b.stderr().trim().split("\n")).toHaveLength(1);
    });
  }

  it("regression: the in-flight answer to a lost daemon is -32062 MCPD_CONNECTION_LOST", async () => {
    const d = await daemon();
    const b = bridge(d);
    b.send(INITIALIZE);
    await until(() => b.messages.some((m) => m.id === 1), "the initialize answer");
    b.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    b.send({ jsonrpc: "2.0", id: "call-1", method: "tools/call", params: { name: "fx__slow", arguments: { ms: 600_000 } } });
    b.send({ jsonrpc: "2.0", id: 3, method: "ping" });
    await until(() => b.messages.some((m) => m.id === 3), "the ping's answer");
    d.proc.kill("SIGKILL");
    expect(await b.exit).toBe(1);
    expect(b.messages.find((m) => m.id === "call-1")).toMatchObject({
      jsonrpc: "2.0",
      error: { code: -32062, data: { mcpdCode: "MCPD_CONNECTION_LOST" } },
    });
  });

  it("a client that closes stdin still ends mcpd connect with exit 0 and nothing on stderr", async () => {
    const d = await daemon();
    const b = bridge(d);
    b.send(INITIALIZE);
    await until(() => b.messages.some((m) => m.id === 1), "the initialize answer");
    b.proc.stdin!.end();
    expect(await b.exit).toBe(0);
    expect(b.stderr()).toBe("");
  });
});
