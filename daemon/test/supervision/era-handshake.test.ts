/**
 * The era probe's verdicts on answers that are not a discover result, with real transports: a stdio server
 * that never answers a request before `initialize` speaks 2025; over HTTP a 400 with no 2026 error in its
 * body means 2025, while 401 and 5xx prove nothing (the start fails, no `initialize` is sent). The probe's
 * POST carries the 2026 headers and no session id.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { HttpError } from "@mcpd/protocol";
import { createTransport } from "@mcpd/transports";
import { UpstreamClient } from "../../src/supervision/upstream-client.js";

const EXITS = resolve(import.meta.dirname, "../../../tests/fixtures/servers/exit-before-initialize.mjs");

const clients: UpstreamClient[] = [];
const servers: Server[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  for (const s of servers.splice(0)) await new Promise((done) => s.close(done));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

interface Seen {
  method: string;
  headers: IncomingHttpHeaders;
}

/** A scripted HTTP server: `discover` answers the probe (status and body); the 2025 methods get 2025 answers. */
async function scripted(discover: { status: number; body: string }): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer(async (req, res) => {
    let text = "";
    for await (const chunk of req) text += chunk;
    const message = JSON.parse(text);
    seen.push({ method: message.method, headers: req.headers });
    if (message.method === "server/discover") {
      res.writeHead(discover.status, { "content-type": "text/plain" }).end(discover.body);
    } else if (message.method === "initialize") {
      const result = { protocolVersion: "2025-11-25", capabilities: {}, serverInfo: { name: "scripted", version: "1" } };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }));
    } else {
      res.writeHead(202).end();
    }
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/mcp`, seen };
}

function httpClient(url: string): UpstreamClient {
  const c = new UpstreamClient(createTransport({ type: "http", url }), { initializeTimeoutMs: 10_000 });
  clients.push(c);
  return c;
}

const PROBE = { era: undefined, forced: false } as const;

describe("era probe verdicts", () => {
  it("a stdio server that never answers a request before initialize is spoken to in the 2025 era after the bounded wait", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcpd-era-"));
    dirs.push(dir);
    const log = join(dir, "received.log");
    const c = new UpstreamClient(createTransport({ command: process.execPath, args: [EXITS, "--ignore", "--log", log] }), {
      initializeTimeoutMs: 1_000,
    });
    clients.push(c);
    await c.connect(PROBE);
    expect(c.era).toBe("2025");
    expect(c.serverInfo?.name).toBe("exit-before-initialize");
    const methods = readFileSync(log, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => l.split(" ")[1]);
    // The probe given up is cancelled, as any request that timed out.
    expect(methods.slice(0, 3)).toEqual(["server/discover", "notifications/cancelled", "initialize"]);
  });

  it("over HTTP, a 400 without a 2026 error in its body means 2025; the probe carried MCP-Protocol-Version, Mcp-Method and no session id", async () => {
    const { url, seen } = await scripted({ status: 400, body: "Bad Request: No valid session ID provided" });
    const c = httpClient(url);
    await c.connect(PROBE);
    expect(c.era).toBe("2025");
    expect(seen.map((s) => s.method).slice(0, 2)).toEqual(["server/discover", "initialize"]);
    expect(seen[0]?.headers).toMatchObject({ "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover" });
    expect(seen[0]?.headers).not.toHaveProperty("mcp-session-id");
    expect(seen[1]?.headers).not.toHaveProperty("mcp-method");
  });

  it.each([401, 403, 503])(
    "over HTTP, a %i to the probe proves nothing: the start fails with it and no initialize is sent",
    async (status) => {
      const { url, seen } = await scripted({ status, body: "no" });
      const c = httpClient(url);
      const err = await c.connect(PROBE).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(HttpError);
      expect((err as HttpError).status).toBe(status);
      expect(seen.map((s) => s.method)).toEqual(["server/discover"]);
    },
  );
});
