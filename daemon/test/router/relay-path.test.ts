/**
 * The relay path of a call: a client's request to a ready server with a free slot and its answer back go
 * through callbacks (JsonRpcPeer.call, ServerHandle.relay, InFlight as the reply), with no promise made per
 * call (regression: a relayed call made eight promises and a dozen closures, some 40% of the daemon's
 * allocations per call). Real Unix socket, real Router and manager, the stdio fixture server as a child.
 */
import { createHook } from "node:async_hooks";
import { connect, type Socket } from "node:net";
import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Cleanups, startManager, startSocketFace, tempDir } from "../helpers/daemon-parts.js";

const STDIO_FIXTURE = resolve(import.meta.dirname, "../../../tests/fixtures/servers/mcp-fixture.mjs");
const cleanups: Cleanups = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type Answer = { id?: unknown; result?: { content?: Array<{ text?: string }> }; error?: { code: number; message: string } };

/**
 * A raw JSONL client that keeps no promise of its own per call: `send` writes lines, each answer goes to
 * the callback given for its id.
 */
class CallbackClient {
  private readonly waiting = new Map<number, (a: Answer) => void>();
  private text = "";
  private nextId = 1;

  constructor(readonly socket: Socket) {
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      this.text += chunk;
      let nl = this.text.indexOf("\n");
      while (nl >= 0) {
        const a = JSON.parse(this.text.slice(0, nl)) as Answer;
        this.text = this.text.slice(nl + 1);
        const cb = this.waiting.get(a.id as number);
        this.waiting.delete(a.id as number);
        cb?.(a);
        nl = this.text.indexOf("\n");
      }
    });
  }

  send(method: string, params: unknown, cb: (a: Answer) => void): void {
    const id = this.nextId++;
    this.waiting.set(id, cb);
    this.socket.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
  }

  ask(method: string, params: unknown): Promise<Answer> {
    return new Promise((done) => this.send(method, params, done));
  }

  /** `total` calls of `tools/call echo`, `lanes` at a time; `done` gets every answer once all have come. */
  calls(total: number, lanes: number, done: (answers: Answer[]) => void): void {
    const answers: Answer[] = [];
    let sent = 0;
    const next = (): void => {
      if (sent === total) return;
      const n = sent++;
      this.send("tools/call", { name: "echo", arguments: { text: `call ${n}` } }, (a) => {
        answers.push(a);
        if (answers.length === total) done(answers);
        else next();
      });
    };
    for (let i = 0; i < lanes; i++) next();
  }
}

/** A socket face on a real Router and manager with the fixture server `fx` (extra config fields in `server`). */
async function start(server: Record<string, unknown> = {}): Promise<CallbackClient> {
  const dir = tempDir(cleanups, "mcpd-relay-");
  const manager = await startManager(cleanups, dir, { fx: { command: process.execPath, args: [STDIO_FIXTURE], ...server } });
  expect(manager.require("fx").state).toBe("ready");
  const { socketPath } = await startSocketFace(cleanups, dir, manager, { maxInFlightPerConnection: 128, maxOutgoingBytes: 1 << 22 });
  const socket = connect(socketPath);
  await new Promise((ok, fail) => socket.once("connect", ok).once("error", fail));
  cleanups.push(() => socket.destroy());
  const client = new CallbackClient(socket);
  expect((await client.ask("mcpd/select", { server: "fx" })).result).toBeDefined();
  const init = await client.ask("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "relay-test", version: "1" },
  });
  expect(init.error).toBeUndefined();
  return client;
}

describe("the relay path", () => {
  it("regression: relays 2,000 calls with 64 in flight making no promise per call (it made 8 each)", async () => {
    const client = await start();
    // Warm up (first calls, lazily made state), then count every promise the process makes while calls run.
    await new Promise<Answer[]>((done) => client.calls(200, 64, done));
    const total = 2_000;
    let promises = 0;
    const hook = createHook({
      init(_id, type) {
        if (type === "PROMISE") promises++;
      },
    });
    let answers: Answer[] = [];
    await new Promise<void>((finished) => {
      hook.enable();
      client.calls(total, 64, (all) => {
        hook.disable();
        answers = all;
        finished();
      });
    });
    expect(answers).toHaveLength(total);
    expect(answers.every((a) => a.result?.content?.[0]?.text?.startsWith("call "))).toBe(true);
    // Whatever else the process does meanwhile (the test runner, the daemon's timers) makes a few; a
    // promise per call would make at least 2,000 (the old path made 16,000).
    expect(promises, `${promises} promises for ${total} calls`).toBeLessThan(total / 10);
  });

  it("a call refused before it is sent (a capability the server lacks) frees its slot: the next calls still go", async () => {
    // One slot: a refusal that kept it would leave every later call waiting for a slot until it timed out.
    const client = await start({ args: [STDIO_FIXTURE, "--capabilities-minimal"], maxConcurrency: 1, maxQueue: 4 });
    for (let i = 0; i < 3; i++) {
      const refused = await client.ask("resources/list", {});
      expect(refused.error?.message).toMatch(/does not support resources\/list/);
    }
    const answers = await new Promise<Answer[]>((done) => client.calls(20, 4, done));
    expect(answers.map((a) => a.error)).toEqual(new Array(20).fill(undefined));
  });
});
