/** Small SVG charts of a server's figures over the last minutes (see figures.ts), drawn above their figures. */
import { KEEP } from "./figures.js";

const SVG = "http://www.w3.org/2000/svg";
const W = 110;
/** Points the width holds at least: a minute of the one-second tick. */
const MIN_POINTS = 60;
const H = 24;

/**
 * A chart of one or more series (most recent on the right, a point per tick), all scaled to their common
 * maximum; a null value (no call in that window) breaks its line. Each series' polyline gets its class.
 */
export function chart(series: Array<{ values: Array<number | null>; className: string }>, label: string): SVGSVGElement {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("width", String(W));
  svg.setAttribute("height", String(H));
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", label);
  svg.classList.add("spark");
  let max = 0;
  for (const s of series) for (const v of s.values) if (v !== null && v > max) max = v;
  if (max <= 0) max = 1;
  // The first minute fills the chart's width; past it, the points kept (up to five minutes) share it.
  const longest = Math.max(...series.map((s) => s.values.length));
  const step = W / (Math.min(KEEP, Math.max(MIN_POINTS, longest)) - 1);
  for (const s of series) {
    const start = W - step * (s.values.length - 1);
    let run: string[] = [];
    const flush = (): void => {
      if (run.length === 0) return;
      const line = document.createElementNS(SVG, "polyline");
      line.setAttribute("points", run.length === 1 ? `${run[0]} ${run[0]}` : run.join(" "));
      line.classList.add(s.className);
      svg.append(line);
      run = [];
    };
    s.values.forEach((v, i) => {
      if (v === null) flush();
      else run.push(`${(start + i * step).toFixed(1)},${(H - 1 - (v / max) * (H - 2)).toFixed(1)}`);
    });
    flush();
  }
  return svg;
}

/** A chart of one series. */
export function sparkline(values: number[], label: string, className = "calls"): SVGSVGElement {
  return chart([{ values, className }], label);
}
