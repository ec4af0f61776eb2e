import { type Logger, silentLogger, type Tool } from "@mcpd/protocol";
import { describe, expect, it } from "vitest";
import { ToolHeaders } from "../../src/supervision/tool-headers.js";

const TOOLS: Tool[] = [
  {
    name: "find",
    inputSchema: {
      type: "object",
      properties: {
        region: { type: "string", "x-mcp-header": "Region" },
        city: { type: "string", "x-mcp-header": "City" },
        limit: { type: "integer", "x-mcp-header": "Limit" },
        exact: { type: "boolean", "x-mcp-header": "Exact" },
        query: { type: "string" },
      },
    },
  },
  { name: "broken", inputSchema: { type: "object", properties: { score: { type: "number", "x-mcp-header": "Score" } } } },
];

/** A logger that keeps its warnings. */
function warnings(): { log: Logger; seen: unknown[] } {
  const seen: unknown[] = [];
  return { seen, log: { ...silentLogger, warn: (obj: unknown) => void seen.push(obj) } };
}

describe("ToolHeaders (x-mcp-header for a 2026-era HTTP server)", () => {
  it("puts each annotated argument of a listed tool in its Mcp-Param header, none for other methods or tools", () => {
    const h = new ToolHeaders(silentLogger);
    h.screen(TOOLS);
    const args = { region: "eu-west", city: "Zürich", limit: 3, exact: false, query: "q" };
    const headers = h.headersFor("tools/call", { name: "find", arguments: args });
    expect(headers).toMatchObject({ "Mcp-Param-Region": "eu-west", "Mcp-Param-Limit": "3", "Mcp-Param-Exact": "false" });
    expect(headers?.["Mcp-Param-City"]).toBe(`=?base64?${Buffer.from("Zürich").toString("base64")}?=`);
    expect(h.headersFor("tools/list", {})).toBeUndefined();
    expect(h.headersFor("tools/call", { name: "other", arguments: {} })).toBeUndefined();
  });

  it("leaves a tool with an invalid annotation out (warned once), refuses its calls with -32602, and forgets it once valid", () => {
    const { log, seen } = warnings();
    const h = new ToolHeaders(log);
    expect(h.screen(TOOLS)).toEqual([TOOLS[0]]);
    h.screen(TOOLS);
    expect(seen).toHaveLength(1);
    expect(h.rejected.map((r) => r.name)).toEqual(["broken"]);
    const refused = h.refusal("broken");
    expect(refused?.rpcCode).toBe(-32602);
    expect(refused?.message).toMatch(/Tool "broken" is not available: its x-mcp-header annotation is invalid/);
    expect(h.refusal("find")).toBeUndefined();
    expect(h.refusal(undefined)).toBeUndefined();
    // The server fixed the tool: the next listing keeps it, and its calls go.
    h.screen([TOOLS[0] as Tool, { name: "broken", inputSchema: { type: "object", properties: {} } }]);
    expect(h.refusal("broken")).toBeUndefined();
  });
});
