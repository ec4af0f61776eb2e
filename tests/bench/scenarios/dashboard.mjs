/**
 * Scenario 10: what an open dashboard costs the daemon. One client process holds 16 calls in flight on
 * the socket (path c) while the dashboard's live stream (`/dashboard/events`, logged in through
 * `mcpd dashboard --print-url` like a browser) is open and read, or closed, in alternating windows of the
 * same daemon. The figure is the daemon's CPU per relayed call (user + system time from /proc over the
 * window, divided by the calls) with the stream open / closed; and its RSS with it open.
 */
import { execFile } from "node:child_process";
import { CLIENT_WORKER, MCPD_BIN, sleep } from "../lib/env.mjs";
import { fastServer, startDaemon } from "../lib/daemon.mjs";
import { num, range, ratio, mb, us } from "../lib/format.mjs";
import { cpuMs, rssKb } from "../lib/procfs.mjs";
import { rotate, summarize } from "../lib/stats.mjs";
import { checkWorkers, startWorker } from "../lib/worker-host.mjs";
import { loadWindow } from "./throughput.mjs";

export const id = "dashboard";
export const title = "10. Dashboard: daemon CPU per relayed call with the dashboard open and streaming vs closed";
const IN_FLIGHT = 16;

/** Runs `mcpd dashboard --print-url` against `daemon`: its one-time login link. */
function loginLink(daemon) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [MCPD_BIN, "dashboard", "--print-url"], { env: { ...daemon.env, BROWSER: "" } }, (err, stdout, stderr) =>
      err ? reject(new Error(`mcpd dashboard --print-url failed: ${stderr}`, { cause: err })) : resolve(stdout.trim()),
    );
  });
}

/** Logs in with a one-time link: the session cookie (`name=value`) it sets. */
async function logIn(link) {
  const res = await fetch(link, { redirect: "manual" });
  const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0];
  if (res.status !== 303 || !cookie) throw new Error(`the dashboard login answered ${res.status}`);
  return cookie;
}

/**
 * Opens the dashboard as a page does (the page, its script and style, then its event stream) and reads
 * the stream until `close()`: counts its events and bytes. Resolves once the first `status` event came.
 */
async function openDashboard(origin, cookie) {
  for (const path of ["/", "/dashboard/app.js", "/dashboard/app.css"]) {
    const r = await fetch(`${origin}${path}`, { headers: { cookie } });
    if (r.status !== 200) throw new Error(`GET ${path} answered ${r.status}`);
    await r.arrayBuffer();
  }
  const abort = new AbortController();
  const res = await fetch(`${origin}/dashboard/events`, { headers: { cookie }, signal: abort.signal });
  if (res.status !== 200 || !res.body) throw new Error(`/dashboard/events answered ${res.status}`);
  const stream = { events: 0, bytes: 0, close: () => abort.abort() };
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let first;
  const gotFirst = new Promise((r) => (first = r));
  const read = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      stream.bytes += value.length;
      const text = decoder.decode(value, { stream: true });
      stream.events += text.split("\nevent: ").length - (text.startsWith("event: ") ? 0 : 1);
      if (text.includes("event: status")) first();
    }
  })().catch((err) => {
    if (err.name !== "AbortError") throw err;
  });
  await Promise.race([gotFirst, read.then(() => Promise.reject(new Error("the event stream ended before its first status")))]);
  stream.done = read;
  return stream;
}

/** The daemon's CPU time per second over a window of `ms` with no call made (a measurement window, not a wait). */
async function idleCpu(pid, ms) {
  const before = cpuMs(pid);
  await sleep(ms);
  return (cpuMs(pid) - before) / (ms / 1000);
}

const msPerSec = (v) => `${num(v)} ms/s`;

export async function run(ctx) {
  const { resources, quick, rounds, log } = ctx;
  const durationMs = quick ? 1_000 : 3_000;
  const windows = quick ? 2 : 4;
  const daemon = await startDaemon(resources, { fast: fastServer("fast") });
  const per = {
    closed: [],
    open: [],
    ratio: [],
    rateClosed: [],
    rateOpen: [],
    rssClosed: [],
    rssOpen: [],
    eventsPerSec: [],
    bytesPerSec: [],
    idleClosed: [],
    idleOpen: [],
  };
  let worker;
  try {
    const front = await daemon.httpFront();
    const origin = new URL(front.url).origin;
    worker = await startWorker(
      resources,
      CLIENT_WORKER,
      { path: "c", serverName: "fast", socketPath: daemon.socketPath },
      { name: "dash-c" },
    );
    await worker.request({ cmd: "warmup", calls: quick ? 2_000 : 5_000, inFlight: IN_FLIGHT }, "warmup");
    const cookie = await logIn(await loginLink(daemon));
    const idleMs = quick ? 2_000 : 5_000;
    for (let r = 0; r < rounds; r++) {
      // No calls: what the stream itself costs the daemon per second (status and figures each second).
      per.idleClosed.push(await idleCpu(daemon.pid, idleMs));
      const idleStream = await openDashboard(origin, cookie);
      per.idleOpen.push(await idleCpu(daemon.pid, idleMs));
      idleStream.close();
      await idleStream.done;
      const cpu = { closed: [], open: [] };
      for (let w = 0; w < windows; w++) {
        for (const mode of rotate(["closed", "open"], r + w)) {
          const stream = mode === "open" ? await openDashboard(origin, cookie) : undefined;
          const at = stream ? { events: stream.events, bytes: stream.bytes } : undefined;
          const res = await loadWindow([worker], { inFlight: IN_FLIGHT, durationMs, watch: { daemon: daemon.pid } });
          cpu[mode].push(res.cpuUsPerCall.daemon);
          per[mode === "open" ? "rateOpen" : "rateClosed"].push(res.rate);
          per[mode === "open" ? "rssOpen" : "rssClosed"].push(rssKb(daemon.pid) / 1024);
          if (stream) {
            const seconds = (durationMs + 300) / 1000;
            per.eventsPerSec.push((stream.events - at.events) / seconds);
            per.bytesPerSec.push((stream.bytes - at.bytes) / seconds);
            stream.close();
            await stream.done;
          }
        }
      }
      // A round's figure: the median window of each side, and the median of their window-by-window ratios.
      const m = (v) => summarize(v).median;
      per.closed.push(m(cpu.closed));
      per.open.push(m(cpu.open));
      per.ratio.push(m(cpu.open.map((v, i) => v / cpu.closed[i])));
      log(
        `  round ${r + 1}: daemon ${num(per.closed.at(-1))} µs CPU/call closed, ${num(per.open.at(-1))} µs open ` +
          `(${ratio(per.ratio.at(-1))}); RSS ${num(per.rssOpen.at(-1))} MB open; idle ${num(per.idleClosed.at(-1))} ms/s CPU closed, ` +
          `${num(per.idleOpen.at(-1))} ms/s open`,
      );
    }
    checkWorkers([worker]);
  } finally {
    await worker?.stop().catch(() => {});
    await daemon.stop();
  }
  const s = Object.fromEntries(Object.entries(per).map(([k, v]) => [k, summarize(v)]));
  return {
    id,
    title,
    description:
      `One daemon with one fast server; one client process (path c, @mcpd/client on the socket) holds ${IN_FLIGHT} calls in flight ` +
      `in windows of ${durationMs / 1000} s (after a 0.3 s warm-up each), ${windows} per round, alternating the dashboard closed and ` +
      `open. Open: logged in through \`mcpd dashboard --print-url\`, the page, its script and style fetched, and its event stream ` +
      `(\`/dashboard/events\`: status and figures each second, the log when it changes) read throughout the window. Daemon CPU per ` +
      `call: its user + system time from /proc over the window / the calls completed in it. A ratio is open / closed, paired window ` +
      `by window; a round's figure is the median window. RSS: the daemon's VmRSS at the end of each window. Idle: before each ` +
      `round's load, the daemon's CPU time per second over one window with no call, closed then open (/proc counts 10 ms ticks: ` +
      `about 2 ms/s of resolution over 5 s).`,
    tables: [
      {
        columns: ["dashboard", "daemon CPU/call", "calls/s", "daemon RSS", "idle daemon CPU", "stream"],
        rows: [
          ["closed", range(s.closed, us), range(s.rateClosed), range(s.rssClosed, mb), range(s.idleClosed, msPerSec), ""],
          [
            "open, streaming",
            range(s.open, us),
            range(s.rateOpen),
            range(s.rssOpen, mb),
            range(s.idleOpen, msPerSec),
            `${num(s.eventsPerSec.median)} events/s, ${num(s.bytesPerSec.median / 1024)} KB/s`,
          ],
        ],
      },
    ],
    headline: [
      {
        metric: "Dashboard open and streaming: daemon CPU per relayed call / closed",
        value: s.ratio,
        format: ratio,
        target: "<= 1.05x",
        pass: s.ratio.median <= 1.05,
      },
      { metric: "Daemon RSS with the dashboard open", value: s.rssOpen, format: mb },
      { metric: "Idle daemon CPU with the dashboard open and streaming (no calls)", value: s.idleOpen, format: msPerSec },
    ],
    data: s,
  };
}
