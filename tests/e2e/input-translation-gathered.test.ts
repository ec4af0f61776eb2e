/**
 * A 2025-era server that asks a 2026-era client for several things at once (elicitation, sampling and
 * roots sent together, as the conformance fixture's test_input_required_result_multiple_inputs does).
 * Regression: mcpd answered the call `input_required` with the first request only, having let go of the
 * call, so the other two found no call (roots got the configured roots, sampling -32066) and the server's
 * tool failed (conformance 2026-07-28 input-required-result-multiple-input-requests through translation).
 * Now requests that come close together (within mcpd's gather window) go out together, each under its own
 * key, and the retry's answers reach each.
 */
import { afterEach, describe, expect, it } from "vitest";
import { CONFORMANCE_FIXTURE } from "../conformance/server-scenarios.js";
import { type RawClient, startTestDaemon, type TestDaemon } from "./harness.js";

let daemon: TestDaemon | undefined;
let client: RawClient | undefined;

afterEach(async () => {
  client?.close();
  client = undefined;
  await daemon?.stop();
  daemon = undefined;
});

const envelope = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": { elicitation: {}, sampling: {}, roots: {} },
  "io.modelcontextprotocol/clientInfo": { name: "raw-modern", version: "1" },
};
const call = (extra: Record<string, unknown> = {}) => ({
  name: "test_input_required_result_multiple_inputs",
  arguments: {},
  _meta: envelope,
  ...extra,
});

describe("a 2025-era server's requests sent together, for a 2026-era client", () => {
  it("go out in one input_required, under mcpd, mcpd-2 and mcpd-3, and the retry answers each (regression: only the first)", async () => {
    daemon = await startTestDaemon({ cf: { command: process.execPath, args: [CONFORMANCE_FIXTURE, "--stdio", "--era", "2025"] } });
    const r = (client = await daemon.raw());
    expect((await r.request("mcpd/select", { server: "cf" })).error).toBeUndefined();

    const first = await r.request("tools/call", call());
    expect(first.result).toMatchObject({ resultType: "input_required" });
    const asked = first.result.inputRequests as Record<string, { method: string }>;
    expect(Object.fromEntries(Object.entries(asked).map(([key, req]) => [key, req.method]))).toEqual({
      mcpd: "elicitation/create",
      "mcpd-2": "sampling/createMessage",
      "mcpd-3": "roots/list",
    });

    const inputResponses = {
      mcpd: { action: "accept", content: { name: "Ada" } },
      "mcpd-2": { role: "assistant", content: { type: "text", text: "hi" }, model: "m" },
      "mcpd-3": { roots: [{ uri: "file:///ada" }] },
    };
    const done = await r.request("tools/call", call({ inputResponses, requestState: first.result.requestState }));
    expect(done.result?.content?.[0]?.text).toBe("name=Ada, greeting=hi, roots=1");
  });
});
