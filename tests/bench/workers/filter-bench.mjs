#!/usr/bin/env node
/**
 * What tool selection costs. One process starts an mcpd daemon in itself (@mcpd/daemon's startDaemon)
 * with ten fast servers of 20 tools each (200 tools in the aggregate view) and two profiles, then opens
 * three aggregate-view connections on its socket: `plain` (no selection), `all` (a profile whose globs
 * keep every tool: the filter's whole cost, with an answer as long as plain's) and `half` (a profile that
 * keeps about half by globs over the aggregate names). In alternating windows of the same run it
 * measures `tools/list` answered per second (8 in flight) on each, and `tools/call` per second (64 in
 * flight, `s0__echo`) on `plain` and `half`, so every side shares the machine's state of the moment.
 *
 * Spec: {durationMs, warmupMs, windows, home}. Prints {type: "filter", listed, list: {plain, all, half},
 * call: {plain, half}} (rates per window, in requests/s; `listed`: the tool count each connection sees).
 */
import { writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { startDaemon } from "@mcpd/daemon";
import { FAST_SERVER } from "../lib/env.mjs";

const spec = JSON.parse(process.argv[2]);
const SERVERS = 10;
const TOOLS_PER_SERVER = 20;
const LIST_IN_FLIGHT = 8;
const CALL_IN_FLIGHT = 64;

/** A pipelined raw JSONL client on a socket: resolves each id's response (no SDK, so its cost stays small). */
function rawClient(socket) {
  const waiting = new Map();
  let buf = "";
  socket.setEncoding("utf8");
  socket.on("data", (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (!line) continue;
      const msg = JSON.parse(line);
      const w = waiting.get(msg.id);
      if (!w) continue;
      waiting.delete(msg.id);
      if (msg.error) w.reject(new Error(`error ${msg.error.code}: ${msg.error.message}`));
      else w.resolve(msg.result);
    }
  });
  let nextId = 1;
  return {
    request(method, params) {
      const id = nextId++;
      socket.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
      return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
    },
    notify(method) {
      socket.write(`${JSON.stringify({ jsonrpc: "2.0", method })}\n`);
    },
  };
}

async function open(socketPath, select) {
  const socket = connect(socketPath);
  await new Promise((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  const c = rawClient(socket);
  if (select) await c.request("mcpd/select", select);
  await c.request("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "filter-bench", version: "1" } });
  c.notify("notifications/initialized");
  return { client: c, close: () => socket.destroy() };
}

/** Requests per second of `send` over `durationMs`, `inFlight` at a time. */
async function rate(send, inFlight, durationMs) {
  let done = 0;
  let stop = false;
  const lane = async () => {
    while (!stop) {
      await send();
      done++;
    }
  };
  const t0 = performance.now();
  const lanes = Array.from({ length: inFlight }, lane);
  await new Promise((r) => setTimeout(r, durationMs));
  stop = true;
  const elapsed = performance.now() - t0;
  await Promise.all(lanes);
  return done / (elapsed / 1000);
}

const servers = {};
for (let i = 0; i < SERVERS; i++)
  servers[`s${i}`] = { command: process.execPath, args: [FAST_SERVER, "--name", `s${i}`, "--tools", String(TOOLS_PER_SERVER)] };
const profiles = {
  // Every tool, each one through the filter: an include matching all, an exclude matching none.
  all: { tools: { include: ["s*__*"], exclude: ["*__no_such_tool_*"] } },
  // About half: five servers by prefix, minus a glob's worth, plus one exact name of another server.
  half: { tools: { include: ["s0__*", "s1__*", "s2__*", "s3__*", "s4__*", "s9__tool_1"], exclude: ["*__tool_1?"] } },
};
const configFile = join(spec.home, "config.json");
writeFileSync(configFile, JSON.stringify({ mcpd: { profiles }, mcpServers: servers }));
const env = { ...process.env, MCPD_HOME: spec.home, MCPD_CONFIG: configFile, MCPD_SOCKET: join(spec.home, "mcpd.sock") };
const daemon = await startDaemon({ foreground: true, env, logLevel: "warn", handleSignals: false });
for (let i = 0; daemon.manager.servers.some((h) => h.state !== "ready") && i < 3000; i++) await new Promise((r) => setTimeout(r, 20));

const conns = {
  plain: await open(env.MCPD_SOCKET),
  all: await open(env.MCPD_SOCKET, { profile: "all" }),
  half: await open(env.MCPD_SOCKET, { profile: "half" }),
};
const listed = {};
for (const [name, c] of Object.entries(conns)) listed[name] = (await c.client.request("tools/list", {})).tools.length;
const total = SERVERS * TOOLS_PER_SERVER;
if (listed.plain !== total || listed.all !== total || !(listed.half > 0 && listed.half < total)) {
  throw new Error(`unexpected listings: ${JSON.stringify(listed)}`);
}
const call = (c) => c.client.request("tools/call", { name: "s0__echo", arguments: { text: "hi" } });
const list = (c) => c.client.request("tools/list", {});
// Warm both paths (JIT, the catalog, the profile's memo) before anything is counted.
for (const c of Object.values(conns)) {
  await rate(() => call(c), CALL_IN_FLIGHT, spec.warmupMs / 2);
  await rate(() => list(c), LIST_IN_FLIGHT, spec.warmupMs / 2);
}
const out = { list: { plain: [], all: [], half: [] }, call: { plain: [], half: [] } };
for (let w = 0; w < spec.windows; w++) {
  // Rotate which side goes first, so none always gets the warmer machine.
  const sides = ["plain", "all", "half"];
  const order = [...sides.slice(w % 3), ...sides.slice(0, w % 3)];
  for (const side of order) out.list[side].push(await rate(() => list(conns[side]), LIST_IN_FLIGHT, spec.durationMs));
  for (const side of order.filter((x) => x !== "all"))
    out.call[side].push(await rate(() => call(conns[side]), CALL_IN_FLIGHT, spec.durationMs));
}
for (const c of Object.values(conns)) c.close();
await daemon.shutdown("bench done");
process.stdout.write(`${JSON.stringify({ type: "filter", listed, ...out })}\n`);
process.exit(0);
