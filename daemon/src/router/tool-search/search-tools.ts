/**
 * The tools a view in search mode lists in place of its catalog: `search_tools`, and `call_tool` when
 * its setting asks for it. Their names have no `__`, so they never collide with a server's tool in the
 * aggregate view (`<server>__<tool>`).
 */
import type { Tool } from "@mcpd/protocol";
import { RUNTIME_DEFAULTS } from "../../defaults.js";

export const SEARCH_TOOLS = "search_tools";
export const CALL_TOOL = "call_tool";

/** `search_tools`' definition; `servers`: the servers of the view, which its `server` parameter takes. */
function searchTools(servers: readonly string[]): Tool {
  return {
    name: SEARCH_TOOLS,
    title: "Search tools",
    description:
      "Find the tools for a task among all the tools of this connection's servers, by what they do (words of their names, " +
      "descriptions and parameters). Found tools are added to your tool list (notifications/tools/list_changed): call them by name.",
    inputSchema: {
      type: "object",
      properties: {
        query: { type: "string", description: "What you want to do, in a few words (e.g. 'list pods in a namespace')" },
        server: { type: "string", description: `Only tools of this server: ${servers.join(", ")}` },
        limit: {
          type: "integer",
          minimum: 1,
          maximum: RUNTIME_DEFAULTS.toolSearchMaxLimit,
          description: `Most matches returned (default ${RUNTIME_DEFAULTS.toolSearchLimit})`,
        },
      },
      required: ["query"],
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  };
}

const CALL_TOOL_DEFINITION: Tool = {
  name: CALL_TOOL,
  title: "Call a tool",
  description:
    "Call a tool found with search_tools, by its name, with its arguments (as its inputSchema in search_tools' answer asks). " +
    "The answer is that tool's, and names the tool called.",
  inputSchema: {
    type: "object",
    properties: {
      name: { type: "string", description: "The tool's name, as search_tools gave it (<server>__<tool>)" },
      arguments: { type: "object", description: "The tool's arguments" },
    },
    required: ["name"],
  },
};

/** What `tools/list` holds in search mode before anything is found: `search_tools`, and `call_tool` when `callTool`. */
export function searchModeTools(servers: readonly string[], callTool: boolean): Tool[] {
  return callTool ? [searchTools(servers), CALL_TOOL_DEFINITION] : [searchTools(servers)];
}
