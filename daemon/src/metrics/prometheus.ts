import { SERVER_STATES } from "@mcpd/protocol";
import type { Registry } from "prom-client";
import { LATENCY_BUCKETS_MS, type MetricsSnapshot } from "./metrics-snapshot.js";

/** A page of `/metrics`: its content type and text. */
export interface MetricsPage {
  contentType: string;
  body: string;
}

type PromClient = typeof import("prom-client");

/**
 * The daemon's metrics in the Prometheus text format, with prom-client: per-server calls, errors, a
 * latency histogram, restarts, state and calls in flight; connected clients per face; bytes held for
 * clients against the budget; and prom-client's process metrics (CPU, memory, descriptors, event loop
 * lag). Every figure is read from `snapshot()` when scraped, so the relay path only ever bumps plain
 * counters. prom-client is loaded on the first scrape: a daemon nobody scrapes never loads it.
 */
export class PrometheusMetrics {
  private registry: Promise<Registry> | undefined;
  private current: MetricsSnapshot | undefined;

  constructor(private readonly snapshot: () => MetricsSnapshot) {}

  /** The page as it stands now. */
  async render(): Promise<MetricsPage> {
    this.registry ??= import("prom-client").then((client) => this.build(client));
    const registry = await this.registry;
    this.current = this.snapshot();
    try {
      return { contentType: registry.contentType, body: await registry.metrics() };
    } finally {
      this.current = undefined;
    }
  }

  private build(client: PromClient): Registry {
    const registry = new client.Registry();
    client.collectDefaultMetrics({ register: registry, prefix: "mcpd_" });
    const now = (): MetricsSnapshot => this.current ?? this.snapshot();
    const perServer = (
      name: string,
      help: string,
      kind: "counter" | "gauge",
      pick: (s: MetricsSnapshot["servers"][number]) => number,
    ): void => {
      const Metric = kind === "counter" ? client.Counter : client.Gauge;
      new Metric({
        name,
        help,
        labelNames: ["server"],
        registers: [registry],
        collect(this: { reset(): void; inc(labels: Record<string, string>, n: number): void }) {
          this.reset();
          for (const s of now().servers) this.inc({ server: s.name }, pick(s));
        },
      });
    };
    perServer("mcpd_server_requests_total", "Requests relayed to the server (every call, list and read).", "counter", (s) => s.requests);
    perServer("mcpd_server_errors_total", "Requests to the server that ended in an error.", "counter", (s) => s.errors);
    perServer("mcpd_server_restarts_total", "Times the server was restarted after it failed.", "counter", (s) => s.restarts);
    perServer("mcpd_server_in_flight", "Requests to the server waiting for its answer now.", "gauge", (s) => s.inFlight);
    new client.Gauge({
      name: "mcpd_server_state",
      help: "The server's state: 1 for the state it is in, 0 for the others.",
      labelNames: ["server", "state"],
      registers: [registry],
      collect() {
        this.reset();
        for (const s of now().servers) for (const state of SERVER_STATES) this.set({ server: s.name, state }, s.state === state ? 1 : 0);
      },
    });
    registry.registerMetric(latencyHistogram(now) as unknown as Parameters<Registry["registerMetric"]>[0]);
    new client.Gauge({
      name: "mcpd_clients",
      help: "Client connections open now, by face (socket: the Unix socket and mcpd connect; http; sse: legacy HTTP+SSE).",
      labelNames: ["face"],
      registers: [registry],
      collect() {
        this.reset();
        for (const [face, n] of Object.entries(now().clients)) this.set({ face }, n);
      },
    });
    new client.Gauge({
      name: "mcpd_buffered_bytes",
      help: "Bytes held for clients by both faces (unfinished lines, unread output, request bodies, kept SSE events).",
      registers: [registry],
      collect() {
        this.set(now().bufferedBytes);
      },
    });
    new client.Gauge({
      name: "mcpd_buffered_bytes_budget",
      help: "The daemon-wide budget for mcpd_buffered_bytes (mcpd.maxBufferedBytesTotal).",
      registers: [registry],
      collect() {
        this.set(now().maxBufferedBytesTotal);
      },
    });
    return registry;
  }
}

/**
 * `mcpd_server_request_duration_seconds`, a histogram per server built from the servers' own fixed
 * buckets (prom-client's Histogram counts observations itself; these were counted on the relay path).
 */
function latencyHistogram(now: () => MetricsSnapshot) {
  const name = "mcpd_server_request_duration_seconds";
  return {
    name,
    help: "Time from a request's relay to the server's answer, per server.",
    type: "histogram",
    aggregator: "sum",
    reset() {},
    async get() {
      const values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = [];
      for (const s of now().servers) {
        let cumulative = 0;
        LATENCY_BUCKETS_MS.forEach((ms, i) => {
          cumulative += s.latencyBuckets[i] ?? 0;
          values.push({ labels: { le: ms / 1000, server: s.name }, value: cumulative, metricName: `${name}_bucket` });
        });
        cumulative += s.latencyBuckets[LATENCY_BUCKETS_MS.length] ?? 0;
        values.push({ labels: { le: "+Inf", server: s.name }, value: cumulative, metricName: `${name}_bucket` });
        values.push({ labels: { server: s.name }, value: s.latencySumMs / 1000, metricName: `${name}_sum` });
        values.push({ labels: { server: s.name }, value: cumulative, metricName: `${name}_count` });
      }
      return { name, help: this.help, type: "histogram", aggregator: "sum", values };
    },
  };
}
