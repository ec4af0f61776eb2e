/**
 * What a server sends back on its own: server-to-client requests (sampling, elicitation, roots), progress
 * notifications, and a client's roots changes going the other way. Each must reach the one agent it
 * belongs to and no other, with real processes: the daemon, fixture servers, and the official SDK Client
 * through `mcpd connect`.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { connect, createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { startHttpFixture, type HttpFixture } from "../fixtures/http/http-fixture.mjs";
import { EVERYTHING, MCPD_BIN, alive, fixture, startTestDaemon, until, type RawClient, type TestDaemon } from "./harness.js";

let daemon: TestDaemon | undefined;
const clients: Client[] = [];
const servers: ChildProcess[] = [];
const httpFixtures: HttpFixture[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  await daemon?.stop();
  daemon = undefined;
  for (const f of httpFixtures.splice(0)) await f.close();
  for (const child of servers.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    }
    expect(alive(child.pid)).toBe(false);
  }
});

/** server-everything in its Streamable HTTP mode on a port that was free a moment ago; resolves with its URL. */
async function everythingOverHttp(): Promise<string> {
  const port = await new Promise<number>((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port: p } = probe.address() as { port: number };
      probe.close(() => resolve(p));
    });
  });
  const child = spawn(process.execPath, [EVERYTHING, "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "ignore"],
  });
  servers.push(child);
  const accepts = (): Promise<boolean> =>
    new Promise((resolve) => {
      const sock = connect(port, "127.0.0.1");
      sock.once("connect", () => {
        sock.destroy();
        resolve(true);
      });
      sock.once("error", () => resolve(false));
    });
  await until(async () => child.exitCode === null && (await accepts()), `server-everything accepting on port ${port}`, 30_000);
  return `http://127.0.0.1:${port}/mcp`;
}

const ALL_CAPS = { sampling: {}, elicitation: {}, roots: { listChanged: true } };

/** An SDK Client on `mcpd connect SERVER`, declaring `capabilities`. */
async function connected(d: TestDaemon, server: string, capabilities: Record<string, unknown>, name = "e2e"): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MCPD_BIN, "connect", server, "--no-autostart"],
    env: { ...(process.env as Record<string, string>), MCPD_HOME: d.home, MCPD_CONFIG: d.configFile },
    stderr: "pipe",
  });
  const client = new Client({ name, version: "1.0.0" }, { capabilities });
  clients.push(client);
  await client.connect(transport);
  return client;
}

/** Handlers for the three server-to-client requests that count what reached this client. */
function answering(client: Client, label: string): { asked: string[] } {
  const asked: string[] = [];
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    asked.push("sampling");
    return { model: "m", role: "assistant", content: { type: "text", text: `sampled by ${label}` } };
  });
  client.setRequestHandler(ElicitRequestSchema, async () => {
    asked.push("elicitation");
    return { action: "accept", content: { name: label } };
  });
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    asked.push("roots");
    return { roots: [{ uri: `file:///roots-of-${label}`, name: label }] };
  });
  return { asked };
}

const text = (r: any): string => (r.content ?? []).map((c: any) => c.text ?? "").join("");

async function status(c: RawClient): Promise<any> {
  const r = await c.request("mcpd/status");
  if (!r.result) throw new Error(`mcpd/status failed: ${JSON.stringify(r.error)}`);
  return r.result;
}

async function inFlight(c: RawClient, server: string): Promise<number> {
  return (await status(c)).servers.find((s: any) => s.name === server).inFlight;
}

/** `mcpd status ARGS` as a CLI run against the test daemon. */
function cliStatus(d: TestDaemon, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MCPD_BIN, "status", ...args],
      { env: { ...process.env, MCPD_HOME: d.home, MCPD_CONFIG: d.configFile, NO_COLOR: "1", XDG_RUNTIME_DIR: "" }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe("server-to-client requests reach only the agent that caused them", () => {
  it("regression: a bystander that declared sampling, elicitation and roots never receives another agent's server requests", async () => {
    const d = (daemon = await startTestDaemon({ f: fixture("f", [], { roots: ["/srv/configured-root"] }) }));
    const s = await connected(d, "f", ALL_CAPS, "bystander");
    const sHandlers = answering(s, "S");
    const v = await connected(d, "f", {}, "caller");
    const control = await d.raw();

    // S has one call in flight to the shared server; V's calls make the server ask its client.
    const sSlow = s.callTool({ name: "slow", arguments: { ms: 120_000 } }, undefined, { timeout: 180_000 }).catch((e: Error) => e);
    await until(async () => (await inFlight(control, "f")) === 1, "S's call in flight");

    const sampled = await v.callTool({ name: "sample", arguments: { prompt: "for V" } });
    expect(sampled.isError).toBe(true);
    expect(text(sampled)).toContain("-32066");
    expect(text(sampled)).toMatch(/2 clients have requests in flight/);
    expect(text(sampled)).toContain('"sharing": "per-client"');
    const elicited = await v.callTool({ name: "elicit", arguments: {} });
    expect(elicited.isError).toBe(true);
    expect(text(elicited)).toContain("-32066");
    // roots/list cannot be routed either: the server gets its configured roots, not S's.
    const roots = await v.callTool({ name: "roots", arguments: {} });
    expect(roots.isError).toBeFalsy();
    expect(text(roots)).toContain("file:///srv/configured-root");
    expect(text(roots)).not.toContain("roots-of-S");
    expect(sHandlers.asked).toEqual([]);

    // The one client in flight that declared the capability is asked, and its answer is its own result.
    const own = await s.callTool({ name: "sample", arguments: { prompt: "for S" } });
    expect(text(own)).toBe("sampled by S");
    expect(sHandlers.asked).toEqual(["sampling"]);
    expect(await inFlight(control, "f")).toBe(1); // S's slow call was never disturbed
    await s.close();
    await sSlow;
  });

  it("on Streamable HTTP, sends the request to the client whose call's stream carried it, even while another client is calling", async () => {
    const url = await everythingOverHttp();
    const d = (daemon = await startTestDaemon({ web: { type: "http", url } }));
    const bystander = await connected(d, "web", ALL_CAPS, "bystander");
    const bHandlers = answering(bystander, "B");
    const caller = await connected(d, "web", ALL_CAPS, "caller");
    answering(caller, "C");
    const control = await d.raw();
    const bLong = bystander
      .callTool({ name: "trigger-long-running-operation", arguments: { duration: 60, steps: 1 } }, undefined, { timeout: 180_000 })
      .catch((e: Error) => e);
    await until(async () => (await inFlight(control, "web")) === 1, "the bystander's call in flight");
    const r = await caller.callTool({ name: "trigger-sampling-request", arguments: { prompt: "hi", maxTokens: 5 } });
    expect(text(r)).toContain("sampled by C");
    expect(bHandlers.asked).toEqual([]);
    await bystander.close();
    await bLong;
  });

  it("regression: a request on a Streamable HTTP server's standalone GET stream goes to the one client calling it, as over stdio (bug: refused, losing the conformance suite's sampling and elicitation scenarios)", async () => {
    const fx = await startHttpFixture();
    httpFixtures.push(fx);
    const d = (daemon = await startTestDaemon({ web: { type: "http", url: fx.url, roots: ["/srv/configured"] } }));
    const caller = await connected(d, "web", ALL_CAPS, "the-only-caller");
    const handlers = answering(caller, "C");
    await until(() => fx.listeners.size > 0, "the GET stream open");
    // The server asks on its standalone stream while the call that needs the answer is in flight.
    const ask = (method: string, params: object): Promise<any> =>
      caller.callTool({ name: "ask", arguments: { on: "listener", method, params } }, undefined, { timeout: 60_000 });
    const sampled = await ask("sampling/createMessage", { messages: [], maxTokens: 5 });
    expect(JSON.parse(text(sampled)), text(sampled)).toMatchObject({ content: { text: "sampled by C" } });
    const elicited = await ask("elicitation/create", { message: "name?", requestedSchema: { type: "object", properties: {} } });
    expect(JSON.parse(text(elicited))).toEqual({ action: "accept", content: { name: "C" } });
    expect(handlers.asked).toEqual(["sampling", "elicitation"]);
    // With no call in flight, nobody caused it: refused, and roots/list gets the configured roots.
    const idle = await fx.requestOnListeners("sampling/createMessage", { messages: [], maxTokens: 5 });
    expect(idle.error).toMatchObject({ code: -32066, data: { mcpdCode: "MCPD_NO_CLIENT_FOR_REQUEST" } });
    expect(idle.error.message).toContain("standalone stream");
    expect((await fx.requestOnListeners("roots/list")).result).toEqual({ roots: [{ uri: "file:///srv/configured" }] });
    expect(handlers.asked).toEqual(["sampling", "elicitation"]);
  });

  it("a request on a Streamable HTTP server's standalone GET stream while two clients call it is refused with -32066 naming both", async () => {
    const fx = await startHttpFixture();
    httpFixtures.push(fx);
    const d = (daemon = await startTestDaemon({ web: { type: "http", url: fx.url } }));
    const bystander = await connected(d, "web", ALL_CAPS, "the-bystander");
    const bHandlers = answering(bystander, "B");
    const caller = await connected(d, "web", ALL_CAPS, "the-caller");
    const cHandlers = answering(caller, "C");
    const control = await d.control();
    const slow = bystander.callTool({ name: "slow", arguments: { ms: 60_000 } }, undefined, { timeout: 180_000 }).catch((e: Error) => e);
    await until(
      async () => (await inFlight(control, "web")) === 1 && fx.listeners.size > 0,
      "the bystander's call in flight, the GET stream open",
    );
    const r = await caller.callTool({
      name: "ask",
      arguments: { on: "listener", method: "sampling/createMessage", params: { messages: [], maxTokens: 5 } },
    });
    const refused = JSON.parse(text(r));
    expect(refused, text(r)).toMatchObject({ code: -32066, data: { mcpdCode: "MCPD_NO_CLIENT_FOR_REQUEST" } });
    expect(refused.message).toContain("2 clients have requests in flight to it (");
    expect(refused.message).toContain('"the-bystander"');
    expect(refused.message).toContain('"the-caller"');
    expect(bHandlers.asked).toEqual([]);
    expect(cHandlers.asked).toEqual([]);
    await bystander.close();
    await slow;
  });

  it("refuses, naming why, when the only client calling did not declare the capability", async () => {
    const d = (daemon = await startTestDaemon({ f: fixture("f") }));
    const s = await connected(d, "f", ALL_CAPS, "idle-bystander");
    const sHandlers = answering(s, "S");
    const v = await connected(d, "f", {}, "no-sampling");
    await s.listTools();
    const r = await v.callTool({ name: "sample", arguments: { prompt: "x" } });
    expect(r.isError).toBe(true);
    expect(text(r)).toContain("-32066");
    expect(text(r)).toMatch(/did not declare the "sampling" capability/);
    expect(text(r)).toContain("no-sampling");
    expect(sHandlers.asked).toEqual([]);
  });

  it("with sharing per-client, two agents sample at the same time, each answering its own server", async () => {
    const d = (daemon = await startTestDaemon({ p: fixture("p", [], { sharing: "per-client" }) }));
    const a = await connected(d, "p", ALL_CAPS, "agent-a");
    const b = await connected(d, "p", ALL_CAPS, "agent-b");
    // Each handler holds its answer until both agents have been asked: the two requests are concurrent.
    let release!: () => void;
    const both = new Promise<void>((r) => (release = r));
    let asked = 0;
    for (const [c, label] of [
      [a, "A"],
      [b, "B"],
    ] as const) {
      c.setRequestHandler(CreateMessageRequestSchema, async () => {
        if (++asked === 2) release();
        await both;
        return { model: "m", role: "assistant", content: { type: "text", text: `sampled by ${label}` } };
      });
    }
    const [ra, rb] = await Promise.all([
      a.callTool({ name: "sample", arguments: { prompt: "a" } }),
      b.callTool({ name: "sample", arguments: { prompt: "b" } }),
    ]);
    expect(text(ra)).toBe("sampled by A");
    expect(text(rb)).toBe("sampled by B");
  });

  it("regression: an unroutable request from a shared server logs one hint naming sharing per-client and shows it in mcpd status", async () => {
    const d = (daemon = await startTestDaemon({ f: fixture("f"), quiet: fixture("quiet") }));
    const s = await connected(d, "f", ALL_CAPS, "S");
    answering(s, "S");
    const v = await connected(d, "f", ALL_CAPS, "V");
    answering(v, "V");
    const control = await d.raw();
    const sSlow = s.callTool({ name: "slow", arguments: { ms: 120_000 } }, undefined, { timeout: 180_000 }).catch((e: Error) => e);
    await until(async () => (await inFlight(control, "f")) === 1, "S's call in flight");
    for (let i = 0; i < 3; i++) {
      const r = await v.callTool({ name: "sample", arguments: { prompt: `try ${i}` } });
      expect(text(r)).toContain("-32066");
    }
    const json = await cliStatus(d, ["--json"]);
    expect(json.code, json.stderr).toBe(0);
    const st = JSON.parse(json.stdout);
    const f = st.servers.find((x: any) => x.name === "f");
    expect(f.hint).toMatch(/"sharing": "per-client"/);
    expect(f.hint).toContain("sampling/createMessage");
    expect(st.servers.find((x: any) => x.name === "quiet").hint).toBeNull();
    const human = await cliStatus(d, []);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/f: hint: .*per-client/);
    // Logged once for the server, not once per request.
    await until(() => d.stderr().includes("could not be routed"), "the hint in the daemon's log");
    expect(d.stderr().match(/server-to-client request could not be routed/g) ?? []).toHaveLength(1);
    await s.close();
    await sSlow;
  });
});

describe("progress from one server never reaches a call on another", () => {
  it("regression: progress for tokens a server was never given is dropped and counted, and the call it named still times out", async () => {
    const d = (daemon = await startTestDaemon({ good: fixture("good", [], { timeout: 5000 }), evil: fixture("evil") }));
    const victim = await d.raw();
    await victim.initialize();
    const attacker = await d.raw();
    await attacker.initialize();
    const control = await d.raw();
    await until(async () => (await status(control)).servers.every((s: any) => s.state === "ready"), "servers ready");
    victim.send({
      jsonrpc: "2.0",
      id: "long",
      method: "tools/call",
      params: { name: "good__slow", arguments: { ms: 120_000 }, _meta: { progressToken: "victim-token" } },
    });
    await until(async () => (await inFlight(control, "good")) === 1, "victim's call in flight");
    const tokens = Array.from({ length: 50 }, (_, i) => `mcpd-p${i + 1}`);
    const spoof = await attacker.request("tools/call", { name: "evil__spoof_progress", arguments: { tokens } });
    expect(spoof.result.content[0].text).toBe("spoofed 50");
    // The victim's call was still in flight when the spoofed progress came: the test saw the attack land.
    expect(await inFlight(control, "good")).toBe(1);
    const st = await status(control);
    expect(st.tables.progressDropped).toBeGreaterThanOrEqual(50);
    const answer = await victim.waitFor((m) => m.id === "long", "the victim's timeout", 60_000);
    expect(answer.error?.code).toBe(-32061);
    expect(victim.messages.filter((m) => m.method === "notifications/progress")).toEqual([]);
    expect(attacker.messages.filter((m) => m.method === "notifications/progress")).toEqual([]);
  });

  it("still delivers a server's progress for the token it was given", async () => {
    const d = (daemon = await startTestDaemon({ good: fixture("good") }));
    const c = await d.raw();
    await c.request("mcpd/select", { server: "good" });
    await c.initialize();
    const r = await c.request("tools/call", { name: "progress", arguments: { steps: 3, intervalMs: 5 }, _meta: { progressToken: 7 } });
    expect(r.result.content[0].text).toBe("done");
    await until(() => c.messages.filter((m) => m.method === "notifications/progress").length === 3, "three progress notifications");
    for (const m of c.messages.filter((x) => x.method === "notifications/progress")) expect(m.params.progressToken).toBe(7);
    expect((await status(c)).tables.progressDropped).toBe(0);
  });
});

describe("a client's roots changes go to its own server processes only", () => {
  /** The roots/list_changed notifications a fixture process received, read through `client` (which views it). */
  async function rootsChanges(client: RawClient, server?: string): Promise<number> {
    const params: Record<string, unknown> = { name: "received", arguments: { method: "notifications/roots/list_changed" } };
    if (server) params._meta = { "mcpd/server": server };
    const r = await client.request("tools/call", params);
    return JSON.parse(r.result.content[0].text).length;
  }

  it("regression: with sharing per-client, notifications/roots/list_changed reaches the sender's own process, not the shared one or another agent's", async () => {
    const d = (daemon = await startTestDaemon({ p: fixture("p", [], { sharing: "per-client" }), s: fixture("s") }));
    const a = await d.raw();
    const b = await d.raw();
    for (const c of [a, b]) {
      await c.request("initialize", {
        protocolVersion: "2025-11-25",
        capabilities: { roots: { listChanged: true } },
        clientInfo: { name: "raw", version: "1" },
      });
      c.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    }
    const pidA = (await a.request("tools/call", { name: "pid", arguments: {}, _meta: { "mcpd/server": "p" } })).result.content[0].text;
    const pidB = (await b.request("tools/call", { name: "pid", arguments: {}, _meta: { "mcpd/server": "p" } })).result.content[0].text;
    expect(pidA).not.toBe(pidB);
    a.send({ jsonrpc: "2.0", method: "notifications/roots/list_changed" });
    await until(async () => (await rootsChanges(a, "p")) === 1, "the change in A's own process");
    // Messages on one pipe arrive in order: had the notification been sent to B's process or to the shared
    // server, it would be there before these reads.
    expect(await rootsChanges(b, "p")).toBe(0);
    expect(await rootsChanges(a, "s")).toBe(0);
  });
});
