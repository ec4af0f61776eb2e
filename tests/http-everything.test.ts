/**
 * HttpTransport against a real, independent MCP server: @modelcontextprotocol/server-everything in its
 * `streamableHttp` (POST/GET/DELETE /mcp) and `sse` (legacy GET /sse + POST /message) modes, each started
 * as `PORT=<free port> node <its dist/index.js> <mode>`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { connect, createServer } from "node:net";
import { dirname, join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { CallToolResult, InitializeResult, JsonObject, Tool } from "@mcpd/protocol";
import { HttpTransport, type MessageContext } from "@mcpd/transports";
import { isAlive, waitFor } from "./helpers/process.js";

const INIT = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "mcpd-http-test", version: "1.0.0" } };

/** The package's entry file, from its package.json `bin` (it has no `main`/`exports`). */
function everythingEntry(): string {
  const require = createRequire(import.meta.url);
  const pkgJson = require.resolve("@modelcontextprotocol/server-everything/package.json");
  const pkg = JSON.parse(readFileSync(pkgJson, "utf8")) as { bin: Record<string, string> | string };
  const bin = typeof pkg.bin === "string" ? pkg.bin : Object.values(pkg.bin)[0];
  const entry = join(dirname(pkgJson), bin as string);
  if (!existsSync(entry)) throw new Error(`server-everything entry not found at ${entry}`);
  return entry;
}

/** A port that was free a moment ago: listen on 0, read it, close. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

const children: ChildProcess[] = [];
const transports: HttpTransport[] = [];

afterEach(async () => {
  await Promise.all(transports.splice(0).map((t) => t.close()));
});

afterAll(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    }
    expect(isAlive(child.pid)).toBe(false);
  }
});

/** Starts server-everything in `mode` on a free port and waits until it accepts connections. */
async function startEverything(mode: "streamableHttp" | "sse"): Promise<number> {
  const port = await freePort();
  const child = spawn(process.execPath, [everythingEntry(), mode], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  children.push(child);
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  await waitFor(async () => child.exitCode === null && (await accepts(port)), {
    timeoutMs: 30_000,
    message: `server-everything ${mode} accepting on port ${port} (stderr: ${stderr.slice(0, 500)})`,
  });
  return port;
}

/** initialize, tools/list, echo and progress from trigger-long-running-operation. */
async function exercise(t: HttpTransport): Promise<void> {
  const init = await t.request<InitializeResult>("initialize", INIT);
  expect(init.serverInfo.name).toBeTruthy();
  expect(init.capabilities.tools).toBeDefined();
  await t.notify("notifications/initialized");

  const { tools } = await t.request<{ tools: Tool[] }>("tools/list");
  const names = tools.map((x) => x.name);
  expect(names).toContain("echo");
  expect(names).toContain("trigger-long-running-operation");
  const longOp = tools.find((x) => x.name === "trigger-long-running-operation")!;
  expect(Object.keys((longOp.inputSchema as { properties: JsonObject }).properties)).toEqual(expect.arrayContaining(["duration", "steps"]));

  const echo = await t.request<CallToolResult>("tools/call", { name: "echo", arguments: { message: "hello over http" } });
  expect(echo.content[0]).toEqual({ type: "text", text: "Echo: hello over http" });

  const progress: Array<{ params: JsonObject | undefined; context: MessageContext }> = [];
  t.onNotification = (method, params, context) => {
    if (method === "notifications/progress") progress.push({ params, context });
  };
  let id: unknown;
  const result = await t.request<CallToolResult>(
    "tools/call",
    { name: "trigger-long-running-operation", arguments: { duration: 0.3, steps: 3 }, _meta: { progressToken: "op-1" } },
    { onRequestId: (x) => (id = x) },
  );
  expect(result.content[0]!.text).toMatch(/Long running operation completed/);
  expect(progress.map((p) => p.params)).toEqual([1, 2, 3].map((progress) => ({ progress, total: 3, progressToken: "op-1" })));
  if (t.mode === "streamable-http") for (const p of progress) expect(p.context.relatedRequestId).toBe(id);
}

/** One server per mode, shared by the tests of this file (each test opens its own session). */
const servers = new Map<string, Promise<number>>();
function everything(mode: "streamableHttp" | "sse"): Promise<number> {
  let port = servers.get(mode);
  if (!port) {
    port = startEverything(mode);
    servers.set(mode, port);
  }
  return port;
}

describe("HttpTransport with @modelcontextprotocol/server-everything", () => {
  it("speaks Streamable HTTP (streamableHttp mode, /mcp), with the listener and DELETE on close", async () => {
    const port = await everything("streamableHttp");
    const t = new HttpTransport({ type: "http", url: `http://127.0.0.1:${port}/mcp` });
    transports.push(t);
    await t.connect();
    await exercise(t);
    expect(t.info()).toMatchObject({ type: "http", mode: "streamable-http", sessionId: expect.any(String) });
    t.startSSEListener();
    expect(t.listenerState).toBe("running");
    await t.request("ping");
    await t.close();
    expect(t.connected).toBe(false);
  });

  it("speaks legacy HTTP+SSE (sse mode, /sse) with type sse", async () => {
    const port = await everything("sse");
    const t = new HttpTransport({ type: "sse", url: `http://127.0.0.1:${port}/sse` });
    transports.push(t);
    await t.connect();
    await exercise(t);
    expect(t.info()).toMatchObject({ type: "sse", mode: "legacy-sse", sessionId: expect.any(String) });
  });

  it("falls back from type http to legacy against the sse mode", async () => {
    const port = await everything("sse");
    const t = new HttpTransport({ type: "http", url: `http://127.0.0.1:${port}/sse` });
    transports.push(t);
    await t.connect();
    await exercise(t);
    expect(t.mode).toBe("legacy-sse");
  });
});
