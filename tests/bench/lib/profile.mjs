/**
 * Summarises a V8 .cpuprofile (written by `node --cpu-prof`): self and total time per function, so the
 * report can name the hottest paths without a browser.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { ROOT } from "./env.mjs";

/** The newest .cpuprofile in `dir`. */
export function newestProfile(dir) {
  const files = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile")).sort();
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
 * @returns {totalMs, top: [{name, where, selfMs, selfPct}], topTotal: [{name, where, totalMs, totalPct}], byFile: [{file, selfMs, selfPct}]}
 * `top` ranks functions by self time; `topTotal` ranks our own (repository, non-node_modules) functions by
 * inclusive time; `byFile` sums self time per source file (node internals and GC grouped by name).
 */
export function summarizeProfile(file, limit = 15) {
  const prof = JSON.parse(readFileSync(file, "utf8"));
  const nodes = new Map(prof.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const dt = prof.timeDeltas;
  for (let i = 0; i < prof.samples.length; i++) {
    // Each delta is the time before sample i; attribute the next delta to it (V8's convention).
    const d = (dt[i + 1] ?? dt[i] ?? 0) / 1000;
    self.set(prof.samples[i], (self.get(prof.samples[i]) ?? 0) + d);
  }
  const parent = new Map();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const key = (n) => `${n.callFrame.functionName || "(anonymous)"} ${where(n.callFrame)}`;
  const selfBy = new Map();
  const totalBy = new Map();
  const fileBy = new Map();
  for (const [id, ms] of self) {
    const n = nodes.get(id);
    const k = key(n);
    selfBy.set(k, (selfBy.get(k) ?? 0) + ms);
    const w = where(n.callFrame);
    const f = w === "(native)" ? n.callFrame.functionName || "(native)" : w.replace(/:\d+$/, "");
    fileBy.set(f, (fileBy.get(f) ?? 0) + ms);
    // Inclusive time: each distinct function on the stack once.
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const kk = key(nodes.get(cur));
      if (seen.has(kk)) continue;
      seen.add(kk);
      totalBy.set(kk, (totalBy.get(kk) ?? 0) + ms);
    }
  }
  const split = (k) => {
    const i = k.lastIndexOf(" ");
    return { name: k.slice(0, i), where: k.slice(i + 1) };
  };
  const pct = (ms) => (total ? (100 * ms) / total : 0);
  const ours = (k) => !k.includes("node_modules") && /(protocol|transports|daemon|client-sdk)\/dist\//.test(k);
  return {
    file,
    totalMs: total,
    top: [...selfBy].sort((a, b) => b[1] - a[1]).slice(0, limit).map(([k, ms]) => ({ ...split(k), selfMs: ms, selfPct: pct(ms) })),
    topTotal: [...totalBy].filter(([k]) => ours(k)).sort((a, b) => b[1] - a[1]).slice(0, limit).map(([k, ms]) => ({ ...split(k), totalMs: ms, totalPct: pct(ms) })),
    byFile: [...fileBy].sort((a, b) => b[1] - a[1]).slice(0, limit).map(([f, ms]) => ({ file: f, selfMs: ms, selfPct: pct(ms) })),
  };
}
