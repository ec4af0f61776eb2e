/**
 * The latency chart of docs/benchmarks.md, drawn as plain SVG text (no browser, no dependency): one line per
 * path, latency (log scale) against percentile on an HdrHistogram-style axis (0%, 90%, 99%, 99.9%) so both
 * the median and the tail are readable.
 */
const COLORS = ["#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f"];
const W = 860;
const H = 460;
const M = { left: 78, right: 24, top: 48, bottom: 96 };
const MAX_NINES = 3;

/** Percentiles to plot: q = 1 - 10^-x for x in [0, MAX_NINES]. */
export function percentilePoints(step = 0.025) {
  const qs = [];
  for (let x = 0; x <= MAX_NINES + 1e-9; x += step) qs.push(Math.min(1 - 10 ** -MAX_NINES, 1 - 10 ** -x));
  return qs;
}

// Labels are shared with the Markdown report: drop its backticks.
const esc = (s) => String(s).replace(/`/g, "").replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

function fmtUs(v) {
  if (v >= 1000) return `${+(v / 1000).toPrecision(3)} ms`;
  return `${+v.toPrecision(3)} µs`;
}

/**
 * @param series [{label, points: [[q, us]...], p50, p99}]
 * @param title chart title
 * @param subtitle small text under the title (machine, date)
 * @returns the SVG document as a string
 */
export function latencySvg(series, title, subtitle) {
  const all = series.flatMap((s) => s.points.map((p) => p[1])).filter((v) => v > 0);
  const lo = 10 ** Math.floor(Math.log10(Math.min(...all)));
  const hi = 10 ** Math.ceil(Math.log10(Math.max(...all)));
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  // The legend takes two series per row under the plot: more than six series make the picture taller.
  const height = Math.max(H, M.top + ph + 56 + (Math.ceil(series.length / 2) - 1) * 18 + 16);
  const x = (q) => M.left + (pw * -Math.log10(Math.max(1e-12, 1 - q))) / MAX_NINES;
  const y = (v) => M.top + ph - (ph * (Math.log10(v) - Math.log10(lo))) / (Math.log10(hi) - Math.log10(lo));
  const out = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${height}" viewBox="0 0 ${W} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
  );
  out.push(`<rect width="${W}" height="${height}" fill="#ffffff"/>`);
  out.push(`<text x="${M.left}" y="22" font-size="16" font-weight="bold">${esc(title)}</text>`);
  out.push(`<text x="${M.left}" y="39" fill="#555">${esc(subtitle)}</text>`);
  // Y grid: 1-2-5 per decade.
  for (let d = lo; d <= hi * 1.0001; d *= 10) {
    for (const m of [1, 2, 5]) {
      const v = d * m;
      if (v > hi * 1.0001) break;
      const yy = y(v).toFixed(1);
      out.push(`<line x1="${M.left}" x2="${M.left + pw}" y1="${yy}" y2="${yy}" stroke="${m === 1 ? "#ccc" : "#eee"}"/>`);
      out.push(`<text x="${M.left - 6}" y="${yy}" text-anchor="end" dominant-baseline="middle" fill="#333">${esc(fmtUs(v))}</text>`);
    }
  }
  // X grid: 0%, 50%, 90%, 99%, 99.9%.
  for (const [q, label] of [
    [0, "0%"],
    [0.5, "50%"],
    [0.9, "90%"],
    [0.99, "99%"],
    [0.999, "99.9%"],
  ]) {
    const xx = x(q).toFixed(1);
    out.push(`<line x1="${xx}" x2="${xx}" y1="${M.top}" y2="${M.top + ph}" stroke="#ddd"/>`);
    out.push(`<text x="${xx}" y="${M.top + ph + 16}" text-anchor="middle" fill="#333">${label}</text>`);
  }
  out.push(`<rect x="${M.left}" y="${M.top}" width="${pw}" height="${ph}" fill="none" stroke="#888"/>`);
  out.push(`<text x="${M.left + pw / 2}" y="${M.top + ph + 34}" text-anchor="middle" fill="#333">percentile of calls</text>`);
  out.push(
    `<text transform="translate(18 ${M.top + ph / 2}) rotate(-90)" text-anchor="middle" fill="#333">latency per call (log scale)</text>`,
  );
  series.forEach((s, i) => {
    const c = COLORS[i % COLORS.length];
    const d = s.points.map(([q, v], k) => `${k ? "L" : "M"}${x(q).toFixed(1)} ${y(Math.max(lo, v)).toFixed(1)}`).join(" ");
    out.push(`<path d="${d}" fill="none" stroke="${c}" stroke-width="2"/>`);
    // Legend, two columns under the axis label.
    const lx = M.left + (i % 2) * (pw / 2);
    const ly = M.top + ph + 56 + Math.floor(i / 2) * 18;
    out.push(`<line x1="${lx}" x2="${lx + 22}" y1="${ly - 4}" y2="${ly - 4}" stroke="${c}" stroke-width="3"/>`);
    out.push(`<text x="${lx + 28}" y="${ly}" fill="#222">${esc(`${s.label}: p50 ${fmtUs(s.p50)}, p99 ${fmtUs(s.p99)}`)}</text>`);
  });
  out.push("</svg>");
  return out.join("\n") + "\n";
}
