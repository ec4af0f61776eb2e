import { describe, expect, it } from "vitest";
import {
  LATEST_PROTOCOL_VERSION,
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
