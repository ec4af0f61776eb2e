// The official MCP TypeScript SDK's Client over mcpd: McpdTransport plugs into client.connect() unchanged.
// Usage: node examples/sdk-transport.mjs [SERVER]   (no SERVER: the aggregate view of every server)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpdTransport } from "@mcpd/client";

const server = process.argv[2];
const client = new Client({ name: "sdk-over-mcpd", version: "1.0.0" });
await client.connect(new McpdTransport(server ? { server } : {}));
console.log(`connected to ${client.getServerVersion()?.name}`);
const { tools } = await client.listTools();
for (const tool of tools) console.log(tool.name);

// Cancel a call with an AbortSignal: mcpd forwards notifications/cancelled to the server.
const controller = new AbortController();
const slow = tools.find((t) => t.name === "slow" || t.name.endsWith("__slow"));
if (slow) {
  const call = client.callTool({ name: slow.name, arguments: { ms: 60_000 } }, undefined, { signal: controller.signal });
  setTimeout(() => controller.abort("changed my mind"), 100);
  await call.catch((err) => console.log(`cancelled: ${err.message}`));
}
await client.close();
