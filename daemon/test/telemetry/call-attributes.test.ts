/** A relayed request's span, as the MCP semantic conventions name it, and W3C traceparent read and written. */
import { McpdError, RequestTimeoutError } from "@mcpd/protocol";
import { describe, expect, it } from "vitest";
import {
  callAttributes,
  callOutcome,
  formatTraceparent,
  parseTraceparent,
  sentAttributes,
  spanName,
} from "../../src/telemetry/call-attributes.js";

describe("traceparent", () => {
  it("reads version 00 and later versions' first fields, and writes version 00", () => {
    const p = parseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    expect(p).toEqual({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", flags: 1 });
    expect(formatTraceparent(p as NonNullable<typeof p>)).toBe("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    expect(parseTraceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-later")?.flags).toBe(0);
  });

  it.each([
    ["not a string", 42],
    ["malformed", "00-4bf92f35-00f067aa0ba902b7-01"],
    ["upper case", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"],
    ["version ff", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"],
    ["version 00 with more fields", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x"],
    ["an all-zero trace id", "00-00000000000000000000000000000000-00f067aa0ba902b7-01"],
    ["an all-zero span id", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"],
  ])("is not read when %s", (_why, value) => {
    expect(parseTraceparent(value)).toBeUndefined();
  });
});

describe("a relayed request's span", () => {
  it("is named `{method} {tool or prompt}`, or the method alone", () => {
    expect(spanName("tools/call", { name: "echo" })).toBe("tools/call echo");
    expect(spanName("prompts/get", { name: "greet" })).toBe("prompts/get greet");
    expect(spanName("resources/read", { uri: "file:///a" })).toBe("resources/read");
    expect(spanName("tools/call", undefined)).toBe("tools/call");
  });

  it("carries the method, the server, and the tool, prompt or resource", () => {
    expect(callAttributes("fx", "tools/call", { name: "echo" })).toEqual({
      "mcp.method.name": "tools/call",
      "mcpd.server": "fx",
      "gen_ai.tool.name": "echo",
      "gen_ai.operation.name": "execute_tool",
    });
    expect(callAttributes("fx", "prompts/get", { name: "greet" })).toMatchObject({ "gen_ai.prompt.name": "greet" });
    expect(callAttributes("fx", "resources/read", { uri: "file:///a" })).toMatchObject({ "mcp.resource.uri": "file:///a" });
  });

  it("names the request's upstream id as a string, the server's session only when there is one, its protocol version and transport", () => {
    expect(sentAttributes(7, { sessionId: "abc", protocolVersion: "2025-11-25", transport: "http" })).toEqual({
      "jsonrpc.request.id": "7",
      "mcp.session.id": "abc",
      "mcp.protocol.version": "2025-11-25",
      "network.transport": "tcp",
    });
    expect(sentAttributes("r-1", { transport: "stdio" })).toEqual({ "jsonrpc.request.id": "r-1", "network.transport": "pipe" });
    expect(sentAttributes(0, { sessionId: "" })).toEqual({ "jsonrpc.request.id": "0" });
  });

  it("ends ok, as a tool error, as an error with its JSON-RPC code, or cancelled", () => {
    expect(callOutcome(undefined, { content: [] })).toEqual({ outcome: "ok", attributes: {} });
    expect(callOutcome(undefined, { content: [], isError: true })).toEqual({
      outcome: "tool_error",
      attributes: { "error.type": "tool_error" },
    });
    const timeout = callOutcome(new RequestTimeoutError(30_000), undefined);
    expect(timeout.outcome).toBe("error");
    expect(timeout.attributes["mcpd.error.code"]).toBe("MCPD_REQUEST_TIMEOUT");
    expect(timeout.attributes["error.type"]).toMatch(/^-\d+$/);
    expect(timeout.message).toBe("Request timeout after 30000ms");
    expect(callOutcome(new McpdError("MCPD_ABORTED", "client went away"), undefined).outcome).toBe("cancelled");
  });
});
