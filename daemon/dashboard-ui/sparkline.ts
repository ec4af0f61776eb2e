/** Small charts of a server's calls per second over the last minutes, from the status the stream pushes. */

const SVG = "http://www.w3.org/2000/svg";
/** Points kept per server: about five minutes at the stream's one-second tick. */
const KEEP = 300;

interface Sample {
  t: number;
  requests: number;
  errors: number;
}

/** Per-server history of the counters, turned into rates. */
export class Rates {
  private readonly samples = new Map<string, Sample[]>();

  add(server: string, requests: number, errors: number): void {
    const list = this.samples.get(server) ?? [];
    list.push({ t: Date.now(), requests, errors });
    if (list.length > KEEP) list.shift();
    this.samples.set(server, list);
  }

  /** Calls per second between successive samples (a restart's counter reset counts as zero). */
  callsPerSecond(server: string): number[] {
    const list = this.samples.get(server) ?? [];
    const out: number[] = [];
    for (let i = 1; i < list.length; i++) {
      const a = list[i - 1] as Sample;
      const b = list[i] as Sample;
      const dt = (b.t - a.t) / 1000;
      out.push(dt > 0 ? Math.max(0, b.requests - a.requests) / dt : 0);
    }
    return out;
  }

  /** Errors over the samples kept. */
  recentErrors(server: string): number {
    const list = this.samples.get(server) ?? [];
    if (list.length < 2) return 0;
    return Math.max(0, (list[list.length - 1] as Sample).errors - (list[0] as Sample).errors);
  }
}

/** An SVG polyline of `values` (most recent on the right), scaled to its own maximum. */
export function sparkline(values: number[], label: string): SVGSVGElement {
  const w = 120;
  const hgt = 24;
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${w} ${hgt}`);
  svg.setAttribute("width", String(w));
  svg.setAttribute("height", String(hgt));
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", label);
  svg.classList.add("spark");
  const max = Math.max(1, ...values);
  const step = values.length > 1 ? w / (KEEP - 1) : 0;
  const start = w - step * (values.length - 1);
  const points = values.map((v, i) => `${(start + i * step).toFixed(1)},${(hgt - 1 - (v / max) * (hgt - 2)).toFixed(1)}`);
  const line = document.createElementNS(SVG, "polyline");
  line.setAttribute("points", points.join(" "));
  svg.append(line);
  return svg;
}
