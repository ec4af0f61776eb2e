/**
 * The official @modelcontextprotocol/sdk Client over McpdTransport, against the real daemon: it lists
 * tools, calls one with progress, and cancels one through an AbortSignal (the server receives
 * notifications/cancelled for the call's upstream id).
 */
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { McpdTransport, type McpdError } from "@mcpd/client";
import { waitFor } from "../helpers/process.js";
import { fixture, readLog, TestDaemon } from "./test-daemon.js";

let d: TestDaemon;
let fxLog: string;
const clients: Client[] = [];

beforeAll(async () => {
  d = await TestDaemon.start((home) => {
    fxLog = join(home, "fx.log");
    return { fx: fixture("fx", ["--log", fxLog]), other: fixture("other") };
  });
});
afterAll(async () => {
  await d?.cleanup();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

async function sdkClient(server?: string): Promise<Client> {
  const client = new Client({ name: "sdk-over-mcpd", version: "1.0.0" });
  await client.connect(new McpdTransport({ env: d.env, ...(server ? { server } : {}) }));
  clients.push(client);
  return client;
}

describe("the official SDK Client over McpdTransport", () => {
  it("lists the aggregate view's tools and calls one with progress", async () => {
    const client = await sdkClient();
    expect(client.getServerVersion()?.name).toBe("mcpd");
    await waitFor(
      async () => {
        const names = (await client.listTools()).tools.map((t) => t.name);
        return names.includes("fx__echo") && names.includes("other__echo");
      },
      { message: "both servers' tools" },
    );
    const progress: number[] = [];
    const result = await client.callTool({ name: "fx__progress", arguments: { steps: 3, intervalMs: 50 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    expect(result.content).toEqual([{ type: "text", text: "done" }]);
    // The SDK handles responses synchronously and notifications asynchronously, and forgets the token with
    // the response: the last progress can be dropped by the SDK itself (field notes). Assert the ones before.
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress).toEqual([1, 2, 3].slice(0, progress.length));
  });

  it("cancels a call through an AbortSignal: the fixture server receives notifications/cancelled for it", async () => {
    const client = await sdkClient("fx");
    const ac = new AbortController();
    const call = client.callTool({ name: "slow", arguments: { ms: 60_000, text: "sdk-cancel" } }, undefined, { signal: ac.signal });
    const upstream = await waitFor(
      () => readLog(fxLog).find((m) => m.method === "tools/call" && m.params.arguments?.text === "sdk-cancel"),
      {
        message: "the call at the server",
      },
    );
    ac.abort("changed my mind");
    await expect(call).rejects.toThrow();
    const cancelled = await waitFor(
      () => readLog(fxLog).find((m) => m.method === "notifications/cancelled" && m.params.requestId === upstream.id),
      {
        message: "notifications/cancelled at the server",
      },
    );
    expect(typeof cancelled.params.requestId).toBe("number");
    // The connection stays usable.
    expect((await client.callTool({ name: "echo", arguments: { text: "still here" } })).content).toEqual([
      { type: "text", text: "still here" },
    ]);
  });

  it("shows one server's transparent view with { server }", async () => {
    const client = await sdkClient("fx");
    expect(client.getServerVersion()?.name).toBe("fx");
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain("echo");
    expect(names.some((n) => n.includes("__"))).toBe(false);
    expect((await client.getPrompt({ name: "greet", arguments: { name: "Ada" } })).messages[0]?.content).toEqual({
      type: "text",
      text: "Hello, Ada!",
    });
  });

  it("fails connect() with the daemon's error for an unknown server", async () => {
    const client = new Client({ name: "x", version: "1" });
    const err = (await client.connect(new McpdTransport({ env: d.env, server: "nope" })).catch((e: unknown) => e)) as McpdError;
    expect(err.code).toBe("MCPD_UNKNOWN_SERVER");
    expect(err.message).toContain("fx");
  });

  it("tells the SDK when the daemon goes away (onclose), failing its pending request", async () => {
    const other = await TestDaemon.start({ fx: fixture("fx") });
    try {
      const client = new Client({ name: "x", version: "1" });
      const transport = new McpdTransport({ env: other.env, server: "fx" });
      let closed = 0;
      await client.connect(transport);
      client.onclose = () => closed++;
      const pending = client.callTool({ name: "slow", arguments: { ms: 60_000 } }).then(
        () => "resolved",
        (err: Error) => err.message,
      );
      await other.stop("SIGKILL");
      expect(await pending).toMatch(/Connection closed/);
      await waitFor(() => closed === 1, { message: "onclose" });
    } finally {
      await other.cleanup();
    }
  });
});
