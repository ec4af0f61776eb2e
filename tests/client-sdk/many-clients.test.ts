/**
 * 100 McpdClients in one process sharing one daemon and one server process: every call gets its own
 * answer, the daemon sees 100 clients, and the server runs once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, type McpdClient } from "@mcpd/client";
import { fixture, TestDaemon } from "./test-daemon.js";

let d: TestDaemon;
const clients: McpdClient[] = [];

beforeAll(async () => {
  d = await TestDaemon.start({ fx: fixture("fx") });
});
afterAll(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await d?.cleanup();
});

const text = (r: { content: Array<{ type: string; text?: string }> }): string => r.content.map((c) => c.text).join("");

describe("100 clients in one process", () => {
  it("share the daemon and one server process; every call gets its own answer", async () => {
    const made = await Promise.all(
      Array.from({ length: 100 }, (_, i) => connect({ env: d.env, clientInfo: { name: `agent-${i}`, version: "1" } })),
    );
    clients.push(...made);
    // Ten calls per client, all in flight together: 1,000 calls over 100 connections.
    const answers = await Promise.all(
      made.flatMap((c, i) =>
        Array.from({ length: 10 }, (_, j) => c.callTool({ server: "fx", name: "echo", arguments: { text: `${i}:${j}` } }).then(text)),
      ),
    );
    expect(answers).toEqual(made.flatMap((_, i) => Array.from({ length: 10 }, (_, j) => `${i}:${j}`)));

    const pids = new Set(await Promise.all(made.map(async (c) => text(await c.callTool({ server: "fx", name: "pid" })))));
    expect(pids.size).toBe(1);
    // Every client's identity is in the full status only: a control connection's (which is not listed itself).
    const operator = await connect({ env: d.env, control: true });
    clients.push(operator);
    const status = await operator.status();
    const names = status.clients.map((c) => c.clientInfo?.name).filter((n): n is string => typeof n === "string" && n.startsWith("agent-"));
    expect(new Set(names).size).toBe(100);
    expect(status.servers.find((s) => s.name === "fx")?.inFlight).toBe(0);

    await Promise.all(made.map((c) => c.close()));
    expect(made.every((c) => c.state === "closed")).toBe(true);
  });
});
