// A ten-line agent: list every tool of every server behind mcpd, then call one with progress.
// Usage: node examples/agent.mjs [SERVER TOOL ARGS_JSON]   e.g.  node examples/agent.mjs fx progress '{"steps":3,"intervalMs":50}'
import { connect } from "@mcpd/client";

const client = await connect({ autostart: true, clientInfo: { name: "ten-line-agent", version: "1.0.0" } });
for (const tool of await client.listTools()) console.log(`${tool.server}/${tool.name}  ${tool.description ?? ""}`);
const [server, name, args = "{}"] = process.argv.slice(2);
if (name) {
  const onProgress = (p) => console.log(`progress ${p.progress}/${p.total ?? "?"}${p.message ? ` ${p.message}` : ""}`);
  const result = await client.callTool({ server, name, arguments: JSON.parse(args) }, { onProgress, timeout: 120_000 });
  console.log(result.content.map((c) => c.text ?? `[${c.type}]`).join("\n"));
}
await client.close();
