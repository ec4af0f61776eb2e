/**
 * Tool search end to end, with the official SDK Client: through `mcpd connect --tool-search on` and over
 * the HTTP front end's `/search/mcp`, the client lists only search_tools, finds a tool by search, sees it
 * join its list after notifications/tools/list_changed and calls it; with a profile whose toolSearch turns
 * call_tool on (`--profile`, `/profiles/<name>/search/mcp`), call_tool calls a tool of the view and says which.
 * `mcpd tools` says which mode a selection is in, and why.
 */
import { spawn } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type HttpFrontInfo, httpFront, sdkClient as httpClient } from "../http/http-harness.js";
import { waitFor } from "../helpers/process.js";
import { MCPD_BIN, fixture, startTestDaemon, until, type TestDaemon, connectCommand } from "./harness.js";

let d: TestDaemon;
let front: HttpFrontInfo;
const clients: Client[] = [];

beforeAll(async () => {
  d = await startTestDaemon(
    { fx: fixture("fx"), other: fixture("other") },
    { settings: { profiles: { finder: { servers: ["fx"], toolSearch: { mode: "on", callTool: true } } } } },
  );
  const ctl = await d.control();
  await until(async () => {
    const servers = (await ctl.request("mcpd/servers")).result.servers as Array<{ state: string }>;
    return servers.every((s) => s.state === "ready");
  }, "both servers ready");
  front = await httpFront(d);
});
afterAll(async () => {
  await d?.stop();
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
});

/** The SDK Client behind `mcpd connect ARGS...` (the test's daemon is running). */
async function viaConnect(...args: string[]): Promise<Client> {
  const transport = new StdioClientTransport(connectCommand(d, args));
  const client = new Client({ name: "tool-search-e2e", version: "1.0.0" });
  clients.push(client);
  await client.connect(transport);
  return client;
}

async function viaHttp(path: string, kind: "streamable" | "sse" = "streamable"): Promise<Client> {
  const { client } = await httpClient(front, kind, path);
  clients.push(client);
  return client;
}

const names = async (c: Client): Promise<string[]> => (await c.listTools()).tools.map((t) => t.name);
const texts = (r: Record<string, unknown>): string[] => (r.content as Array<{ text: string }>).map((x) => x.text);

/** Searches, waits for the list_changed that announces what was found, and calls the first tool found natively. */
async function findAndCall(client: Client): Promise<void> {
  let changed = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changed++;
  });
  expect(await names(client)).toEqual(["search_tools"]);
  const found = await client.callTool({ name: "search_tools", arguments: { query: "adds two numbers" } });
  const tools = (found.structuredContent as { tools: Array<{ name: string; server: string }> }).tools;
  expect(tools[0]).toMatchObject({ name: "fx__add", server: "fx" });
  await waitFor(() => changed > 0, { timeoutMs: 10_000, intervalMs: 10, message: "notifications/tools/list_changed" });
  expect(await names(client)).toContain("fx__add");
  const answer = await client.callTool({ name: "fx__add", arguments: { a: 2, b: 3 } });
  expect(answer.isError).toBeFalsy();
  expect(texts(answer).join(" ")).toContain("5");
}

/** call_tool through a profile with callTool on: a tool of the view, labelled; one outside it refused. */
async function callThrough(client: Client): Promise<void> {
  expect(await names(client)).toEqual(["search_tools", "call_tool"]);
  const answer = await client.callTool({ name: "call_tool", arguments: { name: "fx__echo", arguments: { text: "via call_tool" } } });
  expect(texts(answer)).toEqual(["[called fx__echo]", "via call_tool"]);
  const outside = await client.callTool({ name: "call_tool", arguments: { name: "other__echo", arguments: { text: "x" } } });
  expect(outside.isError).toBe(true);
}

describe("tool search through mcpd connect", () => {
  it("--tool-search on: search_tools finds a tool, which joins the list after list_changed and is called", async () => {
    await findAndCall(await viaConnect("--tool-search", "on"));
  });

  it("--profile with toolSearch and callTool: call_tool calls a tool of the view and says which", async () => {
    await callThrough(await viaConnect("--profile", "finder"));
  });
});

describe("tool search over HTTP", () => {
  it("/search/mcp: search_tools finds a tool, which joins the list after list_changed and is called", async () => {
    await findAndCall(await viaHttp("/search/mcp"));
  });

  it("/search/sse (legacy HTTP+SSE): search_tools finds a tool, which joins the list after list_changed and is called", async () => {
    await findAndCall(await viaHttp("/search/mcp", "sse"));
  });

  it("/profiles/<name>/search/mcp: call_tool calls a tool of the view and says which", async () => {
    await callThrough(await viaHttp("/profiles/finder/search/mcp"));
  });
});

/** Runs the built `mcpd` command against the test's daemon. */
function cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [MCPD_BIN, ...args], {
      env: { ...process.env, MCPD_HOME: d.home, MCPD_CONFIG: d.configFile },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
    p.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
    p.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("mcpd tools", () => {
  it("says which tool-search mode a selection is in and why; nothing for the default", async () => {
    const profile = await cli("tools", "--profile", "finder");
    expect(profile.code, profile.stderr).toBe(0);
    expect(profile.stderr).toContain('Tool search: on (profile "finder"); agents get search_tools and call_tool in place of these tools.');
    const auto = await cli("tools", "--tool-search", "auto");
    expect(auto.stderr).toMatch(
      /Tool search: auto \(asked by the connection\): \d+ tools <= 100, search mode off; agents get these tools\./,
    );
    const plain = await cli("tools");
    expect(plain.stderr).not.toContain("Tool search");
    expect(plain.stdout).toContain("fx__echo");
  });
});
