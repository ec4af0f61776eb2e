/**
 * checkTimeoutMs(): the one check of a timeout given in ms (it was written in the peer, the pipe transport,
 * the HTTP and WebSocket configs, callMCP, the stdio config and the client SDK, each in its own words).
 */
import { describe, expect, it } from "vitest";
import { ConfigError } from "../src/errors.js";
import { checkTimeoutMs, MAX_TIMER_MS, type TimeoutRule } from "../src/timers.js";

describe("checkTimeoutMs", () => {
  it.each<[TimeoutRule, unknown]>([
    ["non-negative", 0],
    ["non-negative", 1],
    ["non-negative", 1.5],
    ["non-negative", MAX_TIMER_MS],
    ["non-negative", MAX_TIMER_MS + 1],
    ["non-negative", Number.POSITIVE_INFINITY],
    ["positive", 1],
    ["positive", 30_000],
    ["positive", Number.POSITIVE_INFINITY],
  ])("accepts, under %s, %s and returns it", (rule, value) => {
    expect(checkTimeoutMs(value, "timeout", rule)).toBe(value);
  });

  it.each<[TimeoutRule, unknown, string]>([
    ["non-negative", -1, "timeout must be a number of ms >= 0 (0 or Infinity for none), got -1"],
    ["non-negative", Number.NaN, "timeout must be a number of ms >= 0 (0 or Infinity for none), got NaN"],
    ["non-negative", Number.NEGATIVE_INFINITY, "timeout must be a number of ms >= 0 (0 or Infinity for none), got -Infinity"],
    ["non-negative", "100", "timeout must be a number of ms >= 0 (0 or Infinity for none), got 100"],
    ["non-negative", null, "timeout must be a number of ms >= 0 (0 or Infinity for none), got null"],
    ["non-negative", undefined, "timeout must be a number of ms >= 0 (0 or Infinity for none), got undefined"],
    ["positive", 0, "timeout must be a positive number of ms, got 0"],
    ["positive", -5, "timeout must be a positive number of ms, got -5"],
    ["positive", Number.NaN, "timeout must be a positive number of ms, got NaN"],
    ["positive", "1", "timeout must be a positive number of ms, got 1"],
  ])("refuses, under %s, %s with one wording", (rule, value, message) => {
    expect(() => checkTimeoutMs(value, "timeout", rule)).toThrow(new RangeError(message));
  });

  it("is non-negative by default, names what it checks and throws the error class it is given", () => {
    expect(() => checkTimeoutMs(-1, 'request "ping": timeout')).toThrow(
      'request "ping": timeout must be a number of ms >= 0 (0 or Infinity for none), got -1',
    );
    const err = (() => {
      try {
        checkTimeoutMs(-1, 'HTTP transport: "timeout"', "non-negative", ConfigError);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect(err).toMatchObject({ code: "MCPD_CONFIG_INVALID" });
    expect(() => checkTimeoutMs(0, "connectTimeout", "positive", TypeError)).toThrow(TypeError);
  });
});
