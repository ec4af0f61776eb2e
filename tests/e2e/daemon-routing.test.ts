import { afterEach, describe, expect, it } from "vitest";
import { statSync, existsSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { EVERYTHING, MCPD_BIN, alive, fixture, readLog, startTestDaemon, until, type TestDaemon } from "./harness.js";

let daemon: TestDaemon | undefined;
const clients: Client[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  await daemon?.stop();
  daemon = undefined;
});

function sdkClient(
  d: TestDaemon,
  server?: string,
  capabilities: Record<string, unknown> = {},
): { client: Client; transport: StdioClientTransport } {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MCPD_BIN, "connect", ...(server ? [server] : []), "--no-autostart"],
    env: { ...(process.env as Record<string, string>), MCPD_HOME: d.home, MCPD_CONFIG: d.configFile },
    stderr: "pipe",
  });
  const client = new Client({ name: "e2e", version: "1.0.0" }, { capabilities });
  clients.push(client);
  return { client, transport };
}

async function connected(d: TestDaemon, server?: string, capabilities: Record<string, unknown> = {}): Promise<Client> {
  const { client, transport } = sdkClient(d, server, capabilities);
  await client.connect(transport);
  return client;
}

const text = (r: any): string => (r.content ?? []).map((c: any) => c.text ?? "").join("");

describe("daemon: routing between many agents and many servers", () => {
  it("keeps two SDK clients' ids apart over 1,000 concurrent calls each", async () => {
    daemon = await startTestDaemon({ a: fixture("a") });
    const [c1, c2] = await Promise.all([connected(daemon, "a"), connected(daemon, "a")]);
    const run = (c: Client, tag: string) =>
      Promise.all(
        Array.from({ length: 1000 }, (_, i) => c.callTool({ name: "echo", arguments: { text: `${tag}-${i}` } }).then((r) => text(r))),
      );
    const [r1, r2] = await Promise.all([run(c1!, "one"), run(c2!, "two")]);
    expect(r1).toEqual(Array.from({ length: 1000 }, (_, i) => `one-${i}`));
    expect(r2).toEqual(Array.from({ length: 1000 }, (_, i) => `two-${i}`));
  });

  it("aggregates three servers: prefixed names, a collision resolved, a 70-character name aliased", async () => {
    const long = "t".repeat(70);
    daemon = await startTestDaemon({
      a: fixture("a", ["--tool", "search"]),
      b: fixture("b", ["--tool", "search"]),
      c: fixture("c", ["--tool", long]),
    });
    const client = await connected(daemon);
    const tools = await until(async () => {
      const list = (await client.listTools()).tools;
      return list.some((t) => t.name.startsWith("c__")) &&
        list.some((t) => t.name.startsWith("b__")) &&
        list.some((t) => t.name.startsWith("a__"))
        ? list
        : undefined;
    }, "tools of all three servers");
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["a__echo", "b__echo", "c__echo", "a__search", "b__search"]));
    for (const n of names) expect(n).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    const alias = names.find((n) => n.startsWith("c__tttt"));
    expect(alias).toBeDefined();
    expect(alias!.length).toBeLessThanOrEqual(64);
    const pidA = text(await client.callTool({ name: "a__pid", arguments: {} }));
    const pidB = text(await client.callTool({ name: "b__pid", arguments: {} }));
    expect(pidA).not.toEqual(pidB);
    const viaAlias = await client.callTool({ name: alias!, arguments: { x: 1 } });
    expect(viaAlias.isError).toBeFalsy();
    expect(JSON.parse(text(viaAlias))).toEqual({ x: 1 });
    const both = await Promise.all([
      client.callTool({ name: "a__search", arguments: { q: "A" } }),
      client.callTool({ name: "b__search", arguments: { q: "B" } }),
    ]);
    expect(JSON.parse(text(both[0]))).toEqual({ q: "A" });
    expect(JSON.parse(text(both[1]))).toEqual({ q: "B" });
  });

  it("shows server-everything in the transparent view exactly as it is", async () => {
    daemon = await startTestDaemon({ everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } });
    // mcpd declares sampling, elicitation and roots upstream on behalf of its clients; compare with a
    // direct client that declares the same.
    const direct = new Client(
      { name: "direct", version: "1" },
      { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } },
    );
    clients.push(direct);
    await direct.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, "stdio"], stderr: "pipe" }));
    const via = await connected(daemon, "everything");
    expect(via.getServerVersion()).toEqual(direct.getServerVersion());
    expect(via.getServerCapabilities()).toEqual(direct.getServerCapabilities());
    expect(via.getInstructions()).toEqual(direct.getInstructions());
    const [a, b] = await Promise.all([direct.listTools(), via.listTools()]);
    expect(b.tools.map((t) => t.name).sort()).toEqual(a.tools.map((t) => t.name).sort());
    const echo = await via.callTool({ name: "echo", arguments: { message: "hi" } });
    expect(text(echo)).toContain("hi");
  });

  it("forwards cancellation (abort and disconnect) upstream with the upstream id; nothing stays in flight", async () => {
    const d = (daemon = await startTestDaemon({}));
    const logFile = join(d.home, "a.log");
    d.writeConfig({ a: fixture("a", ["--log", logFile]) });
    const raw0 = await d.control();
    await raw0.request("mcpd/reload");
    const client = await connected(d, "a");
    const ac = new AbortController();
    const call = client.callTool({ name: "slow", arguments: { ms: 60_000 } }, undefined, { signal: ac.signal });
    const received = await until(
      () => readLog(logFile).find((m) => m.method === "tools/call" && m.params?.name === "slow"),
      "slow call upstream",
    );
    ac.abort("changed my mind");
    await expect(call).rejects.toThrow();
    const cancelled = await until(
      () => readLog(logFile).find((m) => m.method === "notifications/cancelled" && m.params?.requestId === received.id),
      "cancel upstream",
    );
    expect(cancelled.params.requestId).toBe(received.id);

    const raw = await d.raw();
    await raw.request("mcpd/select", { server: "a" });
    await raw.initialize();
    raw.send({ jsonrpc: "2.0", id: 99, method: "tools/call", params: { name: "slow", arguments: { ms: 60_000, tag: "disc" } } });
    const second = await until(
      () => readLog(logFile).find((m) => m.method === "tools/call" && m.params?.arguments?.tag === "disc"),
      "second slow call",
    );
    raw.close();
    await until(
      () => readLog(logFile).find((m) => m.method === "notifications/cancelled" && m.params?.requestId === second.id),
      "cancel after disconnect",
    );
    const status = await until(async () => {
      const s = (await raw0.request("mcpd/status")).result;
      return s.servers[0].inFlight === 0 && s.tables.inFlight === 0 && s.tables.progress === 0 ? s : undefined;
    }, "nothing in flight");
    expect(status.servers[0].inFlight).toBe(0);
  });

  it("delivers progress under the caller's own token and to no other client", async () => {
    const d = (daemon = await startTestDaemon({ everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } }));
    const a = await d.raw();
    const b = await d.raw();
    for (const c of [a, b]) {
      await c.request("mcpd/select", { server: "everything" });
      await c.initialize();
    }
    const res = await a.request("tools/call", {
      name: "trigger-long-running-operation",
      arguments: { duration: 1, steps: 3 },
      _meta: { progressToken: "mine-1" },
    });
    expect(res.error).toBeUndefined();
    const progress = a.messages.filter((m) => m.method === "notifications/progress");
    expect(progress.length).toBeGreaterThan(0);
    for (const p of progress) expect(p.params.progressToken).toBe("mine-1");
    expect(b.messages.filter((m) => m.method === "notifications/progress")).toHaveLength(0);
  });

  it("reference-counts resource subscriptions and sends updates only to subscribers", async () => {
    const d = (daemon = await startTestDaemon({}));
    const logFile = join(d.home, "r.log");
    d.writeConfig({ r: fixture("r", ["--log", logFile]) });
    await (await d.control()).request("mcpd/reload");
    const a = await d.raw();
    const b = await d.raw();
    const other = await d.raw();
    for (const c of [a, b, other]) {
      await c.request("mcpd/select", { server: "r" });
      await c.initialize();
    }
    const uri = "fixture://static/one";
    expect((await a.request("resources/subscribe", { uri })).error).toBeUndefined();
    expect((await b.request("resources/subscribe", { uri })).error).toBeUndefined();
    expect(readLog(logFile).filter((m) => m.method === "resources/subscribe")).toHaveLength(1);
    await other.request("tools/call", { name: "touch", arguments: { uri } });
    await a.waitFor((m) => m.method === "notifications/resources/updated", "update to a");
    await b.waitFor((m) => m.method === "notifications/resources/updated", "update to b");
    expect(other.messages.filter((m) => m.method === "notifications/resources/updated")).toHaveLength(0);
    await a.request("resources/unsubscribe", { uri });
    expect(readLog(logFile).filter((m) => m.method === "resources/unsubscribe")).toHaveLength(0);
    b.close();
    await until(() => readLog(logFile).filter((m) => m.method === "resources/unsubscribe").length === 1, "one upstream unsubscribe");
  });

  it("sends a sampling request to the calling client only; the ambiguous case gets the documented error", async () => {
    const d = (daemon = await startTestDaemon({ everything: { command: process.execPath, args: [EVERYTHING, "stdio"] }, f: fixture("f") }));
    const caller = await connected(d, "everything", { sampling: {} });
    const bystander = await connected(d, "everything", { sampling: {} });
    let bystanderAsked = 0;
    bystander.setRequestHandler(CreateMessageRequestSchema, async () => {
      bystanderAsked++;
      return { model: "x", role: "assistant", content: { type: "text", text: "wrong client" } };
    });
    caller.setRequestHandler(CreateMessageRequestSchema, async () => ({
      model: "test-model",
      role: "assistant",
      content: { type: "text", text: "answer from caller" },
    }));
    const tools = (await caller.listTools()).tools.map((t) => t.name);
    const samplingTool = tools.find((n) => n.includes("sampling"))!;
    const res = await caller.callTool({ name: samplingTool, arguments: { prompt: "hello", maxTokens: 10 } });
    expect(JSON.stringify(res)).toContain("answer from caller");
    expect(bystanderAsked).toBe(0);

    // Ambiguous: two clients both have calls in flight to the fixture server when it asks for sampling.
    const x = await connected(d, "f", { sampling: {} });
    const y = await connected(d, "f", { sampling: {} });
    for (const c of [x, y])
      c.setRequestHandler(CreateMessageRequestSchema, async () => ({
        model: "m",
        role: "assistant",
        content: { type: "text", text: "?" },
      }));
    const slow = y.callTool({ name: "slow", arguments: { ms: 3000 } });
    await until(
      async () => (await (await d.raw()).request("mcpd/status")).result.servers.find((s: any) => s.name === "f").inFlight > 0,
      "y in flight",
    );
    const amb = await x.callTool({ name: "sample", arguments: { prompt: "who?" } });
    expect(JSON.stringify(amb)).toMatch(/-32066|No single client/);
    await slow;
  });

  it("answers each bad input with its error and keeps the connection usable", async () => {
    const d = (daemon = await startTestDaemon({ a: fixture("a") }));
    const c = await d.raw();
    await c.initialize();
    await until(async () => (await c.request("mcpd/status")).result.servers[0].state === "ready", "server ready");
    c.writeLine("{not json");
    expect((await c.waitFor((m) => m.error?.code === -32700, "parse error")).id).toBeNull();
    c.writeLine(JSON.stringify({ hello: "world" }));
    await c.waitFor((m) => m.error?.code === -32600, "invalid request");
    expect((await c.request("no/such/method")).error.code).toBe(-32601);
    const unknownTool = await c.request("tools/call", { name: "a__ecoh", arguments: {} });
    expect(unknownTool.error.code).toBe(-32602);
    expect(unknownTool.error.message).toContain("did you mean a__echo");
    const unknownServer = await c.request("tools/call", { name: "echo", arguments: {}, _meta: { "mcpd/server": "zzz" } });
    expect(unknownServer.error.code).toBe(-32602);
    expect(unknownServer.error.message).toContain("a");
    c.writeLine(`{"jsonrpc":"2.0","id":5,"method":"ping","params":{"pad":"${"x".repeat(5 * 1024 * 1024)}"}}`);
    await c.waitFor((m) => m.error?.code === -32068, "oversized line");
    const ok = await c.request("tools/call", { name: "a__echo", arguments: { text: "still fine" } });
    expect(ok.result.content[0].text).toBe("still fine");
  });

  it("does not let a client that stops reading delay another client's calls", async () => {
    const d = (daemon = await startTestDaemon({ flood: fixture("flood"), a: fixture("a") }));
    const slowReader = await d.raw();
    await slowReader.request("mcpd/select", { server: "flood" });
    await slowReader.initialize();
    slowReader.socket.pause();
    slowReader.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "flood", arguments: { count: 40_000, size: 1000 } } });
    const other = await d.raw();
    await other.request("mcpd/select", { server: "a" });
    await other.initialize();
    for (let i = 0; i < 50; i++) {
      const r = await other.request("tools/call", { name: "echo", arguments: { text: `n${i}` } });
      expect(r.result.content[0].text).toBe(`n${i}`);
    }
    // The reader's outgoing buffer passed its bound: the daemon disconnected it, and only `other` remains
    // (the control connection asking is not listed).
    const ctl = await d.control();
    await until(async () => (await ctl.request("mcpd/status")).result.clients.length === 1, "slow reader disconnected");
  });

  it("fails a call promptly when its server is killed, then serves again after the restart", async () => {
    const d = (daemon = await startTestDaemon({ a: fixture("a", [], { restart: { initialDelayMs: 100 } }) }));
    const c = await d.raw();
    await c.request("mcpd/select", { server: "a" });
    await c.initialize();
    const pid = Number((await c.request("tools/call", { name: "pid", arguments: {} })).result.content[0].text);
    c.send({ jsonrpc: "2.0", id: "long", method: "tools/call", params: { name: "slow", arguments: { ms: 60_000 } } });
    await until(async () => (await c.request("mcpd/status")).result.servers[0].inFlight === 1, "call in flight");
    process.kill(pid, "SIGKILL");
    const failed = await c.waitFor((m) => m.id === "long", "error for the in-flight call", 10_000);
    expect(failed.error.code).toBe(-32062);
    await until(async () => (await c.request("mcpd/status")).result.servers[0].state === "ready", "server ready again");
    const again = await c.request("tools/call", { name: "echo", arguments: { text: "back" } });
    expect(again.result.content[0].text).toBe("back");
    const newPid = Number((await c.request("tools/call", { name: "pid", arguments: {} })).result.content[0].text);
    expect(newPid).not.toBe(pid);
  });

  it("on SIGTERM finishes in-flight calls, removes socket and pid file, and leaves no server process; modes are 0600/0700", async () => {
    const d = (daemon = await startTestDaemon({ a: fixture("a"), b: fixture("b") }));
    expect(statSync(d.socketPath).mode & 0o777).toBe(0o600);
    expect(statSync(d.home).mode & 0o777).toBe(0o700);
    const c = await d.raw();
    await c.initialize();
    const pids = [
      Number((await c.request("tools/call", { name: "a__pid", arguments: {} })).result.content[0].text),
      Number((await c.request("tools/call", { name: "b__pid", arguments: {} })).result.content[0].text),
    ];
    for (let i = 0; i < 5; i++)
      c.send({ jsonrpc: "2.0", id: `s${i}`, method: "tools/call", params: { name: "a__slow", arguments: { ms: 1000 } } });
    await until(
      async () => (await c.request("mcpd/status")).result.servers.find((s: any) => s.name === "a").inFlight === 5,
      "calls in flight",
    );
    d.proc.kill("SIGTERM");
    for (let i = 0; i < 5; i++) {
      const r = await c.waitFor((m) => m.id === `s${i}`, `answer ${i}`);
      expect(r.result).toBeDefined();
    }
    await until(() => d.proc.exitCode !== null, "daemon exit");
    expect(d.proc.exitCode).toBe(0);
    expect(existsSync(d.socketPath)).toBe(false);
    expect(existsSync(join(d.home, "mcpd.pid"))).toBe(false);
    for (const pid of pids) expect(alive(pid)).toBe(false);
  });
});
