import { describe, expect, it } from "vitest";
import {
  AbortedError,
  AuthRequiredError,
  CapabilityError,
  ConfigError,
  ConnectionLimitError,
  ConnectionLostError,
  DaemonUnavailableError,
  ForbiddenError,
  HiddenError,
  HttpError,
  McpdError,
  McpRemoteError,
  MessageTooLargeError,
  NoResponseError,
  NotFoundError,
  OAuthError,
  ParseError,
  ProtocolError,
  QueueFullError,
  RequestTimeoutError,
  ServerUnavailableError,
  SpawnError,
  TransportClosedError,
  UntrustedSocketError,
  fromWireError,
  toWireError,
} from "../src/errors.js";
import { WireCode } from "../src/wire-codes.js";

interface Row {
  error: McpdError;
  name: string;
  code: string;
  message: string;
  wireCode: number;
  /** Extra fields expected in the wire error's `data`, besides `mcpdCode`. */
  data?: Record<string, unknown>;
}

const ROWS: Row[] = [
  {
    error: new AuthRequiredError("linear", "no access token yet"),
    name: "AuthRequiredError",
    code: "MCPD_AUTH_REQUIRED",
    message: 'Server "linear" needs authorization (no access token yet): run `mcpd auth linear`',
    wireCode: -32076,
    data: { server: "linear", command: "mcpd auth linear" },
  },
  {
    error: new OAuthError("MCPD_OAUTH_TOKEN_REFUSED", "token request refused", { oauthError: "invalid_grant" }),
    name: "OAuthError",
    code: "MCPD_OAUTH_TOKEN_REFUSED",
    message: "token request refused",
    wireCode: -32067,
    data: { oauthError: "invalid_grant" },
  },
  {
    error: new OAuthError("MCPD_OAUTH_RESOURCE_MISMATCH", "metadata for another resource"),
    name: "OAuthError",
    code: "MCPD_OAUTH_RESOURCE_MISMATCH",
    message: "metadata for another resource",
    wireCode: -32067,
  },
  { error: new McpdError("MCPD_INTERNAL", "plain"), name: "McpdError", code: "MCPD_INTERNAL", message: "plain", wireCode: -32603 },
  {
    error: new TransportClosedError(),
    name: "TransportClosedError",
    code: "MCPD_TRANSPORT_CLOSED",
    message: "Transport closed",
    wireCode: -32062,
  },
  {
    error: new TransportClosedError("process exited with code 1"),
    name: "TransportClosedError",
    code: "MCPD_TRANSPORT_CLOSED",
    message: "Transport closed: process exited with code 1",
    wireCode: -32062,
  },
  {
    error: new RequestTimeoutError(5),
    name: "RequestTimeoutError",
    code: "MCPD_REQUEST_TIMEOUT",
    message: "Request timeout after 5ms",
    wireCode: -32061,
  },
  {
    error: new RequestTimeoutError(30000, "request"),
    name: "RequestTimeoutError",
    code: "MCPD_REQUEST_TIMEOUT",
    message: "Request timeout after 30000ms",
    wireCode: -32061,
  },
  {
    error: new RequestTimeoutError(5, "sse"),
    name: "RequestTimeoutError",
    code: "MCPD_REQUEST_TIMEOUT",
    message: "SSE response timeout after 5ms",
    wireCode: -32061,
  },
  {
    error: new RequestTimeoutError(5, "notify"),
    name: "RequestTimeoutError",
    code: "MCPD_REQUEST_TIMEOUT",
    message: "Notify timeout after 5ms",
    wireCode: -32061,
  },
  { error: new AbortedError(), name: "AbortError", code: "MCPD_ABORTED", message: "The operation was aborted", wireCode: -32070 },
  {
    error: new HttpError(401, "nope", { wwwAuthenticate: "Bearer", mcpAuthServer: "https://a" }),
    name: "HttpError",
    code: "MCPD_HTTP_ERROR",
    message: "HTTP 401: nope [WWW-Authenticate: Bearer] [Mcp-Auth-Server: https://a]",
    wireCode: -32067,
    data: { status: 401 },
  },
  {
    error: new HttpError(503, "busy"),
    name: "HttpError",
    code: "MCPD_HTTP_ERROR",
    message: "HTTP 503: busy",
    wireCode: -32067,
    data: { status: 503 },
  },
  {
    error: new McpRemoteError({ code: -32601, message: "Method not found" }),
    name: "McpRemoteError",
    code: "MCPD_MCP_ERROR",
    message: "MCP error -32601: Method not found",
    wireCode: -32601,
  },
  {
    error: new NoResponseError(7),
    name: "NoResponseError",
    code: "MCPD_NO_RESPONSE",
    message: "No response received for request ID 7",
    wireCode: -32062,
  },
  {
    error: new NoResponseError("abc"),
    name: "NoResponseError",
    code: "MCPD_NO_RESPONSE",
    message: "No response received for request ID abc",
    wireCode: -32062,
  },
  {
    error: new ParseError("Unexpected token"),
    name: "ParseError",
    code: "MCPD_PARSE_ERROR",
    message: "Unexpected token",
    wireCode: -32700,
  },
  {
    error: new ProtocolError("missing jsonrpc"),
    name: "ProtocolError",
    code: "MCPD_PROTOCOL_VIOLATION",
    message: "missing jsonrpc",
    wireCode: -32600,
  },
  {
    error: new MessageTooLargeError(11, 10),
    name: "MessageTooLargeError",
    code: "MCPD_MESSAGE_TOO_LARGE",
    message: "Message of 11 bytes exceeds the limit of 10 bytes",
    wireCode: -32068,
  },
  {
    error: new MessageTooLargeError(11, 10, "Line"),
    name: "MessageTooLargeError",
    code: "MCPD_MESSAGE_TOO_LARGE",
    message: "Line of 11 bytes exceeds the limit of 10 bytes",
    wireCode: -32068,
  },
  {
    error: new QueueFullError("queue of s1 is full (100)"),
    name: "QueueFullError",
    code: "MCPD_QUEUE_FULL",
    message: "queue of s1 is full (100)",
    wireCode: -32064,
  },
  {
    error: new ConfigError("servers.a.command: required"),
    name: "ConfigError",
    code: "MCPD_CONFIG_INVALID",
    message: "servers.a.command: required",
    wireCode: -32602,
  },
  {
    error: new SpawnError("npx", "ENOENT"),
    name: "SpawnError",
    code: "MCPD_SPAWN_FAILED",
    message: 'Failed to start "npx": ENOENT',
    wireCode: -32060,
  },
  {
    error: new ServerUnavailableError("fs", "failed", "crash loop"),
    name: "ServerUnavailableError",
    code: "MCPD_SERVER_UNAVAILABLE",
    message: 'Server "fs" is failed: crash loop',
    wireCode: -32060,
    data: { server: "fs", state: "failed" },
  },
  {
    error: new ServerUnavailableError("fs", "disabled"),
    name: "ServerUnavailableError",
    code: "MCPD_SERVER_UNAVAILABLE",
    message: 'Server "fs" is disabled',
    wireCode: -32060,
    data: { server: "fs", state: "disabled" },
  },
  {
    error: new NotFoundError("MCPD_UNKNOWN_SERVER", "no server x"),
    name: "NotFoundError",
    code: "MCPD_UNKNOWN_SERVER",
    message: "no server x",
    wireCode: -32602,
  },
  {
    error: new NotFoundError("MCPD_UNKNOWN_TOOL", "no tool y"),
    name: "NotFoundError",
    code: "MCPD_UNKNOWN_TOOL",
    message: "no tool y",
    wireCode: -32602,
  },
  {
    error: new NotFoundError("MCPD_UNKNOWN_PROMPT", "no prompt"),
    name: "NotFoundError",
    code: "MCPD_UNKNOWN_PROMPT",
    message: "no prompt",
    wireCode: -32602,
  },
  {
    error: new NotFoundError("MCPD_UNKNOWN_RESOURCE", "no res"),
    name: "NotFoundError",
    code: "MCPD_UNKNOWN_RESOURCE",
    message: "no res",
    wireCode: -32602,
  },
  {
    error: new CapabilityError("no tools"),
    name: "CapabilityError",
    code: "MCPD_CAPABILITY_NOT_SUPPORTED",
    message: "no tools",
    wireCode: -32069,
  },
  {
    error: new ForbiddenError("mcpd/shutdown", "mcpd/shutdown needs a control connection"),
    name: "ForbiddenError",
    code: "MCPD_FORBIDDEN",
    message: "mcpd/shutdown needs a control connection",
    wireCode: -32071,
    data: { method: "mcpd/shutdown" },
  },
  {
    error: new HiddenError("tool", "a__fail", "profile", 'Tool "a__fail" is hidden by profile "coding"', {
      profile: "coding",
      server: "a",
    }),
    name: "HiddenError",
    code: "MCPD_HIDDEN",
    message: 'Tool "a__fail" is hidden by profile "coding"',
    wireCode: -32075,
    data: { kind: "tool", name: "a__fail", by: "profile", profile: "coding", server: "a" },
  },
  {
    error: new NotFoundError("MCPD_UNKNOWN_PROFILE", 'Unknown profile "x"; configured (mcpd.profiles): coding'),
    name: "NotFoundError",
    code: "MCPD_UNKNOWN_PROFILE",
    message: 'Unknown profile "x"; configured (mcpd.profiles): coding',
    wireCode: -32602,
  },
  {
    error: new DaemonUnavailableError("mcpd is not running"),
    name: "DaemonUnavailableError",
    code: "MCPD_DAEMON_UNAVAILABLE",
    message: "mcpd is not running",
    wireCode: -32603,
  },
  {
    error: new UntrustedSocketError("Refusing to connect to mcpd: socket directory /tmp/mcpd-1000 is owned by uid 65534", {
      path: "/tmp/mcpd-1000",
      ownerUid: 65534,
    }),
    name: "UntrustedSocketError",
    code: "MCPD_UNTRUSTED_SOCKET",
    message: "Refusing to connect to mcpd: socket directory /tmp/mcpd-1000 is owned by uid 65534",
    wireCode: -32603,
    data: { path: "/tmp/mcpd-1000", ownerUid: 65534 },
  },
  {
    error: new ConnectionLostError(),
    name: "ConnectionLostError",
    code: "MCPD_CONNECTION_LOST",
    message: "Connection to mcpd lost",
    wireCode: -32062,
  },
  {
    error: new ConnectionLimitError(
      "MCPD_TOO_MANY_CONNECTIONS",
      "Too many connections: mcpd accepts at most 3 at once (mcpd.maxConnections)",
    ),
    name: "ConnectionLimitError",
    code: "MCPD_TOO_MANY_CONNECTIONS",
    message: "Too many connections: mcpd accepts at most 3 at once (mcpd.maxConnections)",
    wireCode: -32072,
  },
  {
    error: new ConnectionLimitError("MCPD_BUFFER_BUDGET_EXCEEDED", "over budget"),
    name: "ConnectionLimitError",
    code: "MCPD_BUFFER_BUDGET_EXCEEDED",
    message: "over budget",
    wireCode: -32073,
  },
  {
    error: new ConnectionLimitError("MCPD_LINE_TIMEOUT", "line too slow"),
    name: "ConnectionLimitError",
    code: "MCPD_LINE_TIMEOUT",
    message: "line too slow",
    wireCode: -32074,
  },
];

describe("every error class", () => {
  it.each(ROWS.map((r) => [r.message, r] as const))("%s", (_m, row) => {
    const { error } = row;
    expect(error).toBeInstanceOf(McpdError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(row.name);
    expect(error.code).toBe(row.code);
    expect(error.message).toBe(row.message);
    expect(error.wireCode).toBe(row.wireCode);
    expect(String(error)).toBe(`${row.name}: ${row.message}`);

    const wire = toWireError(error);
    if (error instanceof McpRemoteError) {
      // Peer errors are forwarded exactly as received: no mcpd data added.
      expect(wire).toEqual({ code: row.wireCode, message: "Method not found" });
      expect(fromWireError(wire)).toBeInstanceOf(McpRemoteError);
      return;
    }
    expect(wire).toEqual({ code: row.wireCode, message: row.message, data: { ...row.data, mcpdCode: row.code } });
    // The stable code survives the round trip through the wire.
    const back = fromWireError(wire);
    expect(back).toBeInstanceOf(McpdError);
    expect(back.code).toBe(row.code);
    expect(back.message).toBe(row.message);
    expect(back.wireCode).toBe(row.wireCode);
    expect(toWireError(back)).toEqual(wire);
  });

  it("covers every error class the module exports", async () => {
    const mod = await import("../src/errors.js");
    const classes = Object.values(mod).filter(
      (v): v is typeof McpdError => typeof v === "function" && (v === McpdError || v.prototype instanceof McpdError),
    );
    const covered = new Set(ROWS.map((r) => r.error.constructor));
    expect(classes.filter((c) => !covered.has(c)).map((c) => c.name)).toEqual([]);
  });

  it("keeps cause and class-specific fields", () => {
    const cause = new Error("ECONNRESET");
    expect(new TransportClosedError("socket hang up", { cause }).cause).toBe(cause);
    expect(new TransportClosedError("x").reason).toBe("x");
    expect(new ParseError("bad", { cause }).cause).toBe(cause);
    expect(new ParseError("bad").cause).toBeUndefined();
    const timeout = new RequestTimeoutError(250, "sse");
    expect([timeout.timeoutMs, timeout.kind]).toEqual([250, "sse"]);
    const http = new HttpError(401, "nope", { wwwAuthenticate: "Bearer" });
    expect([http.status, http.body, http.wwwAuthenticate, http.mcpAuthServer]).toEqual([401, "nope", "Bearer", undefined]);
    expect(new NoResponseError(7).requestId).toBe(7);
    expect(new MessageTooLargeError(11, 10).limitBytes).toBe(10);
    expect(new SpawnError("uvx", "EACCES").command).toBe("uvx");
    const untrusted = new UntrustedSocketError("no", { path: "/tmp/mcpd-1000/mcpd.sock", ownerUid: 65534 });
    expect([untrusted.path, untrusted.ownerUid]).toEqual(["/tmp/mcpd-1000/mcpd.sock", 65534]);
    const remote = new McpRemoteError({ code: -32602, message: "bad", data: { field: "x" } });
    expect([remote.rpcCode, remote.rpcMessage, remote.data]).toEqual([-32602, "bad", { field: "x" }]);
  });
});

describe("toWireError", () => {
  it("forwards a peer error unchanged, data included", () => {
    const peer = { code: -32042, message: "URL elicitation required", data: { elicitations: [{ url: "https://x" }] } };
    expect(toWireError(new McpRemoteError(peer))).toEqual(peer);
    expect(toWireError(fromWireError(peer))).toEqual(peer);
  });

  it("never lets an error's own data mask its mcpdCode", () => {
    const err = new McpdError("MCPD_QUEUE_FULL", "m", { wireCode: WireCode.QueueFull, data: { mcpdCode: "MCPD_FAKE", extra: 1 } });
    expect(toWireError(err)).toEqual({ code: -32064, message: "m", data: { mcpdCode: "MCPD_QUEUE_FULL", extra: 1 } });
  });

  it.each<[string, unknown, unknown]>([
    ["a plain Error", new Error("boom"), { code: -32603, message: "boom" }],
    ["a TypeError", new TypeError("x is not a function"), { code: -32603, message: "x is not a function" }],
    ["a string", "bad thing", { code: -32603, message: "bad thing" }],
    ["undefined", undefined, { code: -32603, message: "Internal error" }],
    ["null", null, { code: -32603, message: "Internal error" }],
    ["a number", 42, { code: -32603, message: "Internal error" }],
    ["a plain object", { code: 1, message: "not an error" }, { code: -32603, message: "Internal error" }],
    [
      "a DOMException AbortError",
      new DOMException("This operation was aborted", "AbortError"),
      { code: -32070, message: "This operation was aborted", data: { mcpdCode: "MCPD_ABORTED" } },
    ],
  ])("maps %s", (_title, input, wire) => {
    expect(toWireError(input)).toEqual(wire);
  });
});

describe("fromWireError", () => {
  it("turns an error without mcpdCode into McpRemoteError with the message clients match (MCP error <code>: <message>)", () => {
    const err = fromWireError({ code: -32601, message: "Method not found" });
    expect(err).toBeInstanceOf(McpRemoteError);
    expect(err.message).toBe("MCP error -32601: Method not found");
    expect(err.code).toBe("MCPD_MCP_ERROR");
  });

  it("ignores a non-string mcpdCode", () => {
    expect(fromWireError({ code: -32603, message: "x", data: { mcpdCode: 5 } })).toBeInstanceOf(McpRemoteError);
    expect(fromWireError({ code: -32603, message: "x", data: "MCPD_X" })).toBeInstanceOf(McpRemoteError);
  });

  it("keeps the wire error as the cause", () => {
    const err = fromWireError({ code: -32061, message: "Request timeout after 5ms", data: { mcpdCode: "MCPD_REQUEST_TIMEOUT" } });
    expect(err.code).toBe("MCPD_REQUEST_TIMEOUT");
    expect(err.cause).toBeInstanceOf(McpRemoteError);
  });
});

describe("WireCode", () => {
  const MCP_RESERVED = [-32000, -32001, -32002, -32042];
  const STANDARD = { ParseError: -32700, InvalidRequest: -32600, MethodNotFound: -32601, InvalidParams: -32602, InternalError: -32603 };

  it("has the standard JSON-RPC codes", () => {
    expect(WireCode).toMatchObject(STANDARD);
  });

  it("keeps mcpd's block unique, inside -32000..-32099 and clear of the codes MCP uses", () => {
    const own = Object.entries(WireCode).filter(([name]) => !(name in STANDARD));
    expect(own.length).toBeGreaterThan(0);
    const values = Object.values(WireCode);
    expect(new Set(values).size).toBe(values.length);
    for (const [name, code] of own) {
      expect(Number.isInteger(code), name).toBe(true);
      expect(code, name).toBeLessThanOrEqual(-32000);
      expect(code, name).toBeGreaterThanOrEqual(-32099);
      expect(MCP_RESERVED, name).not.toContain(code);
      // docs/errors.md documents mcpd's block as -32060..-32079 (the codes after the last one in use reserved).
      expect(code, name).toBeGreaterThanOrEqual(-32079);
      expect(code, name).toBeLessThanOrEqual(-32060);
    }
  });

  it("every error's wire code is a declared wire code (or a peer's, forwarded)", () => {
    const declared = new Set<number>(Object.values(WireCode));
    for (const row of ROWS) {
      if (row.error instanceof McpRemoteError) continue;
      expect(declared.has(row.wireCode), row.name).toBe(true);
    }
  });
});
