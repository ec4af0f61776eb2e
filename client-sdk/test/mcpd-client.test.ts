import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { McpdError } from "@mcpd/protocol";
import { connect, McpdClient } from "../src/mcpd-client.js";
import { type JsonlPeer, startPeer, waitFor } from "./jsonl-peer.js";

let peer: JsonlPeer;
let dir: string;
let cleanup: () => Promise<void>;
const clients: McpdClient[] = [];

beforeEach(async () => {
  ({ peer, dir, cleanup } = await startPeer());
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await cleanup();
});

async function client(options: ConstructorParameters<typeof McpdClient>[0] = {}): Promise<McpdClient> {
  const c = new McpdClient({ socketPath: peer.socketPath, reconnect: { initialDelayMs: 20, maxDelayMs: 100 }, ...options });
  clients.push(c);
  return c.connect();
}

function codeOf(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => "resolved",
    (err: McpdError) => err.code,
  );
}

describe("McpdClient handshake", () => {
  it("sends mcpd/select {events}, then initialize declaring the capabilities of registered handlers, then notifications/initialized", async () => {
    const c = await client({
      clientInfo: { name: "t", version: "9" },
      capabilities: { experimental: { x: {} } },
      handlers: { "sampling/createMessage": () => ({}) },
    });
    c.setRequestHandler("roots/list", () => ({ roots: [] }));
    await waitFor(() => peer.received.length === 3, "three messages");
    const methods = peer.received.map((r) => r.msg.method);
    expect(methods).toEqual(["mcpd/select", "initialize", "notifications/initialized"]);
    const [select, init] = peer.received.map((r) => r.msg);
    expect(select!.params).toEqual({ events: true });
    expect(typeof select!.id).toBe("number");
    expect(init!.params).toEqual({
      protocolVersion: "2025-11-25",
      capabilities: { experimental: { x: {} }, sampling: {} },
      clientInfo: { name: "t", version: "9" },
    });
    expect(c.state).toBe("ready");
    expect(c.initializeResult?.serverInfo.name).toBe("mcpd");
  });

  it("sends initialize without waiting for the select's answer: the handshake is one round trip", async () => {
    // The daemon answers the select only once the initialize has arrived: a client that waited for the
    // answer first would never send it.
    peer.methods["mcpd/select"] = (_params, conn) =>
      waitFor(() => conn.received.some((m) => m.method === "initialize"), "initialize before the select's answer", 10_000).then(
        () => ({ view: "aggregate" }),
        () => undefined,
      );
    const c = await client({ connectTimeout: 15_000 });
    expect(c.state).toBe("ready");
    await waitFor(() => peer.received.length === 3, "three messages");
    expect(peer.received.map((r) => r.msg.method)).toEqual(["mcpd/select", "initialize", "notifications/initialized"]);
  });

  it("selects a server view and sends requests to it without routing _meta", async () => {
    peer.methods["tools/list"] = () => ({ tools: [{ name: "echo", inputSchema: { type: "object" } }] });
    const c = await client({ view: "github" });
    expect(peer.messages("mcpd/select")[0]!.params).toEqual({ events: true, server: "github" });
    expect(await c.listTools()).toEqual([{ name: "echo", inputSchema: { type: "object" }, server: "github" }]);
    expect(peer.messages("tools/list")[0]!.params).toEqual({});
  });

  it("opens a control connection only when asked: control: true adds it to mcpd/select, the first message", async () => {
    await client({ control: true, view: "github" });
    expect(peer.received[0]!.msg.method).toBe("mcpd/select");
    expect(peer.received[0]!.msg.params).toEqual({ events: true, server: "github", control: true });
    expect(() => new McpdClient({ socketPath: peer.socketPath, control: "yes" as unknown as boolean })).toThrow(
      /control must be a boolean/,
    );
  });

  it("fails connect with the daemon's select error (unknown server), mapped by data.mcpdCode", async () => {
    peer.methods["mcpd/select"] = () => ({
      error: { code: -32602, message: 'Unknown server "nope"; configured: a, b', data: { mcpdCode: "MCPD_UNKNOWN_SERVER" } },
    });
    const err = (await client({ view: "nope" }).catch((e: unknown) => e)) as McpdError;
    expect(err.code).toBe("MCPD_UNKNOWN_SERVER");
    expect(err.message).toContain("configured: a, b");
  });

  it("a daemon that accepts but does not answer the handshake within connectTimeout (stopped, stuck) is MCPD_DAEMON_UNAVAILABLE, naming it (was MCPD_REQUEST_TIMEOUT)", async () => {
    peer.methods["mcpd/select"] = () => undefined;
    const err = (await client({ connectTimeout: 300, reconnect: false }).catch((e: unknown) => e)) as McpdError;
    expect(err.code).toBe("MCPD_DAEMON_UNAVAILABLE");
    expect(err.message).toBe(`mcpd accepted the connection on ${peer.socketPath} but did not answer within 300 ms (stopped or stuck?)`);
    expect((err.cause as McpdError).code).toBe("MCPD_REQUEST_TIMEOUT");
  });

  it("fails with MCPD_DAEMON_UNAVAILABLE and the mcpd start hint when no socket exists", async () => {
    const err = (await connect({ socketPath: path.join(dir, "none.sock") }).catch((e: unknown) => e)) as McpdError;
    expect(err.code).toBe("MCPD_DAEMON_UNAVAILABLE");
    expect(err.message).toContain("no socket at");
    expect(err.message).toContain("mcpd start");
  });

  it("fails with MCPD_DAEMON_UNAVAILABLE when the path is a stale non-socket file", async () => {
    const stale = path.join(dir, "stale.sock");
    fs.writeFileSync(stale, "");
    const err = (await connect({ socketPath: stale }).catch((e: unknown) => e)) as McpdError;
    expect(err.code).toBe("MCPD_DAEMON_UNAVAILABLE");
    expect(err.message).toContain(stale);
  });

  it("finds the socket from MCPD_HOME like the CLI does", async () => {
    fs.renameSync(peer.socketPath, path.join(dir, "mcpd.sock"));
    const c = new McpdClient({ env: { MCPD_HOME: dir } });
    clients.push(c);
    expect(c.socketPath).toBe(path.join(dir, "mcpd.sock"));
    await c.connect();
    expect(c.state).toBe("ready");
  });
});

describe("McpdClient calls", () => {
  it("routes per request with _meta['mcpd/server'], sends a progressToken with onProgress, and resolves the result", async () => {
    peer.methods["tools/call"] = (params, conn) => {
      const token = params._meta?.progressToken;
      if (token !== undefined) conn.send({ method: "notifications/progress", params: { progressToken: token, progress: 1, total: 1 } });
      return { content: [{ type: "text", text: params.arguments.text }] };
    };
    const c = await client();
    const progress: unknown[] = [];
    const result = await c.callTool({ server: "fx", name: "echo", arguments: { text: "hi" } }, { onProgress: (p) => progress.push(p) });
    expect(result).toEqual({ content: [{ type: "text", text: "hi" }] });
    const sent = peer.messages("tools/call")[0]!;
    expect(sent.params).toEqual({ name: "echo", arguments: { text: "hi" }, _meta: { "mcpd/server": "fx", progressToken: sent.id } });
    expect(progress).toEqual([{ progress: 1, total: 1 }]);
    await c.callTool({ name: "fx__echo", arguments: { text: "x" } });
    expect(peer.messages("tools/call")[1]!.params).toEqual({ name: "fx__echo", arguments: { text: "x" } });
  });

  it("lists every page of a server's tools, and the aggregate through mcpd/tools", async () => {
    peer.methods["tools/list"] = (params) =>
      params.cursor === "p2" ? { tools: [{ name: "b", inputSchema: {} }] } : { tools: [{ name: "a", inputSchema: {} }], nextCursor: "p2" };
    peer.methods["mcpd/tools"] = () => ({ tools: [{ server: "fx", name: "a", exposedName: "fx__a", inputSchema: {} }] });
    const c = await client();
    expect((await c.listTools({ server: "fx" })).map((t) => [t.server, t.name])).toEqual([
      ["fx", "a"],
      ["fx", "b"],
    ]);
    expect(await c.listTools()).toEqual([{ server: "fx", name: "a", exposedName: "fx__a", inputSchema: {} }]);
  });

  it("control() refuses non-mcpd methods; the control helpers send the documented params", async () => {
    peer.methods["mcpd/restart"] = (p) => ({ restarted: p.server ? [p.server] : ["a", "b"] });
    peer.methods["mcpd/logs"] = (p) => ({ lines: [JSON.stringify(p)] });
    const c = await client();
    await expect(c.control("tools/list")).rejects.toThrow(/not an mcpd\/\* method/);
    expect(await c.restart()).toEqual(["a", "b"]);
    expect(await c.restart("a")).toEqual(["a"]);
    expect(await c.logs({ server: "a", lines: 5 })).toEqual(['{"server":"a","lines":5}']);
  });
});

describe("McpdClient events and server-to-client requests", () => {
  it("emits notification, listChanged and serverState with the server each came from", async () => {
    const c = await client();
    const events: unknown[] = [];
    c.on("notification", (e) => events.push(["notification", e.method, e.server]));
    c.on("listChanged", (e) => events.push(["listChanged", e]));
    c.on("serverState", (e) => events.push(["serverState", e]));
    const [pc] = [...peer.connections];
    pc!.send({ method: "notifications/tools/list_changed", params: { _meta: { "mcpd/server": "fx" } } });
    pc!.send({
      method: "notifications/mcpd/serverState",
      params: { server: "fx", state: "restarting", previous: "ready", reason: "crashed" },
    });
    await waitFor(() => events.length === 4, "four events");
    expect(events).toEqual([
      ["listChanged", { kind: "tools", server: "fx" }],
      ["notification", "notifications/tools/list_changed", "fx"],
      ["serverState", { server: "fx", state: "restarting", previous: "ready", reason: "crashed" }],
      ["notification", "notifications/mcpd/serverState", undefined],
    ]);
  });

  it("answers server-to-client requests with the handler, -32601 without one, and aborts a cancelled handler without answering", async () => {
    let cancelledSignal: AbortSignal | undefined;
    const c = await client({
      handlers: {
        "sampling/createMessage": (params, ctx) => ({ role: "assistant", content: { type: "text", text: `${ctx.server}:${params.x}` } }),
        "elicitation/create": (_p, ctx) => {
          cancelledSignal = ctx.signal;
          return new Promise(() => {});
        },
      },
    });
    expect(c.state).toBe("ready");
    const [pc] = [...peer.connections];
    pc!.send({ id: 100, method: "sampling/createMessage", params: { x: 1, _meta: { "mcpd/server": "fx" } } });
    pc!.send({ id: 101, method: "roots/list", params: {} });
    pc!.send({ id: 102, method: "elicitation/create", params: {} });
    pc!.send({ id: 103, method: "ping" });
    await waitFor(() => cancelledSignal, "elicitation handler");
    pc!.send({ method: "notifications/cancelled", params: { requestId: 102, reason: "user left" } });
    await waitFor(() => cancelledSignal?.aborted, "handler signal aborted");
    await waitFor(() => pc!.received.filter((m) => m.id !== undefined && m.method === undefined).length >= 3, "answers");
    const answers = pc!.received.filter((m) => m.method === undefined);
    expect(answers).toEqual([
      {
        jsonrpc: "2.0",
        id: 101,
        error: { code: -32601, message: "Method not found: roots/list (no handler registered with setRequestHandler)" },
      },
      { jsonrpc: "2.0", id: 103, result: {} },
      { jsonrpc: "2.0", id: 100, result: { role: "assistant", content: { type: "text", text: "fx:1" } } },
    ]);
  });
});

describe("McpdClient reconnection", () => {
  it("reconnects after the daemon restarts: fails in-flight calls, re-handshakes, restores subscriptions, and serves waiting calls", async () => {
    peer.methods.hang = () => undefined;
    peer.methods["resources/subscribe"] = () => ({});
    const c = await client({ handlers: { "roots/list": () => ({ roots: [] }) } });
    const updates: string[] = [];
    await c.subscribe("fixture://a", (u) => updates.push(`${u.server}:${u.uri}`), { server: "fx" });
    const lifecycle: string[] = [];
    c.on("connectionLost", (e) => lifecycle.push(`lost:${e.error.code}`));
    c.on("reconnected", () => lifecycle.push("reconnected"));
    const inflight = codeOf(c.request(undefined, "hang"));
    await waitFor(() => peer.messages("hang").length === 1, "hang at the peer");

    await peer.stop();
    expect(await inflight).toBe("MCPD_CONNECTION_LOST");
    await waitFor(() => lifecycle.length === 1, "connectionLost");
    expect(c.state).toBe("reconnecting");
    const waiting = c.ping({ timeout: 20_000 });
    peer.received.length = 0;
    await peer.start();

    await waiting;
    expect(lifecycle).toEqual(["lost:MCPD_CONNECTION_LOST", "reconnected"]);
    expect(peer.received.map((r) => r.msg.method)).toEqual([
      "mcpd/select",
      "initialize",
      "notifications/initialized",
      "resources/subscribe",
      "ping",
    ]);
    expect(peer.received[1]!.msg.params.capabilities).toEqual({ roots: {} });
    expect(peer.received[3]!.msg.params).toEqual({ uri: "fixture://a", _meta: { "mcpd/server": "fx" } });
    expect(peer.messages("hang")).toHaveLength(0); // never replayed

    const [pc] = [...peer.connections];
    pc!.send({ method: "notifications/resources/updated", params: { uri: "fixture://a", _meta: { "mcpd/server": "fx" } } });
    await waitFor(() => updates.length === 1, "update after reconnect");
    expect(updates).toEqual(["fx:fixture://a"]);
  });

  it("re-sends a subscription the new daemon refused at the handshake once its server reports ready", async () => {
    let refuse = false;
    peer.methods["resources/subscribe"] = () =>
      refuse
        ? { error: { code: -32602, message: 'Unknown server "fx"; configured: (none)', data: { mcpdCode: "MCPD_UNKNOWN_SERVER" } } }
        : {};
    const c = await client();
    const updates: string[] = [];
    await c.subscribe("fixture://a", (u) => updates.push(u.uri), { server: "fx" });
    const back = new Promise((r) => c.once("reconnected", r));
    await peer.stop();
    refuse = true;
    await peer.start();
    await back;
    expect(peer.messages("resources/subscribe")).toHaveLength(2);
    refuse = false;
    const [pc] = [...peer.connections];
    pc!.send({ method: "notifications/mcpd/serverState", params: { server: "other", state: "ready", previous: "starting" } });
    pc!.send({ method: "notifications/mcpd/serverState", params: { server: "fx", state: "ready", previous: "starting" } });
    await waitFor(() => peer.messages("resources/subscribe").length === 3, "the retried subscribe");
    pc!.send({ method: "notifications/resources/updated", params: { uri: "fixture://a", _meta: { "mcpd/server": "fx" } } });
    await waitFor(() => updates.length === 1, "update");
    await c.ping();
    expect(peer.messages("resources/subscribe")).toHaveLength(3);
  });

  it("fails a call made while disconnected with MCPD_DAEMON_UNAVAILABLE when its timeout passes first", async () => {
    const c = await client();
    const lost = new Promise((r) => c.once("connectionLost", r));
    await peer.stop();
    await lost;
    const err = (await c.ping({ timeout: 100 }).catch((e: unknown) => e)) as McpdError;
    expect(err.code).toBe("MCPD_DAEMON_UNAVAILABLE");
    expect(err.message).toContain("did not come back within 100ms");
  });

  it("gives up after reconnect.maxAttempts, emits close with the error, and fails later calls", async () => {
    const c = await client({ reconnect: { initialDelayMs: 10, maxDelayMs: 20, maxAttempts: 3 } });
    const closed = new Promise<{ error: McpdError | undefined }>((r) => c.once("close", r));
    await peer.stop();
    const { error } = await closed;
    expect(error?.code).toBe("MCPD_DAEMON_UNAVAILABLE");
    expect(error?.message).toContain("after 3 attempts");
    expect(c.state).toBe("closed");
    expect(await codeOf(c.ping())).toBe("MCPD_CONNECTION_LOST");
  });

  it("with reconnect: false closes when the connection drops", async () => {
    const c = await client({ reconnect: false });
    const closed = new Promise((r) => c.once("close", r));
    await peer.stop();
    await closed;
    expect(c.state).toBe("closed");
  });

  it("close() is idempotent, ends waiting calls, and stops reconnecting", async () => {
    const c = await client();
    const lost = new Promise((r) => c.once("connectionLost", r));
    await peer.stop();
    await lost;
    const waiting = codeOf(c.ping());
    await c.close();
    await c.close();
    expect(await waiting).toBe("MCPD_CONNECTION_LOST");
    await peer.start();
    // Prove no reconnection happens: a fresh client connects and is the only one the peer sees.
    const other = await client();
    expect(other.state).toBe("ready");
    expect(peer.connections.size).toBe(1);
  });
});

describe("McpdClient subscriptions", () => {
  it("shares one upstream subscription per (server, uri) and unsubscribes with the last callback", async () => {
    peer.methods["resources/subscribe"] = () => ({});
    peer.methods["resources/unsubscribe"] = () => ({});
    const c = await client();
    const got: string[] = [];
    const un1 = await c.subscribe("u://1", () => got.push("one"));
    const un2 = await c.subscribe("u://1", () => got.push("two"));
    expect(peer.messages("resources/subscribe")).toHaveLength(1);
    const [pc] = [...peer.connections];
    pc!.send({ method: "notifications/resources/updated", params: { uri: "u://1", _meta: { "mcpd/server": "fx" } } });
    await waitFor(() => got.length === 2, "both callbacks");
    await un1();
    await un1();
    expect(peer.messages("resources/unsubscribe")).toHaveLength(0);
    await un2();
    expect(peer.messages("resources/unsubscribe")).toHaveLength(1);
  });

  it("rejects subscribe with the daemon's error and keeps no entry", async () => {
    peer.methods["resources/subscribe"] = () => ({
      error: { code: -32602, message: "Unknown resource", data: { mcpdCode: "MCPD_UNKNOWN_RESOURCE" } },
    });
    const c = await client();
    expect(await codeOf(c.subscribe("u://x", () => {}))).toBe("MCPD_UNKNOWN_RESOURCE");
    expect(await codeOf(c.subscribe("u://x", () => {}))).toBe("MCPD_UNKNOWN_RESOURCE");
    expect(peer.messages("resources/subscribe")).toHaveLength(2);
  });
});
