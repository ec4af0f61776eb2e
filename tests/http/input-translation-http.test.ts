/**
 * A 2025-era server's mid-call request for a 2026-era client over Streamable HTTP (issue 32, part 4): every
 * 2026 POST is a request of its own, so the `requestState` mcpd issues is bound to the bearer token, and the
 * retry (another POST) answers the server and gets the call's result. The official v2 SDK Client pinned to
 * 2026-07-28, which fulfils `input_required` through its elicitation handler.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { type TestDaemon, fixture, startTestDaemon, until } from "../e2e/harness.js";
import { type HttpFrontInfo, authHeaders, httpFront, post } from "./http-harness.js";
import { modernEnvelope } from "../helpers/modern.js";

let d: TestDaemon | undefined;
const clients: Client[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  await d?.stop();
  d = undefined;
});

const ENVELOPE = modernEnvelope({ elicitation: {} });

/** The JSON-RPC answer of a POST, whether it came as JSON or (a slow call) on an SSE stream. */
async function answerOf(res: Response): Promise<any> {
  const body = await res.text();
  if (!(res.headers.get("content-type") ?? "").includes("text/event-stream")) return JSON.parse(body);
  const data = body.split("\n").filter((l) => l.startsWith("data: "));
  return data.map((l) => JSON.parse(l.slice(6))).find((m) => m.id !== undefined && m.method === undefined);
}

const elicitCall = async (front: HttpFrontInfo, id: number, extra: Record<string, unknown> = {}) =>
  answerOf(
    await post(
      front,
      "/mcp",
      { jsonrpc: "2.0", id, method: "tools/call", params: { name: "fx__elicit", arguments: {}, ...extra, _meta: ENVELOPE } },
      { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "fx__elicit" },
    ),
  );

async function ready(): Promise<HttpFrontInfo> {
  d = await startTestDaemon({ fx: fixture("fx") });
  const front = await httpFront(d);
  const raw = await d.raw();
  await until(async () => (await raw.request("tools/list", { _meta: ENVELOPE })).result?.tools?.length > 0, "fx ready");
  raw.close();
  return front;
}

describe("a 2025 server's mid-call request for a 2026-era client over HTTP", () => {
  it("the v2 client pinned to 2026-07-28 on /mcp gets input_required, retries in another POST, and its call completes with the elicited answer", async () => {
    const front = await ready();
    const transport = new StreamableHTTPClientTransport(new URL("/mcp", front.origin), { requestInit: { headers: authHeaders(front) } });
    const client = new Client(
      { name: "modern-http-asker", version: "1.0.0" },
      { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    clients.push(client);
    await client.connect(transport);
    client.setRequestHandler("elicitation/create", async () => ({ action: "accept", content: { name: "Http" } }));
    const r: any = await client.callTool({ name: "fx__elicit", arguments: {} });
    expect(JSON.parse(r.content[0].text)).toEqual({ action: "accept", content: { name: "Http" } });
  });

  it("a requestState issued over HTTP is refused on a socket connection (bound to the token), and still completes over HTTP", async () => {
    const front = await ready();
    const first = await elicitCall(front, 1);
    const state = first.result?.requestState;
    expect(first.result?.resultType).toBe("input_required");
    const sock = await (d as TestDaemon).raw();
    const foreign = await sock.request("tools/call", {
      name: "fx__elicit",
      arguments: {},
      inputResponses: { mcpd: { action: "accept", content: { name: "x" } } },
      requestState: state,
      _meta: ENVELOPE,
    });
    sock.close();
    expect(foreign.error?.message).toMatch(/issued to another connection/);
    const done = await elicitCall(front, 2, { inputResponses: { mcpd: { action: "decline" } }, requestState: state });
    expect(JSON.parse(done.result?.content?.[0]?.text)).toEqual({ action: "decline" });
  });
});
