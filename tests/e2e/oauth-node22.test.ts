/**
 * oauth4webapi is an ES module only; mcpd's command is a CommonJS bundle that carries it as a chunk of its
 * own. The rest of the suite runs on the machine's Node (20); here the daemon runs on Node 22 (the other
 * supported line, from tests/helpers/node22-setup.ts) and authorizes to a protected server by the client
 * credentials grant: metadata discovery, the token request and the bearer token all go through the
 * library, loaded as Node 22 loads it.
 */
import { execFileSync } from "node:child_process";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { afterEach, describe, expect, inject, it } from "vitest";
import { startTestDaemon, type TestDaemon } from "./harness.js";

const node22 = inject("node22");

let server: Server | undefined;
let daemon: TestDaemon | undefined;
afterEach(async () => {
  await daemon?.stop();
  server?.closeAllConnections();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = daemon = undefined;
});

const json = (res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void =>
  void res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(value));

/** An authorization server and an MCP server (2025 era, JSON answers) that takes only the token it issued. */
async function protectedServer(): Promise<{ url: string; tokens: () => number }> {
  let issued = 0;
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let text = "";
    req.on("data", (d: Buffer) => (text += d.toString()));
    req.on("end", () => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      const base = `http://127.0.0.1:${(server!.address() as { port: number }).port}`;
      if (path === "/.well-known/oauth-protected-resource/mcp")
        return json(res, 200, { resource: `${base}/mcp`, authorization_servers: [base] });
      if (path === "/.well-known/oauth-authorization-server")
        return json(res, 200, { issuer: base, token_endpoint: `${base}/token`, grant_types_supported: ["client_credentials"] });
      if (path === "/token") {
        const form = new URLSearchParams(text);
        const basic = Buffer.from("node22:s3cret").toString("base64");
        if (form.get("grant_type") !== "client_credentials" || req.headers.authorization !== `Basic ${basic}`)
          return json(res, 401, { error: "invalid_client" });
        issued++;
        return json(res, 200, { access_token: "at-22", token_type: "Bearer", expires_in: 3600 });
      }
      if (path !== "/mcp") return void res.writeHead(404).end();
      if (req.method !== "POST") return void res.writeHead(req.method === "DELETE" ? 200 : 405).end();
      if (req.headers.authorization !== "Bearer at-22")
        return json(
          res,
          401,
          { error: "invalid_token" },
          { "www-authenticate": `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"` },
        );
      const m = JSON.parse(text) as { id?: number; method: string; params?: { arguments?: { text?: string } } };
      if (m.id === undefined) return void res.writeHead(202).end();
      const result =
        m.method === "initialize"
          ? { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "p22", version: "1" } }
          : m.method === "tools/list"
            ? { tools: [{ name: "echo", inputSchema: { type: "object" } }] }
            : m.method === "tools/call"
              ? { content: [{ type: "text", text: `node ${m.params?.arguments?.text}` }] }
              : undefined;
      if (result) return json(res, 200, { jsonrpc: "2.0", id: m.id, result });
      json(res, 200, { jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found" } });
    });
  });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`, tokens: () => issued };
}

describe.skipIf("skip" in node22)(`OAuth in a daemon on Node 22${"skip" in node22 ? ` (skipped: ${node22.skip})` : ""}`, () => {
  const binary = "path" in node22 ? node22.path : "";

  it("authorizes by the client credentials grant through the bundled oauth4webapi, and relays calls with the token", async () => {
    expect(execFileSync(binary, ["--version"], { encoding: "utf8" }).trim()).toMatch(/^v22\./);
    const p = await protectedServer();
    const auth = { grant: "client_credentials", clientId: "node22", clientSecret: "s3cret" };
    daemon = await startTestDaemon({ p22: { type: "http", url: p.url, auth } }, { node: binary });
    const client = await daemon.raw();
    await client.initialize();
    const answer = await client.request("tools/call", { name: "p22__echo", arguments: { text: "22" } });
    expect(answer.result?.content?.[0]?.text, JSON.stringify(answer)).toBe("node 22");
    expect(p.tokens()).toBe(1);
    // The daemon that did it is the Node 22 process.
    const exe = execFileSync("readlink", [`/proc/${daemon.proc.pid}/exe`], { encoding: "utf8" }).trim();
    expect(exe).toBe(execFileSync("readlink", ["-f", binary], { encoding: "utf8" }).trim());
  });
});
