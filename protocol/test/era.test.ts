import { describe, expect, it } from "vitest";
import {
  LATEST_PROTOCOL_VERSION,
  MODERN_CODE_OF,
  MODERN_PROTOCOL_VERSIONS,
  claimedVersion,
  readEnvelope,
  toModernError,
  withoutEnvelope,
  SUPPORTED_PROTOCOL_VERSIONS,
  WireCode,
  classifyProbeError,
  envelopeVersion,
  eraOf,
  isModernVersion,
  isReservedModernCode,
  withEnvelope,
} from "../src/index.js";

describe("eras", () => {
  it("puts every 2025 revision mcpd speaks in the 2025 era and 2026-07-28 in the 2026 era", () => {
    for (const v of SUPPORTED_PROTOCOL_VERSIONS) expect(eraOf(v)).toBe("2025");
    expect(eraOf("2026-07-28")).toBe("2026");
    expect(eraOf("2027-01-01")).toBe("2026");
    expect(isModernVersion("2026-07-28")).toBe(true);
    expect(isModernVersion(LATEST_PROTOCOL_VERSION)).toBe(false);
    expect(isModernVersion("2027-01-01")).toBe(false);
  });

  it("knows which of mcpd's own wire codes fall in the range the 2026 era reserves", () => {
    expect(isReservedModernCode(-32022)).toBe(true);
    expect(isReservedModernCode(WireCode.ServerUnavailable)).toBe(true);
    expect(isReservedModernCode(-32002)).toBe(false);
    expect(isReservedModernCode(WireCode.InvalidParams)).toBe(false);
  });
});

describe("the 2026 envelope and the era probe", () => {
  it("withEnvelope puts the caller's capabilities, info and log level in _meta, else the fallback's, keeping the request's own _meta keys", () => {
    const own = { clientCapabilities: {}, clientInfo: { name: "mcpd", version: "1" } };
    const caller = { clientCapabilities: { roots: {} }, clientInfo: { name: "agent", version: "2" }, logLevel: "debug" };
    const params = { name: "t", _meta: { progressToken: 7 } };
    expect(withEnvelope(params, "2026-07-28", caller, own)).toEqual({
      name: "t",
      _meta: {
        progressToken: 7,
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": { roots: {} },
        "io.modelcontextprotocol/clientInfo": { name: "agent", version: "2" },
        "io.modelcontextprotocol/logLevel": "debug",
      },
    });
    expect(params._meta).toEqual({ progressToken: 7 });
    const mine = withEnvelope(undefined, "2026-07-28", undefined, own);
    expect(mine._meta).toEqual({
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {},
      "io.modelcontextprotocol/clientInfo": { name: "mcpd", version: "1" },
    });
    expect(envelopeVersion(mine)).toBe("2026-07-28");
    expect(envelopeVersion({ _meta: { "io.modelcontextprotocol/protocolVersion": "2025-11-25" } })).toBeUndefined();
    expect(envelopeVersion(undefined)).toBeUndefined();
  });

  it("classifyProbeError: recognised 2026 errors mean 2026, any other error 2025, a -32022 naming only 2025 versions (or none) too", () => {
    expect(classifyProbeError({ code: -32022, data: { supported: ["2026-07-28"] } })).toEqual({ era: "2026", supported: ["2026-07-28"] });
    expect(classifyProbeError({ code: -32020 })).toEqual({ era: "2026" });
    expect(classifyProbeError({ code: -32021 })).toEqual({ era: "2026" });
    expect(classifyProbeError({ code: -32022 })).toEqual({ era: "2025" });
    expect(classifyProbeError({ code: -32022, data: { supported: ["2025-06-18"] } })).toEqual({ era: "2025", supported: ["2025-06-18"] });
    for (const code of [-32601, -32602, -32600, -32000, -32001, -32603]) expect(classifyProbeError({ code }).era).toBe("2025");
  });
});

describe("2026 envelopes and error codes", () => {
  const meta = (m: Record<string, unknown>) => ({ _meta: m });
  const V = "io.modelcontextprotocol/protocolVersion";
  const C = "io.modelcontextprotocol/clientCapabilities";

  it("reads a request's envelope: -32022 for a version mcpd does not serve, -32602 for a malformed one", () => {
    expect(claimedVersion({ name: "x" })).toBeUndefined();
    expect(claimedVersion(meta({ [V]: "2026-07-28" }))).toBe("2026-07-28");
    expect(readEnvelope(meta({ [V]: "2026-07-28", [C]: {}, "io.modelcontextprotocol/logLevel": "info" }))).toEqual({
      protocolVersion: "2026-07-28",
      clientCapabilities: {},
      logLevel: "info",
    });
    expect(readEnvelope(meta({ [V]: "1900-01-01", [C]: {} }))).toEqual({
      error: {
        code: -32022,
        message: "Unsupported protocol version: 1900-01-01",
        data: { supported: [...MODERN_PROTOCOL_VERSIONS], requested: "1900-01-01" },
      },
    });
    expect((readEnvelope(meta({ [V]: "2026-07-28" })) as any).error.code).toBe(-32602);
    expect((readEnvelope(meta({ [V]: "2026-07-28", [C]: {}, "io.modelcontextprotocol/logLevel": "loud" })) as any).error.code).toBe(-32602);
  });

  it("strips only the envelope's keys from what goes to a server", () => {
    expect(withoutEnvelope({ name: "t", _meta: { [V]: "2026-07-28", [C]: {}, traceparent: "00-ab", progressToken: 1 } })).toEqual({
      name: "t",
      _meta: { traceparent: "00-ab", progressToken: 1 },
    });
    expect(withoutEnvelope({ name: "t", _meta: { [V]: "2026-07-28" } })).toEqual({ name: "t" });
    // A member named __proto__ (JSON.parse makes it an own member) stays a member, in params and in _meta.
    const odd = withoutEnvelope(JSON.parse(`{"__proto__":{"a":1},"_meta":{"${V}":"2026-07-28","__proto__":{"b":2}}}`));
    expect(JSON.stringify(odd)).toBe('{"__proto__":{"a":1},"_meta":{"__proto__":{"b":2}}}');
  });

  it("maps every one of mcpd's codes to a standard one for 2026 clients, keeping its own in data", () => {
    for (const code of Object.values(WireCode)) {
      if (!isReservedModernCode(code)) continue;
      expect(MODERN_CODE_OF[code], `code ${code}`).toBeDefined();
      const mapped = toModernError({ code, message: "m", data: { mcpdCode: "MCPD_X" } });
      expect(isReservedModernCode(mapped.code)).toBe(false);
      expect(mapped.data).toEqual({ mcpdCode: "MCPD_X", mcpdWireCode: code });
    }
    expect(toModernError({ code: WireCode.Hidden, message: "hidden" }).code).toBe(WireCode.InvalidParams);
    expect(toModernError({ code: -32022, message: "u" })).toEqual({ code: -32022, message: "u" });
    expect(toModernError({ code: -32602, message: "p" })).toEqual({ code: -32602, message: "p" });
  });

  it("gives 2026 clients none of the codes 2026-07-28 retired: a 2025 server's -32002 becomes -32602, -32042 becomes -32603", () => {
    expect(toModernError({ code: -32002, message: "Resource not found: x", data: { uri: "x" } })).toEqual({
      code: -32602,
      message: "Resource not found: x",
      data: { uri: "x", mcpdWireCode: -32002 },
    });
    expect(toModernError({ code: -32042, message: "url" })).toEqual({ code: -32603, message: "url", data: { mcpdWireCode: -32042 } });
    expect(toModernError({ code: -32001, message: "t" })).toEqual({ code: -32001, message: "t" });
  });
});
