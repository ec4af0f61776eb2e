/**
 * Per-server history of the counters the `figures` event pushes (calls, errors and calls per latency
 * bucket, all cumulative since the daemon started), turned into what the charts draw: calls and errors
 * per second, and p50/p95/p99 from the buckets' differences over a short sliding window. The daemon only
 * counts; every rate and percentile is worked out here, in the page.
 */
import { bucketDelta, percentiles, type Percentiles } from "../src/metrics/bucket-quantile.js";

/** The `figures` event (daemon/src/metrics/metrics-snapshot.ts `LiveFigures`). */
export interface FiguresEvent {
  bounds: number[];
  servers: Array<{ name: string; requests: number; errors: number; buckets: number[] }>;
}

/** Points kept per server: about five minutes at the stream's one-second tick. */
export const KEEP = 300;
/** Each point's percentiles count the calls of this many preceding points (about ten seconds). */
const SPAN = 10;

interface Point {
  t: number;
  requests: number;
  errors: number;
  buckets: number[];
  /** Calls and errors since the point before (a reset of the counters counts from zero). */
  calls: number;
  failed: number;
  callsPerSecond: number;
  errorsPerSecond: number;
  /** Over the calls of the last {@link SPAN} points. */
  latency: Percentiles;
}

/** What a server's charts show. */
export interface ServerFigures {
  /** Calls and errors over the points kept (since the page opened, at most the last five minutes). */
  calls: number;
  errors: number;
  callsPerSecond: number[];
  errorsPerSecond: number[];
  p50: Array<number | null>;
  p95: Array<number | null>;
  p99: Array<number | null>;
  /** p50/p95/p99 over every call of the points kept. */
  latency: Percentiles;
}

const grown = (a: number, b: number): number => (b >= a ? b - a : b);

export class FigureHistory {
  private bounds: number[] = [];
  private readonly points = new Map<string, Point[]>();

  add(ev: FiguresEvent, t = Date.now()): void {
    this.bounds = ev.bounds;
    const seen = new Set<string>();
    for (const s of ev.servers) {
      seen.add(s.name);
      const list = this.points.get(s.name) ?? [];
      const prev = list[list.length - 1];
      const dt = prev ? Math.max(0.001, (t - prev.t) / 1000) : 1;
      const calls = prev ? grown(prev.requests, s.requests) : 0;
      const failed = prev ? grown(prev.errors, s.errors) : 0;
      const from = list[Math.max(0, list.length - SPAN)];
      const latency = percentiles(this.bounds, from ? bucketDelta(from.buckets, s.buckets) : []);
      list.push({ t, ...s, calls, failed, callsPerSecond: calls / dt, errorsPerSecond: failed / dt, latency });
      if (list.length > KEEP) list.shift();
      this.points.set(s.name, list);
    }
    for (const name of [...this.points.keys()]) if (!seen.has(name)) this.points.delete(name);
  }

  of(server: string): ServerFigures | undefined {
    const list = this.points.get(server);
    if (list === undefined || list.length === 0) return undefined;
    const rest = list.slice(1);
    const first = list[0] as Point;
    const last = list[list.length - 1] as Point;
    return {
      calls: rest.reduce((n, p) => n + p.calls, 0),
      errors: rest.reduce((n, p) => n + p.failed, 0),
      callsPerSecond: rest.map((p) => p.callsPerSecond),
      errorsPerSecond: rest.map((p) => p.errorsPerSecond),
      p50: rest.map((p) => p.latency.p50),
      p95: rest.map((p) => p.latency.p95),
      p99: rest.map((p) => p.latency.p99),
      latency: percentiles(this.bounds, bucketDelta(first.buckets, last.buckets)),
    };
  }
}
