/**
 * What `mcpd connect` counts as waiting for the daemon (bridge-in-flight.ts): a request of its client until
 * the daemon answers it. A long answer streams past unparsed (parsing it cost the bridge about 2 ms per MiB)
 * and is recognised by the id at its start.
 */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { BridgeInFlight } from "../../src/cli/bridge-in-flight.js";
import { CLI_DEFAULTS } from "../../src/cli/cli-defaults.js";

const line = (m: object): Buffer => Buffer.from(`${JSON.stringify(m)}\n`);

/** The answers `answerAll` writes, parsed. */
function answered(t: BridgeInFlight): any[] {
  const out = new PassThrough();
  let text = "";
  out.on("data", (d: Buffer) => (text += d.toString()));
  t.answerAll(out, "gone");
  return text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

describe("BridgeInFlight", () => {
  it("counts a request until its answer, short or longer than the lines it parses, in chunks", () => {
    const t = new BridgeInFlight();
    for (const id of [1, "1", 2, 3]) t.client(line({ jsonrpc: "2.0", id, method: "tools/call", params: {} }));
    const pad = "x".repeat(CLI_DEFAULTS.connectTapMaxLineBytes * 2);
    t.daemon(line({ jsonrpc: "2.0", id: 1, result: {} }));
    const big = line({ jsonrpc: "2.0", id: "1", result: { content: [{ type: "text", text: pad }] } });
    for (let i = 0; i < big.length; i += 4096) t.daemon(big.subarray(i, i + 4096));
    // A request the daemon sends the client (same id as the client's 2) is no answer.
    t.daemon(line({ jsonrpc: "2.0", id: 2, method: "sampling/createMessage", params: {} }));
    expect(answered(t).map((a) => [a.id, a.error.data.mcpdCode])).toEqual([
      [2, "MCPD_CONNECTION_LOST"],
      [3, "MCPD_CONNECTION_LOST"],
    ]);
  });
});
