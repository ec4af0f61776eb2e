import type { DaemonInfo, ServerState } from "@mcpd/protocol";
import type { Router } from "../router/router.js";
import type { MCPManager } from "../supervision/manager.js";
import { LATENCY_BUCKETS_MS } from "../supervision/server-stats.js";

/** One server's figures, as `/metrics` shows them. */
export interface ServerFigures {
  name: string;
  state: ServerState;
  requests: number;
  errors: number;
  inFlight: number;
  restarts: number;
  /** Calls finished per bucket of {@link LATENCY_BUCKETS_MS} (then one past the last), not cumulative. */
  latencyBuckets: readonly number[];
  latencySumMs: number;
}

/** What `/metrics` reports, read from the running daemon when it is scraped (never on the relay path). */
export interface MetricsSnapshot {
  servers: ServerFigures[];
  /** Connected clients by face (`socket`, `http`). */
  clients: Record<string, number>;
  bufferedBytes: number;
  maxBufferedBytesTotal: number;
}

export { LATENCY_BUCKETS_MS };

/** What the dashboard's charts are drawn from, pushed while a page is open: the counters as they stand. */
export interface LiveFigures {
  /** {@link LATENCY_BUCKETS_MS}. */
  bounds: readonly number[];
  /** Per server: calls and errors so far, and calls finished per latency bucket (not cumulative across buckets). */
  servers: Array<{ name: string; requests: number; errors: number; buckets: number[] }>;
}

/** The counters of every server of `manager` now (read on the dashboard's tick, never on the relay path). */
export function liveFigures(manager: Pick<MCPManager, "servers">): LiveFigures {
  return {
    bounds: LATENCY_BUCKETS_MS,
    servers: manager.servers.map((h) => ({
      name: h.name,
      requests: h.stats.requests,
      errors: h.stats.errors,
      buckets: Array.from(h.stats.buckets),
    })),
  };
}

/** What the figures are read from (the control methods' view of the daemon has all of it). */
export interface MetricsSources {
  manager: MCPManager;
  router: Router;
  info: () => DaemonInfo;
}

/** The figures of the daemon `d` now: the same counters `mcpd status` reads. */
export function metricsSnapshot(d: MetricsSources): MetricsSnapshot {
  const info = d.info();
  const clients: Record<string, number> = { socket: 0, http: 0 };
  for (const s of d.router.sessions.values()) {
    const face = d.router.faceOf(s);
    clients[face] = (clients[face] ?? 0) + 1;
  }
  return {
    servers: d.manager.servers.map((h) => ({
      name: h.name,
      state: h.state,
      requests: h.stats.requests,
      errors: h.stats.errors,
      inFlight: h.stats.inFlight,
      restarts: h.restarts,
      latencyBuckets: Array.from(h.stats.buckets),
      latencySumMs: h.stats.latencySumMs,
    })),
    clients,
    bufferedBytes: info.bufferedBytes,
    maxBufferedBytesTotal: info.maxBufferedBytesTotal,
  };
}
