/**
 * A server replaced mid-session by a build that speaks another era: a 2026-era session whose server now
 * refuses MCP 2026-07-28 (-32022 naming 2025-11-25) is opened again, its era probed anew. The call that
 * met the refusal fails -32060 saying so and to send it again (the server did not run it); the calls
 * after it go to the new session, in the 2025 era.
 *
 * The server is written for this test: one HTTP endpoint on 127.0.0.1 that answers as a 2026-only server
 * (server/discover, tools over the 2026 envelope; `initialize` refused -32022) until it is switched, then
 * as a 2025-only one (`initialize`, tools; any 2026 request refused -32022 naming 2025-11-25).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { startTestDaemon, until, type RawClient, type TestDaemon } from "./harness.js";

let server: Server | undefined;
let daemon: TestDaemon | undefined;
let client: RawClient | undefined;

afterEach(async () => {
  client?.close();
  await daemon?.stop();
  server?.closeAllConnections();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = daemon = client = undefined;
});

type Era = "2026" | "2025";

/** The switchable server: `era` says which build answers now; `seen` lists each request's method and era. */
async function switchable(): Promise<{ url: string; set: (era: Era) => void; seen: string[] }> {
  let era: Era = "2026";
  const seen: string[] = [];
  const reply = (res: ServerResponse, status: number, body: unknown): void =>
    void res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  const refuse = (res: ServerResponse, id: unknown, supported: string): void =>
    reply(res, 400, {
      jsonrpc: "2.0",
      id,
      error: { code: -32022, message: "Unsupported protocol version", data: { supported: [supported] } },
    });
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === "DELETE") return void res.writeHead(200).end();
    if (req.method !== "POST") return void res.writeHead(405).end();
    let text = "";
    req.on("data", (d: Buffer) => (text += d.toString()));
    req.on("end", () => {
      const m = JSON.parse(text) as { id?: unknown; method: string; params?: { _meta?: Record<string, unknown> } };
      const enveloped = m.params?._meta?.["io.modelcontextprotocol/protocolVersion"] !== undefined;
      seen.push(`${era} ${m.method}${enveloped ? " (2026 envelope)" : ""}`);
      if (m.id === undefined) return void res.writeHead(202).end();
      const result = (value: unknown): void => reply(res, 200, { jsonrpc: "2.0", id: m.id, result: value });
      const tools = { tools: [{ name: "where", inputSchema: { type: "object" } }] };
      const where = { content: [{ type: "text", text: `served by the ${era} build` }] };
      if (era === "2026") {
        if (m.method === "initialize") return refuse(res, m.id, "2026-07-28");
        if (m.method === "server/discover")
          return result({
            supportedVersions: ["2026-07-28"],
            capabilities: { tools: {} },
            _meta: { "io.modelcontextprotocol/serverInfo": { name: "switchable", version: "1" } },
          });
      } else {
        if (enveloped || m.method === "server/discover") return refuse(res, m.id, "2025-11-25");
        if (m.method === "initialize")
          return result({ protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "switchable", version: "2" } });
      }
      if (m.method === "tools/list") return result(tools);
      if (m.method === "tools/call") return result(where);
      reply(res, 200, { jsonrpc: "2.0", id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } });
    });
  });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server!.address() as { port: number }).port}/mcp`;
  return { url, set: (e) => void (era = e), seen };
}

type Row = { name: string; state: string; stateReason: string | null; era?: string };

async function row(ctl: RawClient, name: string): Promise<Row> {
  return ((await ctl.request("mcpd/status")).result.servers as Row[]).find((s) => s.name === name)!;
}

describe("a server replaced by a build of another era", () => {
  it("a 2026 session refused -32022 is opened again in the era the server speaks now; the refused call says to send it again", async () => {
    const sw = await switchable();
    daemon = await startTestDaemon({ sw: { type: "http", url: sw.url, restart: { initialDelayMs: 10, maxDelayMs: 10 } } });
    const ctl = await daemon.control();
    client = await daemon.raw();
    await client.initialize();
    const call = () => client!.request("tools/call", { name: "sw__where", arguments: {} });

    expect((await call()).result?.content?.[0]?.text).toBe("served by the 2026 build");
    expect((await row(ctl, "sw")).era).toBe("2026");

    sw.set("2025");
    const refused = await call();
    expect(refused.error?.code).toBe(-32060);
    expect(refused.error?.message).toBe(
      'Server "sw" is restarting: it no longer accepts MCP 2026-07-28 (it answered -32022, supporting 2025-11-25): ' +
        "reconnecting to find the era it speaks now; send the request again",
    );

    const ready = await until(async () => {
      const r = await row(ctl, "sw");
      return r.state === "ready" ? r : undefined;
    }, "sw ready again");
    expect(ready.era).toBe("2025");
    expect((await call()).result?.content?.[0]?.text).toBe("served by the 2025 build");
    // Probed anew (server/discover refused, then initialize): never a 2026 request to the 2025 build after the first refusal.
    const after = sw.seen.slice(sw.seen.indexOf("2025 tools/call (2026 envelope)") + 1);
    expect(after.slice(0, 2)).toEqual(["2025 server/discover (2026 envelope)", "2025 initialize"]);
    expect(after.slice(2).filter((s) => s.includes("2026 envelope"))).toEqual([]);
    ctl.close();
  });
});
