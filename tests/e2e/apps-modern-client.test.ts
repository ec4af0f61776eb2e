/**
 * A 2026-era client of a shared 2025-era app server (issue 34): the official v2 SDK Client
 * (`@modelcontextprotocol/client`) pinned to 2026-07-28 declares the MCP Apps UI extension only in each
 * request's envelope (`_meta` clientCapabilities), never in an initialize. Its requests are a UI client's:
 * they go to the server's UI session and get what the server offers a UI client (the app server written for
 * the tests, tests/fixtures/servers/app-server.mjs, offers its UI tool only to such a client), in a server's
 * view and in the aggregate view; one that does not declare it gets the text fallback.
 */
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ROOT, connectCommand, startTestDaemon, type TestDaemon } from "./harness.js";

const APP = join(ROOT, "tests/fixtures/servers/app-server.mjs");
const UI = "io.modelcontextprotocol/ui";

let d: TestDaemon;
const clients: Client[] = [];

beforeAll(async () => {
  d = await startTestDaemon({ app: { command: process.execPath, args: [APP, "--name", "modern"] } });
});
afterAll(async () => {
  await d?.stop();
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
});

/** A v2 SDK Client pinned to 2026-07-28 behind `mcpd connect ARGS...`, declaring the UI extension when `ui`. */
async function modernClient(ui: boolean, ...args: string[]): Promise<Client> {
  const capabilities = ui ? { extensions: { [UI]: { mimeTypes: ["text/html;profile=mcp-app"] } } } : {};
  const c = new Client(
    { name: ui ? "modern-ui-host" : "modern-text-host", version: "1.0.0" },
    { capabilities, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  clients.push(c);
  await c.connect(new StdioClientTransport(connectCommand(d, args)));
  expect(c.getNegotiatedProtocolVersion()).toBe("2026-07-28");
  return c;
}

const names = async (c: Client): Promise<string[]> => (await c.listTools()).tools.map((t) => t.name).sort();
const content = async (c: Client, name: string): Promise<unknown> => (await c.callTool({ name, arguments: {} })).content;

describe("a 2026-era client declaring the UI extension in its envelope, on a shared 2025-era app server", () => {
  it("a server's view: the UI offering (its UI tool, app-only tool listed), which the fallback client does not get", async () => {
    const ui = await modernClient(true, "app");
    const text = await modernClient(false, "app");
    expect(await names(ui)).toEqual(["board-text", "move", "show-board"]);
    expect(await content(ui, "show-board")).toContainEqual({ type: "text", text: "board of modern" });
    expect(await names(text)).toEqual(["board-text"]);
    expect(await content(text, "board-text")).toEqual([{ type: "text", text: "board of modern (text)" }]);
  });

  it("the aggregate view: the UI offering, under mcpd's names; the fallback client's list has no UI tool", async () => {
    const ui = await modernClient(true);
    const text = await modernClient(false);
    expect(await names(ui)).toEqual(["app__board-text", "app__move", "app__show-board"]);
    expect(await content(ui, "app__show-board")).toContainEqual({ type: "text", text: "board of modern" });
    expect(await names(text)).toEqual(["app__board-text"]);
    expect(await content(text, "app__board-text")).toEqual([{ type: "text", text: "board of modern (text)" }]);
  });
});
