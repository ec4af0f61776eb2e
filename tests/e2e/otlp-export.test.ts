/**
 * Span export over OTLP/HTTP (`mcpd.telemetry.otlp`; docs/operations.md, Tracing): one span per relayed
 * request, after the MCP semantic conventions, child of the client's `traceparent` and parent of the
 * server's (the server is sent a `traceparent` naming mcpd's span). The collector is a real OTLP/HTTP
 * receiver written here, on 127.0.0.1 port 0, that decodes each export's JSON (protobuf JSON encoding).
 */
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestDaemon, fixture, readLog, startTestDaemon } from "./harness.js";
import { waitFor } from "../helpers/process.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN = "00f067aa0ba902b7";
const TRACEPARENT = `00-${TRACE_ID}-${CLIENT_SPAN}-01`;
/** A secret of fx's config: masked in every way out of the daemon, the collector included. */
const SECRET = "sk-live-9f8e7d6c5b4a39281706";

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: OtlpValue }>;
  status?: { code?: number; message?: string };
}
interface Export {
  contentType: string | undefined;
  path: string | undefined;
  resource: Record<string, string>;
  spans: OtlpSpan[];
}

const exports: Export[] = [];
let collector: Server;
let sessionful: Server | undefined;
let d: TestDaemon;
let logFile: string;

const attrs = (list: Array<{ key: string; value: OtlpValue }>): Record<string, string> =>
  Object.fromEntries(list.map((a) => [a.key, String(a.value.stringValue ?? a.value.intValue)]));

/** The OTLP/HTTP receiver: decodes every `ExportTraceServiceRequest` POSTed to it, answers 200 with an empty response. */
function startCollector(): Promise<number> {
  collector = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        resourceSpans: Array<{ resource: { attributes: OtlpSpan["attributes"] }; scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
      };
      for (const rs of body.resourceSpans) {
        exports.push({
          contentType: req.headers["content-type"],
          path: req.url,
          resource: attrs(rs.resource.attributes),
          spans: rs.scopeSpans.flatMap((s) => s.spans),
        });
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
  });
  return new Promise((resolve) => collector.listen(0, "127.0.0.1", () => resolve((collector.address() as { port: number }).port)));
}

beforeAll(async () => {
  const port = await startCollector();
  d = await startTestDaemon(
    {},
    { settings: { telemetry: { otlp: { endpoint: `http://127.0.0.1:${port}/v1/traces`, batchDelayMs: 20 } } } },
  );
  logFile = join(d.home, "fx.log");
  d.writeConfig({ fx: fixture("fx", ["--log", logFile], { env: { API_KEY: SECRET } }) });
  const control = await d.control();
  await control.request("mcpd/reload");
  control.close();
});
afterAll(async () => {
  await d?.stop();
  await new Promise<void>((r) => (collector ? collector.close(() => r()) : r()));
  sessionful?.closeAllConnections();
  await new Promise<void>((r) => (sessionful ? sessionful.close(() => r()) : r()));
});

/** What the HTTP server saw of each `whoami` call: the session id and the JSON-RPC id it was sent with. */
const seen: Array<{ sessionId: string | undefined; requestId: string }> = [];

/**
 * A Streamable HTTP server with sessions, on the official SDK (an independent peer), on 127.0.0.1 port 0:
 * its tool `whoami` records the session and request id each call came with. Resolves with its URL.
 */
function startSessionfulServer(): Promise<string> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  sessionful = createServer((req, res) => {
    const id = req.headers["mcp-session-id"];
    let transport = typeof id === "string" ? transports.get(id) : undefined;
    if (transport === undefined) {
      const t = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => void transports.set(sid, t),
      });
      const server = new McpServer({ name: "sessionful", version: "1.0.0" });
      server.registerTool("whoami", { description: "records its session and request id" }, async (extra) => {
        seen.push({ sessionId: extra.sessionId, requestId: String(extra.requestId) });
        return { content: [{ type: "text", text: "seen" }] };
      });
      void server.connect(t);
      transport = t;
    }
    void transport.handleRequest(req, res);
  });
  const server = sessionful;
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`)),
  );
}

/** The exported span whose attributes match `match`. */
function spanWhere(match: (a: Record<string, string>) => boolean, what: string): Promise<{ span: OtlpSpan; a: Record<string, string> }> {
  return waitFor(
    () => {
      for (const e of exports)
        for (const span of e.spans) {
          const a = attrs(span.attributes);
          if (match(a)) return { span, a };
        }
      return undefined;
    },
    { message: what },
  );
}

describe("OTLP span export", () => {
  it("regression: a span carries no configured secret: its name, attributes and error message are scrubbed as the client's answer is (the server's error quoting a secret went to the collector as written)", async () => {
    const raw = await d.raw();
    try {
      await raw.initialize();
      // A tool named by the secret, sent to fx as is (per-request routing): fx's error quotes the name.
      const r = await raw.request("tools/call", { name: SECRET, arguments: {}, _meta: { "mcpd/server": "fx" } });
      expect(r.error?.message).toContain("***");
      expect(JSON.stringify(r)).not.toContain(SECRET);
      const { span, a } = await spanWhere(
        (x) => x["mcp.method.name"] === "tools/call" && x["gen_ai.tool.name"] === "***",
        "the span of the call",
      );
      expect(span.name).toBe("tools/call ***");
      expect(span.status?.message).toContain("***");
      expect(a["mcpd.server"]).toBe("fx");
      expect(JSON.stringify(exports)).not.toContain(SECRET);
    } finally {
      raw.close();
    }
  });

  it("a span names the JSON-RPC id the server was sent (jsonrpc.request.id) and the server's session (mcp.session.id) when it has one", async () => {
    const url = await startSessionfulServer();
    d.writeConfig({ fx: fixture("fx", ["--log", logFile]), http: { type: "http", url } });
    const control = await d.control();
    await control.request("mcpd/reload");
    control.close();
    const raw = await d.raw();
    try {
      await raw.initialize();
      expect((await raw.request("tools/call", { name: "http__whoami", arguments: {} })).error).toBeUndefined();
      expect((await raw.request("tools/call", { name: "fx__add", arguments: { a: 20, b: 22 } })).error).toBeUndefined();
    } finally {
      raw.close();
    }
    const call = seen.at(-1);
    expect(call?.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const http = await spanWhere((x) => x["gen_ai.tool.name"] === "whoami", "the HTTP server's call span");
    expect(http.a["mcp.session.id"]).toBe(call?.sessionId);
    expect(http.a["jsonrpc.request.id"]).toBe(call?.requestId);
    expect(http.a).toMatchObject({ "network.transport": "tcp", "mcp.protocol.version": expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) });
    // Over stdio there is no session id; the request id is the one the server received.
    const stdio = await spanWhere((x) => x["gen_ai.tool.name"] === "add", "the stdio call span");
    const received = readLog(logFile).find((m) => m.method === "tools/call" && m.params?.name === "add");
    expect(stdio.a["jsonrpc.request.id"]).toBe(String(received?.id));
    expect(stdio.a["mcp.session.id"]).toBeUndefined();
    expect(stdio.a).toMatchObject({ "network.transport": "pipe", "mcp.protocol.version": "2025-11-25" });
  });

  it("exports one span per relayed call (name, attributes, outcome), the client's span its parent and itself the server's; a reload without the setting stops it", async () => {
    const raw = await d.raw();
    await raw.initialize();
    const ok = await raw.request("tools/call", { name: "fx__echo", arguments: { text: "traced" }, _meta: { traceparent: TRACEPARENT } });
    expect(ok.error).toBeUndefined();
    const { span, a } = await spanWhere((x) => x["gen_ai.tool.name"] === "echo" && x["mcpd.outcome"] === "ok", "the echo call's span");
    expect(span.name).toBe("tools/call echo");
    expect(span.kind).toBe(3); // SPAN_KIND_CLIENT: mcpd calls the server for the client.
    expect(span.traceId).toBe(TRACE_ID);
    expect(span.parentSpanId).toBe(CLIENT_SPAN);
    expect(a).toMatchObject({ "mcp.method.name": "tools/call", "mcpd.server": "fx", "gen_ai.operation.name": "execute_tool" });
    expect(span.status?.code ?? 0).not.toBe(2);
    const e = exports.find((x) => x.spans.includes(span)) as Export;
    expect(e.resource["service.name"]).toBe("mcpd");
    expect(e.contentType).toMatch(/^application\/json/);
    expect(e.path).toBe("/v1/traces");
    // The server is sent mcpd's span as its parent, in the client's trace.
    const received = readLog(logFile).find((m) => m.method === "tools/call" && m.params?.arguments?.text === "traced");
    expect(received?.params?._meta?.traceparent).toBe(`00-${TRACE_ID}-${span.spanId}-01`);

    // Without a traceparent: a new trace, and the outcome of a call the server refused or answered as a tool error.
    const bad = await raw.request("tools/call", { name: "fx__echo", arguments: {} });
    expect(bad.error?.code).toBe(-32602);
    const failed = await spanWhere((x) => x["gen_ai.tool.name"] === "echo" && x["mcpd.outcome"] === "error", "the refused call's span");
    expect(failed.a).toMatchObject({ "error.type": "-32602", "rpc.response.status_code": "-32602" });
    expect(failed.span.status?.code).toBe(2); // STATUS_CODE_ERROR
    expect(failed.span.parentSpanId ?? "").toBe("");
    expect(failed.span.traceId).not.toBe(TRACE_ID);
    await raw.request("tools/call", { name: "fx__fail", arguments: {} });
    const tool = await spanWhere((x) => x["gen_ai.tool.name"] === "fail", "the tool error's span");
    expect(tool.a).toMatchObject({ "mcpd.outcome": "tool_error", "error.type": "tool_error" });
    expect(tool.span.name).toBe("tools/call fail");
    raw.close();

    // A reload without the setting stops the export: the client's traceparent reaches the server unchanged again.
    writeFileSync(d.configFile, JSON.stringify({ mcpServers: { fx: fixture("fx", ["--log", logFile]) } }));
    const control = await d.control();
    await control.request("mcpd/reload");
    control.close();
    const again = await d.raw();
    await again.initialize();
    const r = await again.request("tools/call", { name: "fx__echo", arguments: { text: "untraced" }, _meta: { traceparent: TRACEPARENT } });
    expect(r.error).toBeUndefined();
    const plain = await waitFor(() => readLog(logFile).find((m) => m.params?.arguments?.text === "untraced"), {
      message: "the call upstream",
    });
    expect(plain.params._meta.traceparent).toBe(TRACEPARENT);
    again.close();
  });
});
