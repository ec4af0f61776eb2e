/**
 * Scenario 11: what the 2026 era costs against the 2025 era through mcpd. One daemon with the fast server
 * (a 2025-era server: the 2026 side is translated both ways); the same `tools/call` of `fast__echo` sent as a
 * 2025-era client sends it (a session: `initialize` once, then plain requests) and as a 2026-07-28 client
 * sends it (no session: every request carries its envelope in `_meta`, and over HTTP the `MCP-Protocol-Version`,
 * `Mcp-Method` and `Mcp-Name` headers), on the socket and over the HTTP front end (`/mcp`, JSON replies).
 * Sequential latency, calls per second with 64 in flight, and the daemon's CPU per call (from /proc), in
 * alternating windows of the same run. The ratios (2026 / 2025) are the figure; reported, never asserted.
 */
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { Pool } from "undici";
import { fastServer, startDaemon } from "../lib/daemon.mjs";
import { num, range, ratio, us } from "../lib/format.mjs";
import { Histogram } from "../lib/histogram.mjs";
import { cpuMs } from "../lib/procfs.mjs";
import { rotate, summarize } from "../lib/stats.mjs";

export const id = "eras";
export const title = "11. MCP 2026-07-28 against 2025-11-25 through mcpd";
const ERAS = ["2025", "2026"];
const FACES = ["socket", "socket-100k", "http"];
/** The answer size of the socket's large-answer runs (the fast server's `big` tool). */
const BIG = 100 * 1024;
const LABELS = { socket: "socket", "socket-100k": "socket, 100 KB answers (the server's view)", http: "HTTP /mcp" };
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "bench-eras", version: "1" },
};

/** A JSONL client on the daemon's socket, in one era. */
async function socketClient(socketPath, era, bigBytes) {
  const socket = connect(socketPath);
  await new Promise((res, rej) => socket.once("connect", res).once("error", rej));
  const pending = new Map();
  let buffered = "";
  let next = 1;
  socket.setEncoding("utf8");
  socket.on("data", (chunk) => {
    buffered += chunk;
    for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n")) {
      const msg = JSON.parse(buffered.slice(0, nl));
      buffered = buffered.slice(nl + 1);
      const done = pending.get(msg.id);
      if (done) {
        pending.delete(msg.id);
        done(msg);
      }
    }
  });
  const request = (method, params) =>
    new Promise((resolve) => {
      const id = next++;
      pending.set(id, resolve);
      socket.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
  // The big tool is not listed, so the aggregate view would refuse it: these runs use the server's own view.
  if (bigBytes) await request("mcpd/select", { server: "fast" });
  if (era === "2025") {
    await request("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench-eras", version: "1" } });
    socket.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
  }
  return {
    call: async (text) => {
      const params = bigBytes ? { name: "big", arguments: { bytes: bigBytes } } : { name: "fast__echo", arguments: { text } };
      if (era === "2026") params._meta = ENVELOPE;
      const r = await request("tools/call", params);
      const got = r.result?.content?.[0]?.text;
      if (r.error || (bigBytes ? !(got?.length >= bigBytes * 0.9) : got !== text))
        throw new Error(`socket ${era} call failed: ${JSON.stringify(r).slice(0, 300)}`);
    },
    close: () => socket.destroy(),
  };
}

/** A client of the HTTP front end's /mcp, in one era (JSON replies; 64 keep-alive connections). */
async function httpClient(front, era) {
  const url = new URL(front.url);
  const pool = new Pool(url.origin, { connections: 64, pipelining: 1 });
  const token = readFileSync(front.tokenFile, "utf8").trim();
  const base = { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" };
  let next = 1;
  const post = async (headers, body) => {
    const r = await pool.request({ path: url.pathname, method: "POST", headers: { ...base, ...headers }, body: JSON.stringify(body) });
    const text = await r.body.text();
    // A JSON reply, an SSE reply's one event, or nothing (202 to a notification).
    const json = text.startsWith("{") ? text : text.includes("{") ? text.slice(text.indexOf("{"), text.lastIndexOf("}") + 1) : "null";
    return { status: r.statusCode, headers: r.headers, body: JSON.parse(json) };
  };
  const headers = {};
  if (era === "2025") {
    const init = await post(
      {},
      {
        jsonrpc: "2.0",
        id: next++,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench-eras", version: "1" } },
      },
    );
    headers["mcp-session-id"] = init.headers["mcp-session-id"];
    headers["mcp-protocol-version"] = "2025-11-25";
    await post(headers, { jsonrpc: "2.0", method: "notifications/initialized" });
  } else {
    Object.assign(headers, { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "fast__echo" });
  }
  return {
    call: async (text) => {
      const params = { name: "fast__echo", arguments: { text } };
      if (era === "2026") params._meta = ENVELOPE;
      const r = await post(headers, { jsonrpc: "2.0", id: next++, method: "tools/call", params });
      if (r.status !== 200 || r.body?.result?.content?.[0]?.text !== text) {
        throw new Error(`HTTP ${era} call failed (${r.status}): ${JSON.stringify(r.body).slice(0, 300)}`);
      }
    },
    close: () => pool.close(),
  };
}

/** Sequential calls: their latency histogram. */
async function sequential(client, calls, warmup) {
  for (let i = 0; i < warmup; i++) await client.call(`w${i}`);
  const h = new Histogram();
  for (let i = 0; i < calls; i++) {
    const t = process.hrtime.bigint();
    await client.call(`s${i}`);
    h.record(Number(process.hrtime.bigint() - t) / 1000);
  }
  return h;
}

/** 64 calls in flight for `durationMs`: calls/s and the daemon's CPU per call. */
async function loaded(client, durationMs, daemonPid) {
  let calls = 0;
  const cpu0 = cpuMs(daemonPid);
  const t0 = performance.now();
  const end = t0 + durationMs;
  await Promise.all(
    Array.from({ length: 64 }, async (_, lane) => {
      while (performance.now() < end) {
        await client.call(`l${lane}`);
        calls++;
      }
    }),
  );
  const elapsed = performance.now() - t0;
  return { rate: (calls / elapsed) * 1000, cpuUsPerCall: ((cpuMs(daemonPid) - cpu0) * 1000) / calls };
}

export async function run(ctx) {
  const { resources, quick, rounds, log } = ctx;
  const calls = quick ? 300 : 1_000;
  const warmup = quick ? 100 : 300;
  const durationMs = quick ? 700 : 2_000;
  const d = await startDaemon(resources, { fast: fastServer("fast") });
  const per = {};
  for (const face of FACES) for (const era of ERAS) per[`${face}-${era}`] = { p50: [], rate: [], cpu: [] };
  const ratios = Object.fromEntries(FACES.map((f) => [f, { p50: [], rate: [], cpu: [] }]));
  try {
    const front = await d.httpFront();
    for (let r = 0; r < rounds; r++) {
      for (const face of FACES) {
        for (const era of rotate(ERAS, r)) {
          const client =
            face === "http" ? await httpClient(front, era) : await socketClient(d.socketPath, era, face === "socket-100k" ? BIG : 0);
          try {
            const h = await sequential(client, calls, warmup);
            const w = await loaded(client, durationMs, d.pid);
            const p = per[`${face}-${era}`];
            p.p50.push(h.quantile(0.5));
            p.rate.push(w.rate);
            p.cpu.push(w.cpuUsPerCall);
            log(
              `  round ${r + 1} ${face} ${era}: p50 ${num(h.quantile(0.5))} µs, 64 in flight ${num(w.rate)} calls/s, daemon CPU ${num(w.cpuUsPerCall)} µs/call`,
            );
          } finally {
            await client.close();
          }
        }
        const [old, modern] = ERAS.map((e) => per[`${face}-${e}`]);
        ratios[face].p50.push(modern.p50.at(-1) / old.p50.at(-1));
        ratios[face].rate.push(modern.rate.at(-1) / old.rate.at(-1));
        ratios[face].cpu.push(modern.cpu.at(-1) / old.cpu.at(-1));
      }
    }
  } finally {
    await d.stop();
  }
  const s = Object.fromEntries(
    Object.entries(per).map(([k, v]) => [k, Object.fromEntries(Object.entries(v).map(([m, x]) => [m, summarize(x)]))]),
  );
  const rs = Object.fromEntries(FACES.map((f) => [f, Object.fromEntries(Object.entries(ratios[f]).map(([m, x]) => [m, summarize(x)]))]));
  const rows = [];
  for (const face of FACES) {
    for (const era of ERAS) {
      const x = s[`${face}-${era}`];
      rows.push([LABELS[face], era === "2025" ? "2025-11-25" : "2026-07-28", range(x.p50, us), range(x.rate), range(x.cpu, us)]);
    }
    rows.push([LABELS[face], "2026 / 2025", range(rs[face].p50, ratio), range(rs[face].rate, ratio), range(rs[face].cpu, ratio)]);
  }
  return {
    id,
    title,
    description:
      `One daemon, the fast server (2025 era) behind it. Per face and era, one client: ${calls.toLocaleString("en-US")} sequential \`tools/call\`s ` +
      `after ${warmup} warm-up calls, then ${durationMs / 1000} s with 64 in flight; the daemon's CPU per call over that window. The eras ` +
      `alternate in order from round to round. A 2026-era request carries its envelope (protocol version, client capabilities and info) ` +
      `in every request, which mcpd reads and checks, takes out before the 2025-era server, and answers with \`resultType\`.`,
    tables: [{ columns: ["face", "era", "sequential p50", "64 in flight calls/s", "daemon CPU/call"], rows }],
    headline: FACES.flatMap((face) => [
      { metric: `2026 / 2025 era through mcpd (${LABELS[face]}): calls/s with 64 in flight`, value: rs[face].rate, format: ratio },
      { metric: `2026 / 2025 era through mcpd (${LABELS[face]}): daemon CPU per call`, value: rs[face].cpu, format: ratio },
    ]),
    data: { per: s, ratios: rs },
  };
}
