#!/usr/bin/env node
// An MCP conformance client built on mcpd's HttpTransport, for `@modelcontextprotocol/conformance client`.
// The tool runs `node client.mjs <server-url>` with MCP_CONFORMANCE_SCENARIO set; exit 0 means the client
// did its part (the tool then judges what the server saw). Scenarios: initialize, tools_call, sse-retry.
import { withSession } from "./client-session.mjs";

const url = process.argv[process.argv.length - 1];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "initialize";

const log = (...args) => console.error(`[mcpd-conformance ${scenario}]`, ...args);

/** Runs `fn` on an initialized session with the conformance server at `url`. */
const session = (fn) => withSession(url, {}, log, fn);

const scenarios = {
  async initialize() {
    await session(async (t) => {
      const { tools } = await t.request("tools/list");
      log("tools:", tools.map((x) => x.name).join(", ") || "(none)");
    });
  },

  async tools_call() {
    await session(async (t) => {
      const { tools } = await t.request("tools/list");
      if (!tools.some((x) => x.name === "add_numbers")) throw new Error(`add_numbers not listed: ${JSON.stringify(tools)}`);
      const result = await t.request("tools/call", { name: "add_numbers", arguments: { a: 5, b: 3 } });
      const text = result.content?.[0]?.text ?? "";
      if (!text.includes("8")) throw new Error(`unexpected add_numbers result: ${JSON.stringify(result)}`);
      log("add_numbers:", text);
    });
  },

  // The server primes the tools/call SSE reply with an event id and `retry: 500`, closes it, and sends
  // the response on the GET that resumes it: HttpTransport must wait `retry` and send Last-Event-ID.
  async "sse-retry"() {
    await session(async (t) => {
      const { tools } = await t.request("tools/list");
      const name = tools[0]?.name ?? "test_reconnection";
      const result = await t.request("tools/call", { name, arguments: {} });
      log("tool result after resumption:", JSON.stringify(result));
      if (!Array.isArray(result.content)) throw new Error(`unexpected tools/call result: ${JSON.stringify(result)}`);
    });
  },
};

const run = scenarios[scenario];
if (!run) {
  log(`unknown scenario; known: ${Object.keys(scenarios).join(", ")}`);
  process.exit(2);
}
try {
  await run();
  process.exit(0);
} catch (err) {
  log("failed:", err?.stack ?? String(err));
  process.exit(1);
}
