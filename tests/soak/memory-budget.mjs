#!/usr/bin/env node
/**
 * The daemon's memory under clients that hold bytes, never part of `npm test`: `node tests/soak/memory-budget.mjs`
 * (after `npx tsc -b`). Figures for docs/reliability.md ("Daemon-wide memory budget").
 *
 * Each scenario runs against a fresh daemon (default settings) and prints its resident memory: the
 * baseline (settled after a warm-up), the peak (VmHWM), and settled again once the load has ended and
 * every load connection has closed. "Settled" is the lowest RSS over six forced full collections.
 *
 * Scenarios (--scenario, default all)
 *   lines   200 connections each write an unfinished line of just under 4 MiB (the per-line limit)
 *   bytes   20 connections each write a 10,000-byte unfinished line one byte at a time (1 ms apart);
 *           prints the daemon's memory per byte held
 *   flood   60 clients that never read, while a server sends 100,000 notifications of 2 KB
 *
 * Flags: --scenario NAME, --connections N (lines, bytes, flood: 200, 20, 60), --quiet-ms N (the settle wait).
 * Exit code 0, or 1 when a scenario could not run (the daemon died: that is reported too).
 */
import { connect } from "node:net";
import { parseArgs } from "node:util";
import { LineClient } from "./line-client.mjs";
import { SoakDaemon, fixture, until } from "./soak-daemon.mjs";
import { readFileSync } from "node:fs";

const MiB = 2 ** 20;
const mib = (n) => `${(n / MiB).toFixed(0)} MiB`;
const log = (t) => process.stdout.write(`${t}\n`);

const { values: args } = parseArgs({
  options: { scenario: { type: "string", default: "all" }, connections: { type: "string" } },
  strict: true,
});

function vmHwm(pid) {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) * 1024 : NaN;
}

/** A raw connection; resolves once connected. Errors (the daemon closing it) only mark it closed. */
function rawSocket(path) {
  return new Promise((resolve, reject) => {
    const s = connect(path);
    s.closedByPeer = false;
    s.once("connect", () => resolve(s));
    s.once("error", reject);
    s.on("error", () => {});
    s.on("close", () => (s.closedByPeer = true));
    s.on("data", () => {});
  });
}

/** Writes and resolves once the data is handed to the kernel (or the socket died). */
function writeAll(s, data) {
  return new Promise((resolve) => {
    if (s.destroyed) return resolve();
    s.write(data, () => resolve());
  });
}

async function withDaemon(servers, fn) {
  const daemon = new SoakDaemon(servers);
  let checker;
  try {
    await daemon.ready();
    checker = await LineClient.open(daemon.socketPath);
    await until(async () => (await checker.call("mcpd/status")).servers.every((x) => x.state === "ready"), "servers ready", 30_000);
    for (let i = 0; i < 200; i++) await checker.call("ping");
    const base = await daemon.settledMemory();
    const out = await fn(daemon, checker);
    const quiet = await until(
      async () => ((await checker.call("mcpd/status")).daemon.connections === 1 ? true : undefined),
      "load connections gone",
      60_000,
    ).catch(() => false);
    const after = await daemon.settledMemory();
    const status = await checker.call("mcpd/status");
    return {
      base: base.rss,
      peak: vmHwm(daemon.pid),
      after: after.rss,
      heapAfter: after.heap,
      quiet,
      dropped: status.daemon.dropped,
      ...out,
    };
  } finally {
    checker?.close();
    const stopped = await daemon.stop();
    if (daemon.exited && stopped.exitCode !== 0 && stopped.exitCode !== null) log(`  (daemon exit code ${stopped.exitCode})`);
  }
}

const PREFIX = '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"';

async function lines(n = 200) {
  return withDaemon({ a: fixture("a", { healthCheckIntervalMs: 0 }) }, async (daemon) => {
    const size = 4 * MiB - 1024;
    const chunk = Buffer.from("x".repeat(64 * 1024));
    const socks = [];
    for (let i = 0; i < n; i++) socks.push(await rawSocket(daemon.socketPath));
    await Promise.all(
      socks.map(async (s) => {
        await writeAll(s, PREFIX);
        for (let sent = PREFIX.length; sent < size && !s.closedByPeer; sent += chunk.length)
          await writeAll(s, chunk.subarray(0, Math.min(chunk.length, size - sent)));
      }),
    );
    const held = vmHwm(daemon.pid);
    const open = socks.filter((s) => !s.closedByPeer).length;
    for (const s of socks) s.destroy();
    return { note: `${open} of ${n} connections still open with their line held`, heldPeak: held };
  });
}

async function bytes(n = 20, perConn = 10_000) {
  return withDaemon({ a: fixture("a", { healthCheckIntervalMs: 0 }) }, async (daemon, checker) => {
    const socks = [];
    for (let i = 0; i < n; i++) socks.push(await rawSocket(daemon.socketPath));
    for (const s of socks) s.write(PREFIX);
    const one = Buffer.from("x");
    // One byte per connection, then a pause, so that most bytes reach the daemon as reads of their own.
    for (let i = 0; i < perConn; i++) {
      for (const s of socks) s.write(one);
      await new Promise((r) => setTimeout(r, 1));
    }
    const heldBytes = n * (PREFIX.length + perConn);
    await until(() => socks.every((s) => s.writableLength === 0), "every byte written", 60_000);
    if ("bufferedBytes" in (await checker.call("mcpd/status")).daemon) {
      await until(
        async () => (await checker.call("mcpd/status")).daemon.bufferedBytes >= heldBytes || undefined,
        "every byte held",
        60_000,
      );
    } else {
      await new Promise((r) => setTimeout(r, 2_000)); // a daemon that does not report it: give it time to read
    }
    const held = await daemon.settledMemory(3, 200);
    for (const s of socks) s.destroy();
    return { heldRss: held.rss, heldBytes };
  });
}

async function flood(n = 60) {
  return withDaemon({ fl: fixture("fl", { healthCheckIntervalMs: 0 }) }, async (daemon, checker) => {
    const sleepers = [];
    for (let i = 0; i < n; i++) {
      const c = await LineClient.open(daemon.socketPath);
      await c.call("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "sleeper", version: "1" } });
      c.socket.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
      c.socket.pause();
      sleepers.push(c);
    }
    const caller = await LineClient.open(daemon.socketPath);
    await caller.call("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "caller", version: "1" } });
    await caller.call("logging/setLevel", { level: "error" });
    const t0 = Date.now();
    const r = await caller.call("tools/call", { name: "fl__flood", arguments: { count: 100_000, size: 2_000 } }, 600_000);
    const secs = (Date.now() - t0) / 1000;
    const open = (await checker.call("mcpd/status")).daemon.connections - 2;
    caller.close();
    for (const c of sleepers) c.close();
    return { note: `flood answered "${r.content?.[0]?.text}" in ${secs.toFixed(1)} s; ${open} of ${n} sleepers still connected` };
  });
}

const scenarios = { lines, bytes, flood };
const want = args.scenario === "all" ? Object.keys(scenarios) : [args.scenario];
let failed = false;
for (const name of want) {
  const fn = scenarios[name];
  if (!fn) {
    log(`unknown scenario ${name}`);
    process.exit(2);
  }
  const n = args.connections === undefined ? undefined : Number(args.connections);
  log(`${name}:`);
  try {
    const r = await fn(n);
    log(
      `  RSS baseline ${mib(r.base)}, peak ${mib(r.peak)}, after ${mib(r.after)} (V8 heap after ${mib(r.heapAfter)})${r.quiet ? "" : " [load connections still open]"}`,
    );
    if (r.heldPeak !== undefined) log(`  peak while held ${mib(r.heldPeak)}`);
    if (r.heldRss !== undefined)
      log(
        `  while held: RSS ${mib(r.heldRss)} for ${r.heldBytes.toLocaleString("en")} bytes: ${((r.heldRss - r.base) / r.heldBytes).toFixed(1)} bytes of RSS per byte held`,
      );
    if (r.note) log(`  ${r.note}`);
    log(`  dropped by the daemon: ${JSON.stringify(r.dropped ?? null)}`);
  } catch (err) {
    failed = true;
    log(`  FAILED: ${err.message}`);
  }
}
process.exit(failed ? 1 : 0);
