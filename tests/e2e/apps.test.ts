/**
 * MCP Apps through mcpd, end to end (issue 34): the official example app servers
 * (@modelcontextprotocol/server-basic-vanillajs and server-budget-allocator, stdio) and an app server written for the tests on the
 * official SDK (tests/fixtures/servers/app-server.mjs: its UI tool only for clients that declare the UI
 * extension, an app-only tool), the official SDK Client behind `mcpd connect`, declaring the extension or
 * not. The routing rules one by one are in daemon/test/router/apps.test.ts.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ROOT, startTestDaemon, until, type TestDaemon, connectCommand } from "./harness.js";

const BASIC = join(ROOT, "node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js");
const BUDGET = join(ROOT, "node_modules/@modelcontextprotocol/server-budget-allocator/dist/index.js");
const APP = join(ROOT, "tests/fixtures/servers/app-server.mjs");
const UI = "io.modelcontextprotocol/ui";
const MIME = "text/html;profile=mcp-app";
const VIEW_META = {
  csp: { connectDomains: ["https://api.example.com"], resourceDomains: ["https://cdn.example.com"] },
  permissions: { clipboardWrite: {} },
  domain: "board.example.com",
  prefersBorder: false,
};

let d: TestDaemon;
const clients: Client[] = [];

beforeAll(async () => {
  const basic = { command: process.execPath, args: [BASIC, "--stdio"] };
  d = await startTestDaemon(
    {
      basic,
      basic2: basic,
      budget: { command: process.execPath, args: [BUDGET, "--stdio"] },
      app: { command: process.execPath, args: [APP, "--name", "app"] },
      pc: { command: process.execPath, args: [APP, "--name", "pc", "--unlisted"], sharing: "per-client" },
    },
    { settings: { profiles: { board: { servers: ["app"] } } } },
  );
  const ctl = await d.control();
  await until(async () => {
    const servers = (await ctl.request("mcpd/servers")).result.servers as Array<{ state: string }>;
    return servers.every((s) => s.state === "ready");
  }, "every server ready");
});
afterAll(async () => {
  await d?.stop();
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
});

/** The official SDK Client behind `mcpd connect ARGS...`, declaring the UI extension when `ui`. */
async function client(ui: boolean, ...args: string[]): Promise<Client> {
  const transport = new StdioClientTransport(connectCommand(d, args));
  const capabilities = ui ? { extensions: { [UI]: { mimeTypes: [MIME] } } } : {};
  const c = new Client({ name: ui ? "ui-host" : "text-host", version: "1.0.0" }, { capabilities });
  clients.push(c);
  await c.connect(transport);
  return c;
}

type ToolMeta = { ui?: { resourceUri?: string; visibility?: string[] }; "ui/resourceUri"?: string; [k: string]: unknown };
const metaOf = async (c: Client, name: string): Promise<ToolMeta | undefined> =>
  (await c.listTools()).tools.find((t) => t.name === name)?._meta as ToolMeta | undefined;
const names = async (c: Client): Promise<string[]> => (await c.listTools()).tools.map((t) => t.name).sort();

/** How many app-server processes named `name` run (their command lines, from /proc). */
function appProcesses(name: string): number {
  let n = 0;
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(`${APP}\0--name\0${name}\0`)) n++;
    } catch {
      // gone meanwhile
    }
  }
  return n;
}

async function refusal(p: Promise<unknown>): Promise<McpError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof McpError) return err;
    throw err;
  }
  throw new Error("expected the call to be refused");
}

describe("server-basic-vanillajs through mcpd", () => {
  it("two copies in the aggregate view: each tool names its own copy's ui:// view, both apps open; a transparent view keeps the server's URI", async () => {
    const c = await client(true);
    for (const server of ["basic", "basic2"]) {
      const meta = await metaOf(c, `${server}__get-time`);
      const uri = `ui://${server}/get-time/mcp-app.html`;
      expect(meta?.ui?.resourceUri).toBe(uri);
      expect(meta?.["ui/resourceUri"]).toBe(uri);
      const read = await c.readResource({ uri });
      expect(read.contents).toHaveLength(1);
      expect(read.contents[0]).toMatchObject({ uri, mimeType: MIME });
      expect((read.contents[0] as { text: string }).text).toContain("<html");
      const call = await c.callTool({ name: `${server}__get-time`, arguments: {} });
      expect(typeof (call.structuredContent as { time?: unknown }).time).toBe("string");
    }
    const listed = (await c.listResources()).resources.map((r) => r.uri);
    expect(listed).toEqual(expect.arrayContaining(["ui://basic/get-time/mcp-app.html", "ui://basic2/get-time/mcp-app.html"]));
    // Its transparent view keeps the server's own URI, for a client with the extension or without.
    for (const ui of [true, false]) {
      const t = await client(ui, "basic");
      expect((await metaOf(t, "get-time"))?.ui?.resourceUri).toBe("ui://get-time/mcp-app.html");
      const own = await t.readResource({ uri: "ui://get-time/mcp-app.html" });
      expect(own.contents[0]).toMatchObject({ uri: "ui://get-time/mcp-app.html", mimeType: MIME });
    }
  });
});

describe("server-budget-allocator through mcpd", () => {
  it("its tool names its ui:// view, the view reads as the app's HTML and the tool answers, in the aggregate view and its own", async () => {
    for (const [args, name, uri] of [
      [[], "budget__get-budget-data", "ui://budget/budget-allocator/mcp-app.html"],
      [["budget"], "get-budget-data", "ui://budget-allocator/mcp-app.html"],
    ] as const) {
      const c = await client(true, ...args);
      const meta = await metaOf(c, name);
      expect(meta?.ui?.resourceUri).toBe(uri);
      const read = await c.readResource({ uri });
      expect(read.contents).toHaveLength(1);
      expect(read.contents[0]).toMatchObject({ uri, mimeType: MIME });
      expect((read.contents[0] as { text: string }).text).toContain("<html");
      const call = await c.callTool({ name, arguments: {} });
      const data = call.structuredContent as { config?: { categories?: unknown[]; currency?: string } };
      expect(data.config?.currency).toBe("USD");
      expect(data.config?.categories?.length).toBeGreaterThan(0);
      expect((call.content as Array<{ type: string }>)[0]?.type).toBe("text");
    }
    // In the aggregate view its view is listed in the form its tool names.
    const listed = (await (await client(true)).listResources()).resources.map((r) => r.uri);
    expect(listed).toContain("ui://budget/budget-allocator/mcp-app.html");
  });
});

describe("an app server that offers its UI tool to UI clients only", () => {
  it("per-client, transparent view: its private session is initialized with the client's extension, and nothing of _meta is lost", async () => {
    const ui = await client(true, "pc");
    expect(await names(ui)).toEqual(["board-text", "move", "show-board"]);
    const meta = await metaOf(ui, "show-board");
    expect(meta).toEqual({
      ui: { resourceUri: "ui://board/view.html", ...VIEW_META },
      "ui/resourceUri": "ui://board/view.html",
      "example.com/kept": { n: 1 },
    });
    const shown = await ui.callTool({ name: "show-board", arguments: {} });
    expect(shown.structuredContent).toEqual({ server: "pc", pieces: 3 });
    expect(shown._meta).toEqual({ "example.com/trace": { id: "pc" } });
    expect(shown.content).toContainEqual({ type: "resource_link", uri: "ui://board/view.html", name: "board", mimeType: MIME });
    // Not in its resources/list (--unlisted), read all the same, with the view's _meta.
    const read = await ui.readResource({ uri: "ui://board/view.html" });
    expect(read.contents[0]).toMatchObject({ uri: "ui://board/view.html", mimeType: MIME, _meta: { ui: VIEW_META } });
    expect((await ui.callTool({ name: "move", arguments: { to: "e4" } })).content).toEqual([{ type: "text", text: "pc moved e4" }]);
    // A client without the extension gets the fallback, and not the app-only tool.
    const text = await client(false, "pc");
    expect(await names(text)).toEqual(["board-text"]);
  });

  it("per-client, aggregate view: a UI client lists and calls what its own session offers, and opens the app by the URI its tool names", async () => {
    const ui = await client(true);
    expect((await names(ui)).filter((n) => n.startsWith("pc__"))).toEqual(["pc__board-text", "pc__move", "pc__show-board"]);
    const uri = (await metaOf(ui, "pc__show-board"))?.ui?.resourceUri as string;
    expect(uri).toBe("ui://pc/board/view.html");
    const shown = await ui.callTool({ name: "pc__show-board", arguments: {} });
    expect(shown.structuredContent).toEqual({ server: "pc", pieces: 3 });
    expect(shown.content).toContainEqual({ type: "resource_link", uri, name: "board", mimeType: MIME });
    expect(shown.content).toContainEqual(expect.objectContaining({ type: "resource", resource: expect.objectContaining({ uri }) }));
    // The view is not in the server's resources/list (--unlisted): read all the same, by the tool's URI.
    const read = await ui.readResource({ uri });
    expect(read.contents[0]).toMatchObject({ uri, mimeType: MIME, _meta: { ui: VIEW_META } });
    const text = await client(false);
    expect((await names(text)).filter((n) => n.startsWith("pc__"))).toEqual(["pc__board-text"]);
  });

  it("shared: a UI client sees what the server offers a UI client, the others the rest, over one extra session at most", async () => {
    const ui = await client(true);
    const text = await client(false);
    expect((await names(ui)).filter((n) => n.startsWith("app__"))).toEqual(["app__board-text", "app__move", "app__show-board"]);
    expect((await names(text)).filter((n) => n.startsWith("app__"))).toEqual(["app__board-text"]);
    expect((await metaOf(ui, "app__move"))?.ui?.visibility).toEqual(["app"]);
    const shown = await ui.callTool({ name: "app__show-board", arguments: {} });
    expect(shown.structuredContent).toEqual({ server: "app", pieces: 3 });
    const read = await ui.readResource({ uri: "ui://app/board/view.html" });
    expect(read.contents[0]).toMatchObject({ uri: "ui://app/board/view.html", mimeType: MIME, _meta: { ui: VIEW_META } });
    const uiServer = await client(true, "app");
    expect(await names(uiServer)).toEqual(["board-text", "move", "show-board"]);
    expect(await names(await client(false, "app"))).toEqual(["board-text"]);
    // Two UI clients and two others: the shared session and one UI session.
    expect(appProcesses("app")).toBe(2);
  });

  it("an app-only tool called by a client without the UI extension is refused, in both views; a UI client's call goes through", async () => {
    for (const [args, name] of [
      [[], "app__move"],
      [["app"], "move"],
    ] as const) {
      const text = await client(false, ...args);
      const refused = await refusal(text.callTool({ name, arguments: { to: "b2" } }));
      expect(refused.code).toBe(-32602);
      expect(refused.message).toContain('Tool "move" of server "app" is app-only');
      expect((await (await client(true, ...args)).callTool({ name, arguments: { to: "b2" } })).content).toEqual([
        { type: "text", text: "app moved b2" },
      ]);
    }
  });

  it("an app's unprefixed call resolves to the one server of the view offering it, or names both servers", async () => {
    const ui = await client(true);
    // `move` is offered by app and pc: the app's unprefixed name is ambiguous in the whole view...
    const both = await refusal(ui.callTool({ name: "move", arguments: { to: "a1" } }));
    expect(both.code).toBe(-32602);
    expect(both.message).toContain("app__move, pc__move");
    // ...and resolves in a view of one of them.
    const board = await client(true, "--profile", "board");
    expect((await board.callTool({ name: "move", arguments: { to: "a1" } })).content).toEqual([{ type: "text", text: "app moved a1" }]);
  });
});
