import { describe, expect, it } from "vitest";
import { paramHeadersOf } from "../src/index.js";

const schema = (properties: Record<string, unknown>) => ({ type: "object", properties });

describe("paramHeadersOf (x-mcp-header annotations)", () => {
  it("lists the annotated string, integer and boolean properties, in order", () => {
    const found = paramHeadersOf(
      schema({
        region: { type: "string", "x-mcp-header": "Region" },
        query: { type: "string" },
        priority: { type: "integer", "x-mcp-header": "Priority" },
        verbose: { type: "boolean", "x-mcp-header": "Verbose" },
      }),
    );
    expect(found).toEqual({
      headers: [
        { property: "region", header: "Region" },
        { property: "priority", header: "Priority" },
        { property: "verbose", header: "Verbose" },
      ],
    });
    expect(paramHeadersOf(undefined)).toEqual({ headers: [] });
  });

  it.each([
    ["an empty name", { v: { type: "string", "x-mcp-header": "" } }, /non-empty string/],
    ["a name that is no string", { v: { type: "string", "x-mcp-header": 7 } }, /non-empty string/],
    ["a space", { v: { type: "string", "x-mcp-header": "My Region" } }, /not a valid header name/],
    ["a colon", { v: { type: "string", "x-mcp-header": "Region:Primary" } }, /not a valid header name/],
    ["non-ASCII", { v: { type: "string", "x-mcp-header": "Région" } }, /not a valid header name/],
    ["a control character", { v: { type: "string", "x-mcp-header": "Region\t1" } }, /not a valid header name/],
    ["a number property", { v: { type: "number", "x-mcp-header": "Score" } }, /string, integer and boolean/],
    ["an object property", { v: { type: "object", "x-mcp-header": "Data" } }, /string, integer and boolean/],
    ["an array property", { v: { type: "array", "x-mcp-header": "Items" } }, /string, integer and boolean/],
    ["a null property", { v: { type: "null", "x-mcp-header": "Nil" } }, /string, integer and boolean/],
    [
      "a name twice, in other case",
      { a: { type: "string", "x-mcp-header": "MyField" }, b: { type: "string", "x-mcp-header": "myfield" } },
      /"a" and "b" name the same x-mcp-header/,
    ],
  ])("refuses %s", (_what, properties, why) => {
    const found = paramHeadersOf(schema(properties));
    expect("invalid" in found && found.invalid).toMatch(why);
  });
});
