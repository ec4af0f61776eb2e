import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { McpdError } from "@mcpd/protocol";
import { McpdTransport } from "../src/mcpd-transport.js";
import { type JsonlPeer, startPeer, waitFor } from "./jsonl-peer.js";

let peer: JsonlPeer;
let cleanup: () => Promise<void>;
const transports: McpdTransport[] = [];

beforeEach(async () => {
  ({ peer, cleanup } = await startPeer());
});
afterEach(async () => {
  await Promise.all(transports.splice(0).map((t) => t.close()));
  await cleanup();
});

function transport(options: ConstructorParameters<typeof McpdTransport>[0] = {}): McpdTransport {
  const t = new McpdTransport({ socketPath: peer.socketPath, ...options });
  transports.push(t);
  return t;
}

describe("McpdTransport", () => {
  it("selects the view under a string id, swallows the answer, then passes every line through unchanged", async () => {
    peer.methods["mcpd/select"] = (params, conn, msg) => {
      // A message the daemon might send before answering select must still reach onmessage, after it.
      conn.send({ method: "notifications/message", params: { level: "info", data: "early" } });
      conn.send({ id: msg.id, result: { view: "server", server: params.server } });
      return undefined;
    };
    const t = transport({ server: "github" });
    const got: unknown[] = [];
    t.onmessage = (m) => got.push(m);
    await t.start();
    const select = peer.messages("mcpd/select")[0]!;
    expect(typeof select.id).toBe("string");
    expect(select.params).toEqual({ server: "github" });
    await t.send({ jsonrpc: "2.0", id: 1, method: "ping" });
    await waitFor(() => got.length === 2, "two messages");
    expect(got).toEqual([
      { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "early" } },
      { jsonrpc: "2.0", id: 1, result: {} },
    ]);
    expect(t.sessionId).toBeUndefined();
    t.setProtocolVersion("2025-06-18");
    expect(t.protocolVersion).toBe("2025-06-18");
  });

  it("fails start() with the select error (unknown server) and closes", async () => {
    peer.methods["mcpd/select"] = () => ({
      error: { code: -32602, message: 'Unknown server "x"', data: { mcpdCode: "MCPD_UNKNOWN_SERVER" } },
    });
    const t = transport({ server: "x" });
    let closed = 0;
    t.onclose = () => closed++;
    const err = (await t.start().catch((e: unknown) => e)) as McpdError;
    expect(err.code).toBe("MCPD_UNKNOWN_SERVER");
    await waitFor(() => closed === 1, "onclose");
  });

  it("fails start() with MCPD_DAEMON_UNAVAILABLE when there is no daemon", async () => {
    const t = new McpdTransport({ socketPath: `${peer.socketPath}.missing` });
    const err = (await t.start().catch((e: unknown) => e)) as McpdError;
    expect(err.code).toBe("MCPD_DAEMON_UNAVAILABLE");
    expect(err.message).toContain("mcpd start");
  });

  it("calls onclose once when the daemon goes away, and send() then rejects with MCPD_CONNECTION_LOST", async () => {
    const t = transport();
    let closed = 0;
    t.onclose = () => closed++;
    await t.start();
    await peer.stop();
    await waitFor(() => closed === 1, "onclose");
    const err = (await t.send({ jsonrpc: "2.0", id: 2, method: "ping" }).catch((e: unknown) => e)) as McpdError;
    expect(err.code).toBe("MCPD_CONNECTION_LOST");
    await t.close();
    expect(closed).toBe(1);
  });

  it("reports a line that is not JSON through onerror and keeps going", async () => {
    peer.methods.junk = (_p, conn) => {
      conn.writeRaw("not json\n");
      return { ok: true };
    };
    const t = transport();
    const errors: Error[] = [];
    const got: unknown[] = [];
    t.onerror = (e) => errors.push(e);
    t.onmessage = (m) => got.push(m);
    await t.start();
    await t.send({ jsonrpc: "2.0", id: 5, method: "junk" });
    await waitFor(() => got.length === 1, "answer");
    expect(errors.map((e) => (e as McpdError).code)).toEqual(["MCPD_PARSE_ERROR"]);
  });
});
