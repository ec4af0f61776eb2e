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
  eraOf,
  isModernVersion,
  isReservedModernCode,
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
});
