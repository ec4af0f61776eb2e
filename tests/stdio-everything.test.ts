/**
 * StdioTransport against a real, independent MCP server: @modelcontextprotocol/server-everything in
 * stdio mode, spawned as `node <its dist/index.js> stdio`.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { CallToolResult, InitializeResult, JsonObject, JsonRpcRequest, Tool } from "@mcpd/protocol";
import { StdioTransport } from "@mcpd/transports";
import { isAlive, waitFor } from "./helpers/process.js";

/** The package's own entry file, read from its package.json `bin` (it has no `main`/`exports`). */
function everythingEntry(): string {
  const require = createRequire(import.meta.url);
  const pkgJson = require.resolve("@modelcontextprotocol/server-everything/package.json");
  const pkg = JSON.parse(readFileSync(pkgJson, "utf8")) as { bin: Record<string, string> | string };
  const bin = typeof pkg.bin === "string" ? pkg.bin : Object.values(pkg.bin)[0];
  const entry = join(dirname(pkgJson), bin as string);
  if (!existsSync(entry)) throw new Error(`server-everything entry not found at ${entry}`);
  return entry;
}

const transports: StdioTransport[] = [];
afterEach(async () => {
  for (const t of transports.splice(0)) {
    await t.close();
    expect(isAlive(t.pid)).toBe(false);
  }
});

describe("StdioTransport with @modelcontextprotocol/server-everything (stdio)", () => {
  it("initializes, lists tools, calls echo, and relays progress and roots/list", async () => {
    const t = new StdioTransport({ command: process.execPath, args: [everythingEntry(), "stdio"] });
    transports.push(t);
    const notifications: Array<[string, JsonObject | undefined]> = [];
    const serverRequests: JsonRpcRequest[] = [];
    t.onNotification = (method, params) => notifications.push([method, params]);
    t.onRequest = async (request) => {
      serverRequests.push(request);
      if (request.method === "roots/list") return { roots: [{ uri: "file:///tmp/mcpd-everything", name: "everything" }] };
      return {};
    };
    await t.connect();

    const init = await t.request<InitializeResult>("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: { roots: { listChanged: true } },
      clientInfo: { name: "mcpd-stdio-test", version: "0.0.0" },
    });
    expect(init.protocolVersion).toBe("2025-11-25");
    expect(init.serverInfo.name).toContain("everything");
    expect(init.capabilities.tools).toBeDefined();
    await t.notify("notifications/initialized");

    const { tools } = await t.request<{ tools: Tool[] }>("tools/list");
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(byName.has("echo")).toBe(true);
    expect(byName.has("trigger-long-running-operation")).toBe(true);
    expect(Object.keys((byName.get("echo")?.inputSchema.properties ?? {}) as JsonObject)).toEqual(["message"]);

    const echo = await t.request<CallToolResult>("tools/call", { name: "echo", arguments: { message: "hello from mcpd" } });
    expect(echo.content[0]).toEqual({ type: "text", text: "Echo: hello from mcpd" });

    const long = await t.request<CallToolResult>("tools/call", {
      name: "trigger-long-running-operation",
      arguments: { duration: 0.3, steps: 3 },
      _meta: { progressToken: "progress-1" },
    });
    expect(String(long.content[0]?.text)).toContain("Long running operation completed");
    const progress = notifications.filter(([method]) => method === "notifications/progress").map(([, params]) => params);
    expect(progress).toEqual([
      { progress: 1, total: 3, progressToken: "progress-1" },
      { progress: 2, total: 3, progressToken: "progress-1" },
      { progress: 3, total: 3, progressToken: "progress-1" },
    ]);

    // Server-to-client: the roots tool exists because roots were declared; its roots/list reaches onRequest.
    await waitFor(async () => (await t.request<{ tools: Tool[] }>("tools/list")).tools.some((tool) => tool.name === "get-roots-list"), {
      message: "get-roots-list registered",
    });
    const roots = await t.request<CallToolResult>("tools/call", { name: "get-roots-list", arguments: {} });
    expect(JSON.stringify(roots.content)).toContain("file:///tmp/mcpd-everything");
    await waitFor(() => serverRequests.some((r) => r.method === "roots/list"), { message: "roots/list from the server" });
    expect(t.info().droppedMessages).toBe(0);
  });
});
