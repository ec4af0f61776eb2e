#!/usr/bin/env node
/**
 * Micro-benchmark of the router's per-message cost. One process, one minimal raw JSONL client keeping 64
 * `tools/call echo` in flight, either straight to the fast server's stdio (`direct`) or through an mcpd
 * daemon started in this same process (`daemon`: @mcpd/daemon's startDaemon, a Unix socket, the
 * transparent view of the server). The process's own CPU time per call is measured over the window; the
 * difference between the two modes is what the daemon (socket, router, upstream StdioTransport) costs.
 * Run under `--cpu-prof` for a profile of the daemon's hot path.
 *
 * Spec: {mode: "direct" | "daemon", durationMs, warmupMs, home, answerBytes?, maxConcurrency?} (answerBytes: each
 * call's answer is a text of that many characters, from the fast server's `big` tool; else `echo` of "hi";
 * maxConcurrency: the server's limit in the daemon's config, so calls past it wait in its queue). Prints
 * {type: "router", calls, rate, cpuUsPerCall, windowUs}, where windowUs is the measured window on the
 * profiler's clock (µs).
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { startDaemon } from "@mcpd/daemon";
import { FAST_SERVER } from "../lib/env.mjs";

const spec = JSON.parse(process.argv[2]);
const IN_FLIGHT = 64;
// spec.answerBytes: call the fast server's `big` tool, whose answer is a text of that many characters.
const REQUEST = spec.answerBytes
  ? (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"big","arguments":{"bytes":${spec.answerBytes}}}}\n`
  : (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}\n`;

/**
 * A pipelined raw JSONL client over (readable, writable): resolves each id's response. A tick's requests
 * leave in one write, so the client's own cost stays small next to what is measured.
 */
function rawClient(readable, writable) {
  const waiting = new Map();
  let corked = false;
  const write = (line) => {
    if (!corked) {
      corked = true;
      writable.cork();
      process.nextTick(() => {
        corked = false;
        writable.uncork();
      });
    }
    writable.write(line);
  };
  let buf = "";
  readable.setEncoding("utf8");
  readable.on("data", (d) => {
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
      const id = `s${nextId++}`;
      write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
      return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
    },
    call() {
      const id = nextId++;
      write(REQUEST(id));
      return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
    },
    notify(method) {
      write(JSON.stringify({ jsonrpc: "2.0", method }) + "\n");
    },
  };
}

async function open() {
  const init = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "router-bench", version: "1" } };
  if (spec.mode === "direct") {
    const child = spawn(process.execPath, [FAST_SERVER], { stdio: ["pipe", "pipe", "inherit"] });
    const c = rawClient(child.stdout, child.stdin);
    await c.request("initialize", init);
    c.notify("notifications/initialized");
    return { client: c, close: async () => child.stdin.end() };
  }
  const configFile = join(spec.home, "config.json");
  const fast = { command: process.execPath, args: [FAST_SERVER] };
  if (spec.maxConcurrency !== undefined) fast.maxConcurrency = spec.maxConcurrency;
  writeFileSync(configFile, JSON.stringify({ mcpServers: { fast } }));
  const env = { ...process.env, MCPD_HOME: spec.home, MCPD_CONFIG: configFile, MCPD_SOCKET: join(spec.home, "mcpd.sock") };
  const daemon = await startDaemon({ foreground: true, env, logLevel: "warn", handleSignals: false });
  for (let i = 0; daemon.manager.get("fast")?.state !== "ready" && i < 1500; i++) await new Promise((r) => setTimeout(r, 20));
  const socket = connect(env.MCPD_SOCKET);
  await new Promise((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  const c = rawClient(socket, socket);
  await c.request("mcpd/select", { server: "fast" });
  await c.request("initialize", init);
  c.notify("notifications/initialized");
  return {
    client: c,
    close: async () => {
      socket.destroy();
      await daemon.shutdown("bench done");
    },
  };
}

const { client, close } = await open();
// The server may still be starting: the first call waits for it (bounded by the daemon's timeout).
await client.call();
let calls = 0;
let counting = false;
let stop = false;
const lane = async () => {
  while (!stop) {
    await client.call();
    if (counting) calls++;
  }
};
const lanes = Array.from({ length: IN_FLIGHT }, lane);
await new Promise((r) => setTimeout(r, spec.warmupMs));
// The window on the monotonic clock V8's profiler stamps its samples with, in µs.
const nowUs = () => Number(process.hrtime.bigint() / 1000n);
counting = true;
const windowUs = [nowUs()];
const cpu0 = process.cpuUsage();
const t0 = performance.now();
await new Promise((r) => setTimeout(r, spec.durationMs));
counting = false;
const elapsed = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
windowUs.push(nowUs());
stop = true;
await Promise.all(lanes);
await close();
process.stdout.write(
  JSON.stringify({ type: "router", calls, rate: calls / (elapsed / 1000), cpuUsPerCall: (cpu.user + cpu.system) / calls, windowUs }) + "\n",
);
process.exit(0);
