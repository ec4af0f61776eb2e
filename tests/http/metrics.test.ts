/**
 * `/metrics` on the HTTP front end: the daemon's figures in the Prometheus text format (prom-client),
 * read by an independent parser of that format, match what `mcpd status` says; the main token opens it, a
 * scoped token and no token do not.
 */
import { McpdHttpTokenIssue } from "@mcpd/protocol";
import { connect } from "node:net";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RawClient, type TestDaemon, fixture, startTestDaemon } from "../e2e/harness.js";
import { waitFor } from "../helpers/process.js";
import { type HttpFrontInfo, authHeaders, httpFront, sdkClient } from "./http-harness.js";

interface Family {
  name: string;
  type: string;
  metrics: Array<{ labels?: Record<string, string>; value?: string; buckets?: Record<string, string>; count?: string; sum?: string }>;
}

let d: TestDaemon;
let front: HttpFrontInfo;
let control: RawClient;

beforeAll(async () => {
  d = await startTestDaemon({ fx: fixture("fx"), other: fixture("other"), dies: fixture("dies", ["--exit-at-start", "7"]) });
  front = await httpFront(d);
  control = await d.control();
});
afterAll(async () => {
  control?.close();
  await d?.stop();
});

async function scrape(
  headers: Record<string, string> = authHeaders(front),
): Promise<{ status: number; type: string | null; text: string; families: Map<string, Family> }> {
  const r = await fetch(new URL("/metrics", front.origin), { headers });
  const text = await r.text();
  const families = new Map<string, Family>();
  if (r.status === 200) for (const f of parsePrometheusTextFormat(text) as Family[]) families.set(f.name, f);
  return { status: r.status, type: r.headers.get("content-type"), text, families };
}

/**
 * One server's series of histogram `name`, parsed: the parser keeps one histogram per family and no labels
 * but `le` (it follows an old reference parser), so the server's lines are given to it alone, without the
 * server label.
 */
function histogramOf(text: string, name: string, server: string): Family["metrics"][number] | undefined {
  const label = `server="${server}"`;
  const lines = text
    .split("\n")
    .filter((l) => l.startsWith(`# HELP ${name} `) || l.startsWith(`# TYPE ${name} `) || (l.startsWith(name) && l.includes(label)))
    .map((l) => l.replace(`,${label}`, "").replace(`${label},`, "").replace(`{${label}}`, ""));
  const [family] = parsePrometheusTextFormat(`${lines.join("\n")}\n`) as Family[];
  return family?.metrics[0];
}

const sampleOf = (f: Family | undefined, labels: Record<string, string>): number | undefined => {
  const m = f?.metrics.find((x) => Object.entries(labels).every(([k, v]) => x.labels?.[k] === v));
  return m?.value === undefined ? undefined : Number(m.value);
};

describe("/metrics", () => {
  it("reports per-server calls, errors, latency, restarts, state and clients per face, as mcpd status does", async () => {
    const { client } = await sdkClient(front, "streamable", "/mcp");
    try {
      for (let i = 0; i < 3; i++) await client.callTool({ name: "fx__echo", arguments: { text: `m${i}` } });
      await client.callTool({ name: "other__fail", arguments: {} }).catch(() => undefined);
      await waitFor(async () => (await control.request("mcpd/status")).result?.servers.find((s: any) => s.name === "dies")?.restarts > 0, {
        timeoutMs: 30_000,
        message: "the failing server to be restarted",
      });
      const { status, type, text, families } = await scrape();
      const st = (await control.request("mcpd/status")).result;
      expect(status).toBe(200);
      expect(type).toMatch(/^text\/plain; version=0\.0\.4/);
      for (const s of st.servers) {
        expect(sampleOf(families.get("mcpd_server_requests_total"), { server: s.name })).toBe(s.requests);
        expect(sampleOf(families.get("mcpd_server_errors_total"), { server: s.name })).toBe(s.errors);
        expect(sampleOf(families.get("mcpd_server_in_flight"), { server: s.name })).toBe(s.inFlight);
        expect(sampleOf(families.get("mcpd_server_state"), { server: s.name, state: s.state })).toBe(1);
        expect(families.get("mcpd_server_state")?.metrics.filter((m) => m.labels?.server === s.name && m.value === "1")).toHaveLength(1);
      }
      const fx = st.servers.find((s: any) => s.name === "fx");
      expect(fx.requests).toBeGreaterThanOrEqual(3);
      const dies = st.servers.find((s: any) => s.name === "dies");
      expect(sampleOf(families.get("mcpd_server_restarts_total"), { server: "dies" })).toBeGreaterThanOrEqual(1);
      expect(sampleOf(families.get("mcpd_server_restarts_total"), { server: "dies" })).toBeLessThanOrEqual(dies.restarts);
      expect(families.get("mcpd_server_request_duration_seconds")?.type).toBe("HISTOGRAM");
      const fxHist = histogramOf(text, "mcpd_server_request_duration_seconds", "fx");
      expect(Number(fxHist?.count)).toBe(fx.requests - fx.inFlight);
      expect(Number(fxHist?.buckets?.["+Inf"])).toBe(Number(fxHist?.count));
      const httpClients = st.clients.filter((c: any) => c.face === "http").length;
      expect(httpClients).toBeGreaterThanOrEqual(1);
      expect(sampleOf(families.get("mcpd_clients"), { face: "http" })).toBe(httpClients);
      // mcpd status leaves out the connection asking it (this test's control connection); /metrics counts it.
      expect(sampleOf(families.get("mcpd_clients"), { face: "socket" })).toBe(
        st.clients.filter((c: any) => c.face === "socket").length + 1,
      );
      expect(sampleOf(families.get("mcpd_buffered_bytes_budget"), {})).toBe(st.daemon.maxBufferedBytesTotal);
      expect(sampleOf(families.get("mcpd_buffered_bytes"), {})).toBe(st.daemon.bufferedBytes);
      expect(sampleOf(families.get("mcpd_process_resident_memory_bytes"), {})).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });

  it("reports the bytes held for clients as mcpd status does, while a request body is still arriving", async () => {
    const { port } = new URL(front.origin);
    const sock = connect(Number(port), "127.0.0.1");
    try {
      await new Promise<void>((r) => sock.once("connect", () => r()));
      const part = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${"x".repeat(20_000)}`;
      sock.write(
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${front.token}\r\n` +
          `Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n${part}`,
      );
      const held = await waitFor(
        async () => {
          const n = (await control.request("mcpd/status")).result.daemon.bufferedBytes as number;
          return n >= 20_000 ? n : undefined;
        },
        { message: "the body's bytes to be held" },
      );
      const { families } = await scrape();
      expect(sampleOf(families.get("mcpd_buffered_bytes"), {})).toBe(held);
      expect(held).toBeLessThanOrEqual(sampleOf(families.get("mcpd_buffered_bytes_budget"), {}) as number);
    } finally {
      sock.destroy();
    }
  });

  it("opens only with the main token: no token gets 401, a scoped one 403", async () => {
    expect((await scrape({})).status).toBe(401);
    const issued = (await control.request(McpdHttpTokenIssue.method, { server: "fx" })).result;
    const scoped = await scrape({ authorization: `Bearer ${issued.token}` });
    expect(scoped.status).toBe(403);
    const post = await fetch(new URL("/metrics", front.origin), { method: "POST", headers: authHeaders(front) });
    expect(post.status).toBe(405);
  });
});
