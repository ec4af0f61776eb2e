import { type JsonObject, type Logger, silentLogger, type Tool } from "@mcpd/protocol";
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
        note: { type: "string", "x-mcp-header": "Note" },
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
  it("puts each annotated argument in its Mcp-Param header (base64 when not plain ASCII), none for null, absent or unannotated ones", () => {
    const h = new ToolHeaders(silentLogger, () => true);
    const args = { region: "eu-west", city: "Zürich", limit: 3, exact: false, note: null, query: "q" };
    expect(h.options("tools/call", { name: "find", arguments: args }, { timeout: 5 }, TOOLS)).toEqual({
      timeout: 5,
      headers: {
        "mcp-param-region": "eu-west",
        "mcp-param-city": `=?base64?${Buffer.from("Zürich").toString("base64")}?=`,
        "mcp-param-limit": "3",
        "mcp-param-exact": "false",
      },
    });
    // Other methods, and tools without annotations, get no headers.
    const options = { timeout: 5 };
    expect(h.options("tools/list", {}, options, TOOLS)).toBe(options);
    expect(h.options("tools/call", { name: "other", arguments: {} }, options, TOOLS)).toBe(options);
  });

  it("leaves a tool with an invalid annotation out of tools/list (warned once) and refuses its calls", async () => {
    const { log, seen } = warnings();
    const h = new ToolHeaders(log, () => true);
    const listed: JsonObject = { tools: TOOLS as unknown as JsonObject[], ttlMs: 0 };
    expect(await h.result("tools/list", Promise.resolve(listed))).toEqual({ tools: [TOOLS[0]], ttlMs: 0 });
    await h.result("tools/list", Promise.resolve(listed));
    expect(seen).toEqual([
      { tool: "broken", why: 'property "score": x-mcp-header is allowed on string, integer and boolean properties only' },
    ]);
    expect(h.refusal("broken")?.message).toMatch(/Tool "broken" is not available: its x-mcp-header annotation is invalid/);
    expect(h.refusal("find")).toBeUndefined();
    expect([...h.dropped.keys()]).toEqual(["broken"]);

    let replied: unknown;
    h.reply("tools/list", { resolve: (r) => (replied = r), reject: () => {} }).resolve(listed);
    expect(replied).toEqual({ tools: [TOOLS[0]], ttlMs: 0 });
  });

  it("does nothing while inactive (a 2025-era server, or one not over Streamable HTTP)", async () => {
    const h = new ToolHeaders(silentLogger, () => false);
    const listed: JsonObject = { tools: TOOLS as unknown as JsonObject[] };
    expect(await h.result("tools/list", Promise.resolve(listed))).toBe(listed);
    expect(h.options("tools/call", { name: "find", arguments: { region: "x" } }, undefined, TOOLS)).toBeUndefined();
    expect(h.refusal("broken")).toBeUndefined();
  });
});
