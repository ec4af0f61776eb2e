// Answer server-to-client requests: a server asks this agent's "LLM" for a completion (sampling) and for
// its workspace roots. Registering the handlers before connecting declares the capabilities.
// Usage: node examples/sampling-handler.mjs SERVER TOOL [ARGS_JSON]
//   e.g. node examples/sampling-handler.mjs everything trigger-sampling-request '{"prompt":"hi","maxTokens":10}'
import { connect } from "@mcpd/client";

const client = await connect({
  clientInfo: { name: "sampling-agent", version: "1.0.0" },
  handlers: {
    "sampling/createMessage": async (params, { server }) => {
      const last = params.messages.at(-1)?.content?.text ?? "";
      return {
        role: "assistant",
        model: "echo-model",
        stopReason: "endTurn",
        content: { type: "text", text: `echo from ${server}: ${last}` },
      };
    },
    "roots/list": () => ({ roots: [{ uri: `file://${process.cwd()}`, name: "cwd" }] }),
  },
});
const [server, name, args = "{}"] = process.argv.slice(2);
const result = await client.callTool({ server, name, arguments: JSON.parse(args) });
console.log(result.content.map((c) => c.text ?? `[${c.type}]`).join("\n"));
await client.close();
