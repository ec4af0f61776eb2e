import { describe, expect, it } from "vitest";
import { decodeHeaderValue, encodeHeaderValue, headerParams, paramHeaderValues } from "../src/index.js";

const prop = (type: unknown, header: unknown) => ({ type, "x-mcp-header": header });
const obj = (properties: Record<string, unknown>) => ({ type: "object", properties });

describe("header values (MCP 2026-07-28, Value Encoding)", () => {
  it.each([
    ["us-west1", "us-west1"],
    ["Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="],
    [" padded ", "=?base64?IHBhZGRlZCA=?="],
    ["line1\nline2", "=?base64?bGluZTEKbGluZTI=?="],
    ["=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="],
  ])("%j is sent as %s and read back", (value, header) => {
    expect(encodeHeaderValue(value)).toBe(header);
    expect(decodeHeaderValue(header)).toBe(value);
  });

  it("an encoded value that is not UTF-8, or a raw value with non-ASCII, cannot be decoded", () => {
    expect(decodeHeaderValue("=?base64?/w==?=")).toBeUndefined();
    expect(decodeHeaderValue("é")).toBeUndefined();
  });
});

describe("x-mcp-header annotations", () => {
  it("reads nested annotations reached through properties alone", () => {
    const schema = obj({
      region: prop("string", "Region"),
      opts: obj({ shard: prop("integer", "Shard"), dry: prop(["boolean", "null"], "Dry") }),
    });
    expect(headerParams(schema)).toEqual({
      params: [
        { name: "Region", path: ["region"] },
        { name: "Shard", path: ["opts", "shard"] },
        { name: "Dry", path: ["opts", "dry"] },
      ],
    });
    expect(headerParams(obj({ "x-mcp-header": { type: "string" } }))).toEqual({ params: [] });
    expect(headerParams(obj({ e: { type: "string", enum: [{ "x-mcp-header": "X" }] } }))).toEqual({ params: [] });
  });

  it.each([
    ["an empty name", obj({ a: prop("string", "") }), /non-empty/],
    ["a name that is no token", obj({ a: prop("string", "A:B") }), /token/],
    ["a name used twice, case aside", obj({ a: prop("string", "X"), b: prop("string", "x") }), /twice/],
    ["type number", obj({ a: prop("number", "N") }), /not string, integer or boolean/],
    ["no type", obj({ a: { "x-mcp-header": "N" } }), /not string, integer or boolean/],
    ["under items", obj({ a: { type: "array", items: prop("string", "I") } }), /not reachable/],
    ["under anyOf", obj({ a: { anyOf: [prop("string", "I")] } }), /not reachable/],
    ["under $defs", { ...obj({}), $defs: { d: prop("string", "D") } }, /not reachable/],
    ["on the root", { type: "object", "x-mcp-header": "Root" }, /not reachable/],
  ])("%s makes the tool invalid", (_what, schema, reason) => {
    const read = headerParams(schema);
    expect("invalid" in read && read.invalid).toMatch(reason);
  });

  it("a call's headers: strings, integers and booleans; absent, null and other types get none", () => {
    const { params } = headerParams(
      obj({ r: prop("string", "R"), n: prop("integer", "N"), b: prop("boolean", "B"), o: obj({ z: prop("string", "Z") }) }),
    ) as { params: never };
    expect(paramHeaderValues(params, { r: "é", n: -7, b: false, o: { z: null } })).toEqual({
      "Mcp-Param-R": "=?base64?w6k=?=",
      "Mcp-Param-N": "-7",
      "Mcp-Param-B": "false",
    });
    expect(paramHeaderValues(params, { n: 1.5, b: "yes", o: "flat" })).toEqual({ "Mcp-Param-B": "yes" });
  });
});
