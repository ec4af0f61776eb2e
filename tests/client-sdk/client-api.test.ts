/**
 * @mcpd/client against the real daemon and real servers (the stdio fixture and server-everything):
 * every McpdClient method, events, server-to-client requests, and each error code from a real situation.
 */
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { connect, type McpdClient, type McpdClientOptions } from "@mcpd/client";
import { waitFor } from "../helpers/process.js";
import { EVERYTHING, failure, fixture, readLog, TestDaemon } from "./test-daemon.js";

let d: TestDaemon;
let fxLog: string;
const clients: McpdClient[] = [];

beforeAll(async () => {
  d = await TestDaemon.start((home) => {
    fxLog = join(home, "fx.log");
    return {
      fx: fixture("fx", ["--log", fxLog]),
      // A daemon-side deadline short enough to hit in a test.
      quick: fixture("quick", [], { timeout: 500 }),
      // Disabled and enabled again by one test; no other test uses it.
      toggle: fixture("toggle"),
      everything: { command: process.execPath, args: [EVERYTHING, "stdio"] },
    };
  });
});
afterAll(async () => {
  await d?.cleanup();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

async function client(options: McpdClientOptions = {}): Promise<McpdClient> {
  const c = await connect({ env: d.env, clientInfo: { name: "sdk-e2e", version: "1.0.0" }, ...options });
  clients.push(c);
  return c;
}

const text = (r: { content: Array<{ type: string; text?: string }> }): string => r.content.map((c) => c.text).join("");

describe("McpdClient against the real daemon", () => {
  it("finds the socket from MCPD_HOME and lists servers, tools, prompts, resources and templates with their server", async () => {
    const c = await client();
    expect(c.socketPath).toBe(d.socketPath);
    expect(c.initializeResult?.serverInfo.name).toBe("mcpd");
    await waitFor(async () => (await c.servers()).every((s) => s.state === "ready"), { message: "every server ready", timeoutMs: 45_000 });
    const servers = await c.servers();
    expect(servers.map((s) => [s.name, s.transport, s.enabled])).toEqual([
      ["fx", "stdio", true],
      ["quick", "stdio", true],
      ["toggle", "stdio", true],
      ["everything", "stdio", true],
    ]);

    const all = await c.listTools();
    const echo = all.find((t) => t.server === "fx" && t.name === "echo");
    expect(echo?.exposedName).toBe("fx__echo");
    expect(all.some((t) => t.server === "everything" && t.name === "trigger-sampling-request")).toBe(true);
    const fxTools = await c.listTools({ server: "fx" });
    expect(fxTools.map((t) => t.name)).toContain("progress");
    expect(fxTools.every((t) => t.server === "fx" && !t.name.includes("__"))).toBe(true);

    expect((await c.listPrompts()).find((p) => p.server === "fx")?.name).toBe("greet");
    expect((await c.listPrompts({ server: "fx" })).map((p) => p.name)).toEqual(["greet"]);
    expect((await c.listResources({ server: "fx" })).map((r) => r.uri)).toEqual(["fixture://static/one", "fixture://static/two"]);
    expect((await c.listResources()).filter((r) => r.server === "fx").map((r) => r.uri)).toEqual([
      "fixture://static/one",
      "fixture://static/two",
    ]);
    expect((await c.listResourceTemplates({ server: "fx" })).map((t) => t.uriTemplate)).toEqual(["fixture://items/{id}"]);
    expect((await c.listResourceTemplates()).some((t) => t.server === "fx" && t.uriTemplate === "fixture://items/{id}")).toBe(true);
  });

  it("calls a tool by server (per-request routing) and by exposed name, with progress under its own token", async () => {
    const c = await client();
    expect(text(await c.callTool({ server: "fx", name: "echo", arguments: { text: "routed" } }))).toBe("routed");
    expect(text(await c.callTool({ name: "fx__echo", arguments: { text: "exposed" } }))).toBe("exposed");
    const progress: unknown[] = [];
    const r = await c.callTool(
      { server: "fx", name: "progress", arguments: { steps: 3, intervalMs: 10 } },
      { onProgress: (p) => progress.push(p) },
    );
    expect(text(r)).toBe("done");
    expect(progress).toEqual([1, 2, 3].map((n) => ({ progress: n, total: 3 })));
    const failed = await c.callTool({ server: "fx", name: "fail" });
    expect(failed.isError).toBe(true);
  });

  it("gets prompts, reads resources, sends generic requests and control calls, and pings", async () => {
    const c = await client();
    const prompt = await c.getPrompt({ server: "fx", name: "greet", arguments: { name: "Ada" } });
    expect(JSON.stringify(prompt)).toContain("Hello, Ada!");
    const byExposed = await c.getPrompt({ name: "fx__greet", arguments: { name: "Bo" } });
    expect(JSON.stringify(byExposed)).toContain("Hello, Bo!");
    const one = await c.readResource({ server: "fx", uri: "fixture://static/one" });
    expect(JSON.stringify(one)).toContain('"text":"one"');
    const item = await c.readResource({ server: "fx", uri: "fixture://items/7" });
    expect(JSON.stringify(item)).toContain("item 7");
    const completion = await c.request<{ completion: { values: string[] } }>("fx", "completion/complete", {
      ref: { type: "ref/prompt", name: "greet" },
      argument: { name: "name", value: "a" },
    });
    expect(completion.completion.values).toEqual(["alpha", "beta"]);
    const viaControl = await c.control<{ tools: Array<{ server: string }> }>("mcpd/tools", { server: "fx" });
    expect(viaControl.tools.length).toBeGreaterThan(0);
    expect(viaControl.tools.every((t) => t.server === "fx")).toBe(true);
    await c.ping();
  });

  it("subscribes to a resource, receives its updates, and unsubscribes upstream with the last callback", async () => {
    const c = await client();
    const updates: Array<[string, string | undefined]> = [];
    const unsubscribe = await c.subscribe("fixture://static/one", (u) => updates.push([u.uri, u.server]), { server: "fx" });
    expect(text(await c.callTool({ server: "fx", name: "touch", arguments: { uri: "fixture://static/one" } }))).toBe("touched");
    await waitFor(() => updates.length === 1, { message: "resources/updated" });
    expect(updates).toEqual([["fixture://static/one", "fx"]]);
    await unsubscribe();
    await waitFor(() => readLog(fxLog).some((m) => m.method === "resources/unsubscribe" && m.params.uri === "fixture://static/one"), {
      message: "upstream unsubscribe",
    });
    expect(text(await c.callTool({ server: "fx", name: "touch", arguments: { uri: "fixture://static/one" } }))).toBe("not subscribed");
  });

  it("emits notification, listChanged and serverState events, and restarts a server", async () => {
    // restart() is a privileged control method: this client opens a control connection.
    const c = await client({ control: true });
    const notes: Array<[string, string | undefined]> = [];
    const lists: unknown[] = [];
    const states: Array<[string, string, string | undefined]> = [];
    c.on("notification", (e) => notes.push([e.method, e.server]));
    c.on("listChanged", (e) => lists.push(e));
    c.on("serverState", (e) => states.push([e.server, e.state, e.previous]));

    expect(text(await c.callTool({ server: "fx", name: "log", arguments: { level: "info", message: "hello" } }))).toBe("logged");
    await waitFor(() => notes.some(([m, s]) => m === "notifications/message" && s === "fx"), { message: "log notification" });
    await c.callTool({ server: "fx", name: "change_tools" });
    await waitFor(() => lists.length > 0, { message: "listChanged" });
    expect(lists[0]).toEqual({ kind: "tools", server: "fx" });
    await waitFor(async () => (await c.listTools({ server: "fx" })).some((t) => t.name.startsWith("added_")), {
      message: "the added tool",
    });

    expect(await c.restart("fx")).toEqual(["fx"]);
    await waitFor(() => states.some(([s, state]) => s === "fx" && state === "ready"), { message: "fx ready again" });
    expect(states.some(([s, state]) => s === "fx" && (state === "restarting" || state === "stopped" || state === "starting"))).toBe(true);
    expect(text(await c.callTool({ server: "fx", name: "echo", arguments: { text: "after restart" } }))).toBe("after restart");
  });

  it("answers server-to-client requests with registered handlers: sampling from server-everything, roots and elicitation from the fixture", async () => {
    const seen: Array<[string, string | undefined]> = [];
    const c = await client({
      handlers: {
        "sampling/createMessage": (params, ctx) => {
          seen.push([ctx.method, ctx.server]);
          const prompt = (params.messages as Array<{ content: { text: string } }>)[0]!.content.text;
          return { role: "assistant", model: "test-model", stopReason: "endTurn", content: { type: "text", text: `sampled <${prompt}>` } };
        },
        "roots/list": () => ({ roots: [{ uri: "file:///work/here", name: "here" }] }),
        "elicitation/create": () => ({ action: "accept", content: { answer: 42 } }),
      },
    });
    const sampled = await c.callTool({
      server: "everything",
      name: "trigger-sampling-request",
      arguments: { prompt: "hi there", maxTokens: 5 },
    });
    expect(JSON.stringify(sampled)).toContain("sampled <");
    expect(JSON.stringify(sampled)).toContain("hi there");
    expect(seen[0]![0]).toBe("sampling/createMessage");

    const roots = await c.callTool({ server: "fx", name: "roots" });
    expect(text(roots)).toContain("file:///work/here");
    const elicited = await c.callTool({ server: "fx", name: "elicit" });
    expect(JSON.parse(text(elicited))).toEqual({ action: "accept", content: { answer: 42 } });
  });

  it("answers a sampling request from server-everything in its transparent view (view: everything)", async () => {
    const c = await client({
      view: "everything",
      handlers: {
        "sampling/createMessage": (_params, ctx) => ({
          role: "assistant",
          model: "m",
          content: { type: "text", text: `from the view handler (${ctx.server})` },
        }),
      },
    });
    const sampled = await c.callTool({ name: "trigger-sampling-request", arguments: { prompt: "p", maxTokens: 5 } });
    expect(JSON.stringify(sampled)).toContain("from the view handler (everything)");
  });

  it("reports status and logs, disables and enables a server, and reloads the config", async () => {
    const c = await client({ control: true });
    const status = await c.status();
    // A control connection gets the daemon's whole info, its socket path included.
    expect(status.daemon).toMatchObject({ pid: d.proc!.pid, socketPath: d.socketPath });
    expect(status.servers.map((s) => s.name)).toEqual(["fx", "quick", "toggle", "everything"]);
    // Another client is listed (the asking one is not: tests/cli/cli-status-logs.test.ts pins that).
    await client({ clientInfo: { name: "sdk-e2e-other", version: "1.0.0" } });
    expect((await c.status()).clients.map((x) => x.clientInfo?.name)).toContain("sdk-e2e-other");

    await c.callTool({ server: "fx", name: "stderr", arguments: { text: "a line for the logs" } });
    const slow = { timeoutMs: 45_000 }; // these wait for server processes to start on a loaded machine
    await waitFor(async () => (await c.logs({ server: "fx" })).includes("a line for the logs"), {
      message: "stderr line in logs",
      ...slow,
    });
    expect((await c.logs({ lines: 5 })).length).toBeGreaterThan(0);

    expect(await c.disable("toggle")).toEqual({ server: "toggle", state: "disabled" });
    const unavailable = await failure(c.callTool({ server: "toggle", name: "echo", arguments: { text: "x" } }));
    expect(unavailable.code).toBe("MCPD_SERVER_UNAVAILABLE");
    expect(unavailable.message).toContain('"toggle" is disabled');
    expect((await c.enable("toggle")).server).toBe("toggle");
    await waitFor(async () => (await c.servers()).find((s) => s.name === "toggle")?.state === "ready", {
      message: "toggle ready",
      ...slow,
    });

    d.writeConfig({
      fx: fixture("fx", ["--log", fxLog]),
      quick: fixture("quick", [], { timeout: 500 }),
      toggle: fixture("toggle"),
      everything: { command: process.execPath, args: [EVERYTHING, "stdio"] },
      extra: fixture("extra"),
    });
    const reloaded = await c.reload();
    expect(reloaded.added).toEqual(["extra"]);
    await waitFor(async () => (await c.servers()).find((s) => s.name === "extra")?.state === "ready", { message: "extra ready", ...slow });
    expect(text(await c.callTool({ server: "extra", name: "echo", arguments: { text: "new" } }))).toBe("new");
  });

  it("opens a server's transparent view with view: <server>", async () => {
    const c = await client({ view: "fx" });
    expect(c.viewServer).toBe("fx");
    expect(c.initializeResult?.serverInfo.name).toBe("fx");
    const tools = await c.listTools();
    expect(tools.find((t) => t.name === "echo")?.server).toBe("fx");
    expect(text(await c.callTool({ name: "echo", arguments: { text: "view" } }))).toBe("view");
  });
});

describe("McpdClient error codes, each from a real situation", () => {
  it("MCPD_REQUEST_TIMEOUT: the caller's timeout passes; the server gets notifications/cancelled", async () => {
    const c = await client();
    const err = await failure(
      c.callTool({ server: "fx", name: "slow", arguments: { ms: 30_000, text: "timeout-case" } }, { timeout: 200 }),
    );
    expect([err.code, err.message]).toEqual(["MCPD_REQUEST_TIMEOUT", "Request timeout after 200ms"]);
    const call = await waitFor(() => readLog(fxLog).find((m) => m.method === "tools/call" && m.params.arguments?.text === "timeout-case"), {
      message: "slow call upstream",
    });
    await waitFor(() => readLog(fxLog).some((m) => m.method === "notifications/cancelled" && m.params.requestId === call.id), {
      message: "cancelled upstream",
    });
  });

  it("MCPD_REQUEST_TIMEOUT: the daemon's per-server timeout passes first", async () => {
    const c = await client();
    const err = await failure(c.callTool({ server: "quick", name: "slow", arguments: { ms: 30_000 } }));
    expect([err.code, err.wireCode, err.message]).toEqual(["MCPD_REQUEST_TIMEOUT", -32061, "Request timeout after 500ms"]);
  });

  it("MCPD_ABORTED: the caller's signal aborts, with its reason as cause; the server gets notifications/cancelled", async () => {
    const c = await client();
    const ac = new AbortController();
    const call = c.callTool({ server: "fx", name: "slow", arguments: { ms: 30_000, text: "abort-case" } }, { signal: ac.signal });
    const upstream = await waitFor(
      () => readLog(fxLog).find((m) => m.method === "tools/call" && m.params.arguments?.text === "abort-case"),
      { message: "slow call upstream" },
    );
    const reason = new Error("user pressed stop");
    ac.abort(reason);
    const err = await failure(call);
    expect(err.code).toBe("MCPD_ABORTED");
    expect(err.cause).toBe(reason);
    await waitFor(() => readLog(fxLog).some((m) => m.method === "notifications/cancelled" && m.params.requestId === upstream.id), {
      message: "cancelled upstream",
    });
  });

  it("MCPD_UNKNOWN_TOOL: an exposed name no server has; MCPD_UNKNOWN_SERVER: routing to a server that does not exist", async () => {
    const c = await client();
    const unknownTool = await failure(c.callTool({ name: "fx__ecoh", arguments: {} }));
    expect([unknownTool.code, unknownTool.wireCode]).toEqual(["MCPD_UNKNOWN_TOOL", -32602]);
    expect(unknownTool.message).toContain("did you mean fx__echo");
    const unknownServer = await failure(c.callTool({ server: "zzz", name: "echo" }));
    expect(unknownServer.code).toBe("MCPD_UNKNOWN_SERVER");
    expect(unknownServer.message).toContain("fx");
    const badView = await failure(client({ view: "zzz" }));
    expect(badView.code).toBe("MCPD_UNKNOWN_SERVER");
  });

  it("MCPD_MCP_ERROR: a server's own JSON-RPC error is kept with its code and message", async () => {
    const c = await client();
    const err = await failure(c.callTool({ server: "fx", name: "echo", arguments: { wrong: 1 } }));
    expect(err.code).toBe("MCPD_MCP_ERROR");
    expect(err.wireCode).toBe(-32602);
    expect(err.message).toMatch(/^MCP error -32602: /);
  });

  it("MCPD_DAEMON_UNAVAILABLE: no daemon at the socket path, with the hint to run mcpd start", async () => {
    const err = await failure(connect({ socketPath: join(d.home, "missing.sock") }));
    expect(err.code).toBe("MCPD_DAEMON_UNAVAILABLE");
    expect(err.message).toContain("missing.sock");
    expect(err.message).toContain("mcpd start");
  });

  it("rejects a control() call that is not mcpd/* without sending it", async () => {
    const c = await client();
    await expect(c.control("tools/list")).rejects.toThrow(TypeError);
  });
});
