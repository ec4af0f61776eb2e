/**
 * Summarises a V8 .cpuprofile (written by `node --cpu-prof`): self and total time per function, so the
 * report can name the hottest paths without a browser.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { ROOT } from "./env.mjs";

/** The newest .cpuprofile in `dir`. */
export function newestProfile(dir) {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".cpuprofile"))
    .sort();
  if (files.length === 0) throw new Error(`no .cpuprofile was written in ${dir}`);
  return join(dir, files[files.length - 1]);
}

function where(cf) {
  let url = cf.url || "";
  if (url.startsWith("file://")) url = relative(ROOT, decodeURIComponent(new URL(url).pathname));
  const line = cf.lineNumber >= 0 ? `:${cf.lineNumber + 1}` : "";
  return url ? `${url}${line}` : "(native)";
}

/**
 * @param window optional [startUs, endUs] on the profiler's clock (process.hrtime in µs): only samples
 * inside it count, so start-up and shutdown do not dilute the steady state.
 * @returns {totalMs, idleMs, top: [{name, where, selfMs, selfPct}], topTotal: [{name, where, totalMs, totalPct}],
 * topOwn: [{name, where, ownMs, ownPct}], byFile: [{file, selfMs, selfPct}]}. Percentages are of the busy
 * (non-idle) time. `top` ranks functions by self time; `topOwn` charges each sample to the nearest mcpd
 * function on its stack (native writes, GC and library code included); `topTotal` ranks mcpd's own functions (its packages' dist/) by inclusive time; `byFile` sums self
 * time per source file (node internals and GC grouped by name).
 */
export function summarizeProfile(file, limit = 15, window = undefined) {
  const prof = JSON.parse(readFileSync(file, "utf8"));
  const nodes = new Map(prof.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const dt = prof.timeDeltas;
  let t = prof.startTime;
  let idle = 0;
  for (let i = 0; i < prof.samples.length; i++) {
    t += dt[i] ?? 0;
    if (window && (t < window[0] || t > window[1])) continue;
    // Each delta is the time before sample i; attribute the next delta to it (V8's convention).
    const d = (dt[i + 1] ?? dt[i] ?? 0) / 1000;
    const id = prof.samples[i];
    if (nodes.get(id).callFrame.functionName === "(idle)") {
      idle += d;
      continue;
    }
    self.set(id, (self.get(id) ?? 0) + d);
  }
  const parent = new Map();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const key = (n) => `${n.callFrame.functionName || "(anonymous)"} ${where(n.callFrame)}`;
  const ours = (k) => !k.includes("node_modules") && /(protocol|transports|daemon|client-sdk)\/dist\//.test(k);
  const selfBy = new Map();
  const totalBy = new Map();
  const fileBy = new Map();
  const ownBy = new Map();
  for (const [id, ms] of self) {
    const n = nodes.get(id);
    const k = key(n);
    selfBy.set(k, (selfBy.get(k) ?? 0) + ms);
    const w = where(n.callFrame);
    const f = w === "(native)" ? n.callFrame.functionName || "(native)" : w.replace(/:\d+$/, "");
    fileBy.set(f, (fileBy.get(f) ?? 0) + ms);
    // Nearest own frame: the sample's time goes to the closest mcpd function on the stack, so a native
    // write or a GC pause is charged to the mcpd code that caused it.
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const kk = key(nodes.get(cur));
      if (ours(kk)) {
        ownBy.set(kk, (ownBy.get(kk) ?? 0) + ms);
        break;
      }
    }
    // Inclusive time: each distinct function on the stack once.
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const kk = key(nodes.get(cur));
      if (seen.has(kk)) continue;
      seen.add(kk);
      totalBy.set(kk, (totalBy.get(kk) ?? 0) + ms);
    }
  }
  const splitKey = (k) => {
    const i = k.lastIndexOf(" ");
    return { name: k.slice(0, i), where: k.slice(i + 1) };
  };
  const pct = (ms) => (total ? (100 * ms) / total : 0);
  return {
    file,
    totalMs: total,
    idleMs: idle,
    top: [...selfBy]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([k, ms]) => ({ ...splitKey(k), selfMs: ms, selfPct: pct(ms) })),
    topOwn: [...ownBy]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([k, ms]) => ({ ...splitKey(k), ownMs: ms, ownPct: pct(ms) })),
    topTotal: [...totalBy]
      .filter(([k]) => ours(k))
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([k, ms]) => ({ ...splitKey(k), totalMs: ms, totalPct: pct(ms) })),
    byFile: [...fileBy]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([f, ms]) => ({ file: f, selfMs: ms, selfPct: pct(ms) })),
  };
}
