/**
 * An MCP App rendered the way a host renders it, through mcpd (issue 34): the official example server
 * @modelcontextprotocol/server-basic-vanillajs behind mcpd, the official SDK Client (behind `mcpd connect`,
 * declaring the UI extension) as the host's MCP client, and headless chromium as the host's renderer. The
 * test reads the tool's `ui://` view through mcpd, loads its HTML into a sandboxed iframe (`srcdoc`) of a
 * host page, and plays the host's side of the ext-apps postMessage protocol: it answers `ui/initialize`,
 * and relays the app's `tools/call` requests to mcpd. The app's own button then calls its server's tool by
 * the server's name (unprefixed, in the aggregate view too), and shows the answer.
 */
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Browser, Frame } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { HAS_CHROMIUM, NO_CHROMIUM, launchChromium } from "../helpers/chromium.js";
import { waitFor } from "../helpers/process.js";
import { connectCommand, ROOT, startTestDaemon, type TestDaemon } from "./harness.js";

const BASIC = join(ROOT, "node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js");
const BUDGET = join(ROOT, "node_modules/@modelcontextprotocol/server-budget-allocator/dist/index.js");
const UI = "io.modelcontextprotocol/ui";
const MIME = "text/html;profile=mcp-app";

/** The host page: an iframe for the app, and every message the app posts handed to the test (`hostReceive`). */
const HOST_PAGE = `<!doctype html><html><body>
<iframe id="app" sandbox="allow-scripts" style="width: 600px; height: 600px"></iframe>
<script>
  const frame = document.getElementById("app");
  window.addEventListener("message", async (event) => {
    if (event.source !== frame.contentWindow) return;
    const reply = await window.hostReceive(event.data);
    if (reply) frame.contentWindow.postMessage(reply, "*");
  });
</script>
</body></html>`;

type Message = { jsonrpc: "2.0"; id?: string | number; method?: string; params?: Record<string, unknown> };

let browser: Browser | undefined;
let d: TestDaemon | undefined;
const clients: Client[] = [];

beforeAll(async () => {
  if (!HAS_CHROMIUM) return;
  browser = await launchChromium();
  d = await startTestDaemon({
    basic: { command: process.execPath, args: [BASIC, "--stdio"] },
    budget: { command: process.execPath, args: [BUDGET, "--stdio"] },
  });
});
afterAll(async () => {
  await browser?.close();
  await d?.stop();
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
});

/** The host's MCP client: the official SDK Client behind `mcpd connect ARGS...`, declaring the UI extension. */
async function hostClient(...args: string[]): Promise<Client> {
  const c = new Client({ name: "browser-host", version: "1.0.0" }, { capabilities: { extensions: { [UI]: { mimeTypes: [MIME] } } } });
  clients.push(c);
  await c.connect(new StdioClientTransport(connectCommand(d as TestDaemon, args)));
  return c;
}

/**
 * The host's side of the app's postMessage protocol: `ui/initialize` answered, `tools/call` relayed to mcpd
 * through `mcp` (its answers kept in `answers`), any other request refused (-32601); every message is kept in `seen`.
 */
function hostSide(mcp: Client, seen: Message[], answers: Array<Record<string, unknown>>): (m: Message) => Promise<object | undefined> {
  return async (m) => {
    seen.push(m);
    if (m.id === undefined || m.method === undefined) return undefined;
    if (m.method === "ui/initialize") {
      const result = {
        protocolVersion: m.params?.protocolVersion,
        hostInfo: { name: "browser-host", version: "1.0.0" },
        hostCapabilities: { serverTools: {}, logging: {} },
        hostContext: { theme: "light", displayMode: "inline" },
      };
      return { jsonrpc: "2.0", id: m.id, result };
    }
    if (m.method === "tools/call") {
      try {
        const result = await mcp.callTool(m.params as { name: string; arguments?: Record<string, unknown> });
        answers.push(result);
        return { jsonrpc: "2.0", id: m.id, result };
      } catch (err) {
        const e = err as { code?: number; message?: string };
        return { jsonrpc: "2.0", id: m.id, error: { code: e.code ?? -32603, message: e.message ?? String(err) } };
      }
    }
    return { jsonrpc: "2.0", id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } };
  };
}

describe.skipIf(!HAS_CHROMIUM)(`an MCP App in chromium, through mcpd (${NO_CHROMIUM})`, () => {
  for (const [view, args, tool, uri] of [
    ["the aggregate view", [], "basic__get-time", "ui://basic/get-time/mcp-app.html"],
    ["its server's transparent view", ["basic"], "get-time", "ui://get-time/mcp-app.html"],
  ] as const) {
    it(`server-basic-vanillajs in ${view}: the view read through mcpd renders, completes ui/initialize, and its button's call reaches its server`, async () => {
      const mcp = await hostClient(...args);
      const listed = (await mcp.listTools()).tools.find((t) => t.name === tool);
      expect((listed?._meta as { ui?: { resourceUri?: string } } | undefined)?.ui?.resourceUri).toBe(uri);
      const read = await mcp.readResource({ uri });
      const html = (read.contents[0] as { text: string }).text;

      const seen: Message[] = [];
      const answers: Array<Record<string, unknown>> = [];
      const page = await (browser as Browser).newPage();
      try {
        await page.exposeFunction("hostReceive", hostSide(mcp, seen, answers));
        await page.setContent(HOST_PAGE);
        await page.evaluate((text) => {
          (document.getElementById("app") as HTMLIFrameElement).srcdoc = text;
        }, html);
        await waitFor(() => seen.some((m) => m.method === "ui/notifications/initialized"), {
          message: "the app's ui/notifications/initialized",
        });
        const app = (await waitFor(() => page.frames().find((f) => f !== page.mainFrame()), { message: "the app's frame" })) as Frame;

        await app.click("#get-time-btn");
        await app.waitForFunction(() => document.getElementById("server-time")?.textContent !== "Loading...");
        // The app called its server's tool by the server's own name, and mcpd routed it there.
        const calls = seen.filter((m) => m.method === "tools/call");
        expect(calls.map((m) => m.params?.name)).toEqual(["get-time"]);
        // What it shows is its server's answer, as mcpd relayed it.
        const time = (answers[0]?.structuredContent as { time?: string } | undefined)?.time;
        expect(Number.isNaN(Date.parse(time ?? ""))).toBe(false);
        expect(await app.textContent("#server-time")).toBe(time);
      } finally {
        await page.close();
      }
    });
  }
});
