#!/usr/bin/env node
// A conformance client for `@modelcontextprotocol/conformance` 0.2.x (`client --command "node client-2026.mjs"`)
// whose MCP client is mcpd's upstream client: it starts a real mcpd (a daemon of its own, in a temporary
// home) with the scenario's server as its one HTTP server, and drives it through mcpd's socket as a 2025-era
// client of the server's transparent view. What the scenario's server sees is therefore mcpd's doing: the era
// probe, the 2026 envelope and headers (Mcp-Method, Mcp-Name, Mcp-Param-*), tools with invalid x-mcp-header
// annotations dropped, input_required rounds (mcpd asks this client, then retries), SSE resumption.
//
// What it does, whatever the scenario: lists the tools and calls each (with the scenario's `toolCalls`
// context when it gives one, else arguments made up from each tool's inputSchema), then lists and reads the
// resources and lists and gets the prompts the server offers. It answers mcpd's relayed requests as a user
// would: elicitation accepted with each field's default (or a made-up value), sampling with a fixed text,
// roots with one root. Exit 0: it did its part (the suite judges what the server saw).
import { spawn } from "node:child_process";
import { EventEmitter } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
const MCPD_BIN = join(ROOT, "daemon/bin/mcpd.js");
const url = process.argv[process.argv.length - 1];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "?";
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}");
const log = (...args) => console.error(`[mcpd-conformance ${scenario}]`, ...args);

/** Resolves when `emitter` emits `event`; rejects after `ms` saying `what` did not happen. */
function eventOrTimeout(emitter, event, what, ms = 20_000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
    emitter.once(event, (value) => {
      clearTimeout(timer);
      resolve(value);
    });
  });
}

/** mcpd in a fresh home (no HTTP front end), with the scenario's server as `s`; ready once it logs "mcpd started". */
async function startMcpd() {
  const home = mkdtempSync(join(tmpdir(), "mcpd-cc-"));
  const config = join(home, "config.json");
  writeFileSync(config, JSON.stringify({ mcpd: { http: { enabled: false } }, mcpServers: { s: { type: "http", url, timeout: 20_000 } } }));
  const env = { ...process.env, MCPD_HOME: home, MCPD_CONFIG: config, XDG_RUNTIME_DIR: "", MCPD_FOREGROUND_REEXEC: "0" };
  delete env.MCPD_SOCKET;
  const proc = spawn(process.execPath, [MCPD_BIN, "start", "--foreground", "--log-level", "debug"], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const started = new EventEmitter();
  const collect = (d) => {
    output = (output + d.toString()).slice(-400_000);
    if (output.includes('"msg":"mcpd started"')) started.emit("started");
  };
  proc.stdout.on("data", collect);
  proc.stderr.on("data", collect);
  proc.once("exit", (code) => started.emit("started", new Error(`mcpd exited ${code}: ${output.slice(-4000)}`)));
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      const exited = eventOrTimeout(proc, "exit", "mcpd to exit");
      proc.kill("SIGTERM");
      await exited.catch(() => proc.kill("SIGKILL"));
    }
    if (process.exitCode) log("mcpd's log (tail):\n", output.slice(-30_000));
    rmSync(home, { recursive: true, force: true });
  };
  try {
    const failed = await eventOrTimeout(started, "started", "mcpd to start");
    if (failed instanceof Error) throw failed;
  } catch (err) {
    await stop();
    throw err;
  }
  return { socketPath: join(home, "mcpd.sock"), stop };
}

/** A JSON-RPC client on mcpd's socket that answers mcpd's requests with `answer(method, params)`. */
async function socketClient(socketPath, answer) {
  const socket = await new Promise((resolve, reject) => {
    const s = connect(socketPath);
    s.once("connect", () => resolve(s));
    s.once("error", reject);
  });
  const pending = new Map();
  let next = 1;
  let buffer = "";
  const send = (message) => socket.write(`${JSON.stringify(message)}\n`);
  socket.setEncoding("utf8");
  socket.on("data", (chunk) => {
    buffer += chunk;
    for (let i = buffer.indexOf("\n"); i >= 0; i = buffer.indexOf("\n")) {
      const line = buffer.slice(0, i);
      buffer = buffer.slice(i + 1);
      if (!line.trim()) continue;
      const message = JSON.parse(line);
      if (message.method !== undefined && message.id !== undefined) {
        log("mcpd asks:", message.method);
        Promise.resolve()
          .then(() => answer(message.method, message.params ?? {}))
          .then(
            (result) => send({ jsonrpc: "2.0", id: message.id, result }),
            (err) => send({ jsonrpc: "2.0", id: message.id, error: { code: -32603, message: String(err?.message ?? err) } }),
          );
      } else if (message.id !== undefined && pending.has(message.id)) {
        const { resolve, reject } = pending.get(message.id);
        pending.delete(message.id);
        if (message.error) reject(new Error(`${message.error.code}: ${message.error.message}`));
        else resolve(message.result);
      }
    }
  });
  const request = (method, params) =>
    new Promise((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve, reject });
      send({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });
    });
  return { request, notify: (method, params) => send({ jsonrpc: "2.0", method, params }), close: () => socket.destroy() };
}

/** A made-up value for a JSON Schema property: its default, else one of its type. */
function valueFor(schema = {}) {
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (Array.isArray(schema.oneOf) && schema.oneOf[0]?.const !== undefined) return schema.oneOf[0].const;
  switch (schema.type) {
    case "number":
    case "integer":
      return 5;
    case "boolean":
      return true;
    case "array":
      return [];
    case "object":
      return {};
    default:
      return "test";
  }
}

/** Arguments for a tool from its inputSchema: every required property, made up. */
function argumentsFor(tool) {
  const properties = tool.inputSchema?.properties ?? {};
  const required = tool.inputSchema?.required ?? Object.keys(properties);
  return Object.fromEntries(required.map((name) => [name, valueFor(properties[name])]));
}

/** How this client answers what mcpd relays from the server. */
function answer(method, params) {
  if (method === "elicitation/create") {
    const properties = params.requestedSchema?.properties ?? {};
    return { action: "accept", content: Object.fromEntries(Object.entries(properties).map(([name, schema]) => [name, valueFor(schema)])) };
  }
  if (method === "sampling/createMessage")
    return { role: "assistant", content: { type: "text", text: "Paris" }, model: "test-model", stopReason: "endTurn" };
  if (method === "roots/list") return { roots: [{ uri: "file:///test/root", name: "Test Root" }] };
  if (method === "ping") return {};
  throw new Error(`unexpected request ${method}`);
}

async function exercise(client) {
  const init = await client.request("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } },
    clientInfo: { name: "mcpd-conformance-client", version: "0.1.0" },
  });
  client.notify("notifications/initialized");
  log("initialized:", JSON.stringify(init.serverInfo), init.protocolVersion);
  const caps = init.capabilities ?? {};
  const { tools } = caps.tools ? await client.request("tools/list", {}) : { tools: [] };
  log("tools:", tools.map((t) => t.name).join(", ") || "(none)");
  const calls = Array.isArray(context.toolCalls) ? context.toolCalls : tools.map((t) => ({ name: t.name, arguments: argumentsFor(t) }));
  for (const call of calls) {
    const result = await client.request("tools/call", call).catch((err) => ({ error: err.message }));
    log(`tools/call ${call.name}:`, JSON.stringify(result).slice(0, 300));
  }
  if (caps.resources) {
    const { resources } = await client.request("resources/list", {});
    for (const r of resources) await client.request("resources/read", { uri: r.uri }).catch((err) => log("resources/read:", err.message));
  }
  if (caps.prompts) {
    const { prompts } = await client.request("prompts/list", {});
    for (const p of prompts) {
      const args = Object.fromEntries((p.arguments ?? []).map((a) => [a.name, "test"]));
      await client.request("prompts/get", { name: p.name, arguments: args }).catch((err) => log("prompts/get:", err.message));
    }
  }
}

const mcpd = await startMcpd();
try {
  const client = await socketClient(mcpd.socketPath, answer);
  try {
    const selected = await client.request("mcpd/select", { server: "s" });
    log("selected:", JSON.stringify(selected));
    await exercise(client);
  } finally {
    client.close();
  }
} catch (err) {
  log("failed:", err?.stack ?? String(err));
  process.exitCode = 1;
} finally {
  await mcpd.stop();
}
