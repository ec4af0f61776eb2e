import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  classify,
  isErrorResponse,
  isJsonRpcMessage,
  isNotification,
  isRequest,
  isRequestId,
  isResponse,
  isSuccessResponse,
} from "../src/guards.js";
import type { MessageKind } from "../src/types.js";

const KINDS: readonly MessageKind[] = ["request", "notification", "success", "error", "invalid"];

/** [title, value, expected kind]. */
const CASES: Array<[string, unknown, MessageKind]> = [
  // Requests
  ["request with integer id", { jsonrpc: "2.0", id: 1, method: "tools/list" }, "request"],
  ["request with string id", { jsonrpc: "2.0", id: "a", method: "ping" }, "request"],
  ["request with empty string id", { jsonrpc: "2.0", id: "", method: "ping" }, "request"],
  ["request with negative and zero id", { jsonrpc: "2.0", id: -0, method: "ping" }, "request"],
  ["request with object params", { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "x" } }, "request"],
  ["request with array params (JSON-RPC positional)", { jsonrpc: "2.0", id: 2, method: "m", params: [1] }, "request"],
  ["request with null id", { jsonrpc: "2.0", id: null, method: "ping" }, "invalid"],
  ["request with float id", { jsonrpc: "2.0", id: 1.5, method: "ping" }, "invalid"],
  ["request with unsafe integer id", { jsonrpc: "2.0", id: 2 ** 53, method: "ping" }, "invalid"],
  ["request with boolean id", { jsonrpc: "2.0", id: true, method: "ping" }, "invalid"],
  ["request with object id", { jsonrpc: "2.0", id: {}, method: "ping" }, "invalid"],
  ["request without jsonrpc", { id: 1, method: "ping" }, "invalid"],
  ["request with jsonrpc 1.0", { jsonrpc: "1.0", id: 1, method: "ping" }, "invalid"],
  ["request with numeric jsonrpc", { jsonrpc: 2, id: 1, method: "ping" }, "invalid"],
  ["request with non-string method", { jsonrpc: "2.0", id: 1, method: 7 }, "invalid"],
  ["request with null method", { jsonrpc: "2.0", id: 1, method: null }, "invalid"],
  ["request with null params", { jsonrpc: "2.0", id: 1, method: "m", params: null }, "invalid"],
  ["request with string params", { jsonrpc: "2.0", id: 1, method: "m", params: "x" }, "invalid"],
  // Notifications
  ["notification", { jsonrpc: "2.0", method: "notifications/initialized" }, "notification"],
  ["notification with params", { jsonrpc: "2.0", method: "notifications/progress", params: { progress: 1 } }, "notification"],
  ["notification with numeric params", { jsonrpc: "2.0", method: "n", params: 3 }, "invalid"],
  ["notification with non-string method", { jsonrpc: "2.0", method: ["x"] }, "invalid"],
  // Success responses
  ["success", { jsonrpc: "2.0", id: 1, result: {} }, "success"],
  ["success with string id", { jsonrpc: "2.0", id: "x", result: { tools: [] } }, "success"],
  ["success with null id", { jsonrpc: "2.0", id: null, result: {} }, "invalid"],
  ["success without id", { jsonrpc: "2.0", result: {} }, "invalid"],
  ["success with float id", { jsonrpc: "2.0", id: 0.1, result: {} }, "invalid"],
  ["success without jsonrpc", { id: 1, result: {} }, "invalid"],
  ["both result and error", { jsonrpc: "2.0", id: 1, result: {}, error: { code: 1, message: "x" } }, "invalid"],
  ["neither result nor error", { jsonrpc: "2.0", id: 1 }, "invalid"],
  ["result plus method", { jsonrpc: "2.0", id: 1, result: {}, method: 5 }, "invalid"],
  // Error responses
  ["error response", { jsonrpc: "2.0", id: 1, error: { code: -32601, message: "Method not found" } }, "error"],
  ["error response with data", { jsonrpc: "2.0", id: "q", error: { code: 5, message: "m", data: [1] } }, "error"],
  ["error response with null id", { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } }, "error"],
  ["error response without id", { jsonrpc: "2.0", error: { code: -32700, message: "Parse error" } }, "invalid"],
  ["error without code", { jsonrpc: "2.0", id: 1, error: { message: "x" } }, "invalid"],
  ["error with string code", { jsonrpc: "2.0", id: 1, error: { code: "-32600", message: "x" } }, "invalid"],
  ["error with fractional code", { jsonrpc: "2.0", id: 1, error: { code: 1.5, message: "x" } }, "invalid"],
  ["error without message", { jsonrpc: "2.0", id: 1, error: { code: 1 } }, "invalid"],
  ["error with numeric message", { jsonrpc: "2.0", id: 1, error: { code: 1, message: 2 } }, "invalid"],
  ["error that is a string", { jsonrpc: "2.0", id: 1, error: "boom" }, "invalid"],
  ["error that is null", { jsonrpc: "2.0", id: 1, error: null }, "invalid"],
  ["error that is an array", { jsonrpc: "2.0", id: 1, error: [{ code: 1, message: "x" }] }, "invalid"],
  ["error with float id", { jsonrpc: "2.0", id: 2.5, error: { code: 1, message: "x" } }, "invalid"],
  // Not objects
  ["null", null, "invalid"],
  ["undefined", undefined, "invalid"],
  ["number", 42, "invalid"],
  ["string", '{"jsonrpc":"2.0","method":"x"}', "invalid"],
  ["boolean", true, "invalid"],
  ["empty object", {}, "invalid"],
  ["empty array", [], "invalid"],
  ["batch array of valid messages", [{ jsonrpc: "2.0", method: "x" }], "invalid"],
];

/** Which kinds each predicate accepts. */
const PREDICATES: Array<[string, (v: unknown) => boolean, readonly MessageKind[]]> = [
  ["isRequest", isRequest, ["request"]],
  ["isNotification", isNotification, ["notification"]],
  ["isSuccessResponse", isSuccessResponse, ["success"]],
  ["isErrorResponse", isErrorResponse, ["error"]],
  ["isResponse", isResponse, ["success", "error"]],
  ["isJsonRpcMessage", isJsonRpcMessage, ["request", "notification", "success", "error"]],
];

describe("classify", () => {
  it.each(CASES)("%s", (_title, value, kind) => {
    expect(classify(value)).toBe(kind);
  });
});

describe("predicates agree with classify", () => {
  for (const [name, predicate, accepts] of PREDICATES) {
    it.each(CASES)(`${name}: %s`, (_title, value, kind) => {
      expect(predicate(value)).toBe(accepts.includes(kind));
    });
  }
});

describe("isRequestId", () => {
  it.each<[unknown, boolean]>([
    [0, true],
    [-5, true],
    [Number.MAX_SAFE_INTEGER, true],
    ["", true],
    ["abc", true],
    [1.5, false],
    [Number.MAX_SAFE_INTEGER + 1, false],
    [Number.NaN, false],
    [Number.POSITIVE_INFINITY, false],
    [null, false],
    [undefined, false],
    [true, false],
    [{}, false],
    [[1], false],
  ])("%j -> %s", (value, ok) => {
    expect(isRequestId(value)).toBe(ok);
  });
});

describe("guards never throw", () => {
  const predicates: Array<(v: unknown) => boolean> = [isRequestId, ...PREDICATES.map(([, p]) => p)];

  it("any JSON value is classified as exactly one of the five kinds", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(KINDS).toContain(classify(value));
        for (const predicate of predicates) expect(typeof predicate(value)).toBe("boolean");
      }),
      { numRuns: 2000 },
    );
  });

  it("messages built from JSON-RPC-like parts (likely near misses) classify without throwing", () => {
    const part = fc.oneof(fc.constant(undefined), fc.jsonValue({ maxDepth: 2 }));
    const nearMiss = fc.record(
      {
        jsonrpc: fc.oneof(fc.constant("2.0"), part),
        id: fc.oneof(fc.integer(), fc.string(), fc.double(), fc.constant(null), part),
        method: fc.oneof(fc.string(), part),
        params: part,
        result: part,
        error: fc.oneof(fc.record({ code: fc.oneof(fc.integer(), part), message: fc.oneof(fc.string(), part) }), part),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(nearMiss, (value) => {
        const kind = classify(value);
        expect(KINDS).toContain(kind);
        // The predicates are consistent with the kind on every input.
        expect(isRequest(value)).toBe(kind === "request");
        expect(isResponse(value)).toBe(kind === "success" || kind === "error");
        expect(isJsonRpcMessage(value)).toBe(kind !== "invalid");
      }),
      { numRuns: 3000 },
    );
  });

  it("well-formed messages with any id, method, params and payload classify as their kind", () => {
    const id = fc.oneof(fc.string(), fc.maxSafeInteger());
    const params = fc.option(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 })), { nil: undefined });
    const withParams = <T extends object>(m: T, p: unknown) => (p === undefined ? m : { ...m, params: p });
    fc.assert(
      fc.property(
        id,
        fc.string(),
        params,
        fc.jsonValue({ maxDepth: 2 }),
        fc.integer(),
        fc.string(),
        (i, method, p, payload, code, text) => {
          expect(classify(withParams({ jsonrpc: "2.0", id: i, method }, p))).toBe("request");
          expect(classify(withParams({ jsonrpc: "2.0", method }, p))).toBe("notification");
          expect(classify({ jsonrpc: "2.0", id: i, result: payload })).toBe("success");
          expect(classify({ jsonrpc: "2.0", id: i, error: { code, message: text, data: payload } })).toBe("error");
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("arbitrary JS values (not only JSON) never make a guard throw", () => {
    fc.assert(
      fc.property(fc.anything({ withNullPrototype: true, withMap: true, withSet: true, withBigInt: true }), (value) => {
        expect(KINDS).toContain(classify(value));
        for (const predicate of predicates) expect(typeof predicate(value)).toBe("boolean");
      }),
      { numRuns: 1000 },
    );
  });
});
