import { describe, expect, it } from "vitest";
import { HttpError, McpRemoteError } from "@mcpd/protocol";
import { inBandError, modernHeaders } from "../../src/http/modern-headers.js";

const envelope = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} };

describe("2026 headers over Streamable HTTP", () => {
  it("a request whose _meta claims 2026-07-28 carries MCP-Protocol-Version, Mcp-Method and, for tools/call, prompts/get and resources/read, Mcp-Name", () => {
    expect(modernHeaders({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", _meta: envelope } })).toEqual({
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": "echo",
    });
    expect(
      modernHeaders({ jsonrpc: "2.0", id: 2, method: "resources/read", params: { uri: "file:///a b", _meta: envelope } }),
    ).toMatchObject({
      "mcp-name": "file:///a b",
    });
    expect(modernHeaders({ jsonrpc: "2.0", id: 3, method: "tools/list", params: { _meta: envelope } })).toEqual({
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/list",
    });
    // A 2025 request (no envelope) gets none: the session's headers are used.
    expect(modernHeaders({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "echo" } })).toBeUndefined();
  });

  it("a name that is not plain header-safe ASCII is sent Base64-encoded", () => {
    const call = (name: string) => modernHeaders({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, _meta: envelope } });
    expect(call("plain name")?.["mcp-name"]).toBe("plain name");
    expect(call("héllo")?.["mcp-name"]).toBe(`=?base64?${Buffer.from("héllo").toString("base64")}?=`);
    expect(call(" padded")?.["mcp-name"]).toMatch(/^=\?base64\?/);
    expect(call("=?base64?abc?=")?.["mcp-name"]).toMatch(/^=\?base64\?PT9i/);
  });

  it("a 2026 request also carries the Mcp-Param-* headers the layer above gives for it; a 2025 one does not", () => {
    const params = (method: string) => (method === "tools/call" ? { "Mcp-Param-Region": "eu" } : undefined);
    const call = { jsonrpc: "2.0" as const, id: 1, method: "tools/call", params: { name: "echo", _meta: envelope } };
    expect(modernHeaders(call, params)).toEqual({
      "Mcp-Param-Region": "eu",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": "echo",
    });
    expect(modernHeaders({ ...call, method: "tools/list" }, params)).not.toHaveProperty("Mcp-Param-Region");
    expect(modernHeaders({ ...call, params: { name: "echo" } }, params)).toBeUndefined();
  });

  it("a 400 or 404 whose body is a JSON-RPC error for the request comes back in-band; other bodies and statuses do not", () => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 5, error: { code: -32602, message: "bad", data: { x: 1 } } });
    const e = inBandError(new HttpError(400, body), 5);
    expect(e).toBeInstanceOf(McpRemoteError);
    expect(e?.toJSON()).toEqual({ code: -32602, message: "bad", data: { x: 1 } });
    expect(
      inBandError(new HttpError(404, JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32601, message: "no" } })), 5)?.rpcCode,
    ).toBe(-32601);
    expect(inBandError(new HttpError(400, body), 6)).toBeUndefined();
    expect(inBandError(new HttpError(400, "Bad Request"), 5)).toBeUndefined();
    expect(inBandError(new HttpError(500, body), 5)).toBeUndefined();
  });
});
