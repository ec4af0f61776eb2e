/**
 * Extensions mcpd does not know: passed through untouched where the route is exact (a per-client server's
 * own session; a 2026-era request to a 2026-era server carries its own envelope), never claimed on a
 * client's behalf where it is not (a shared 2025-era session, which other clients use too).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectCommand, fixture, readLog, startTestDaemon, until, type TestDaemon } from "./harness.js";

const EXT = "com.example/whiteboard";
const EXT_SETTINGS = { colours: ["red", "blue"], version: 3 };
let d: TestDaemon;
let logs: string;
const clients: Client[] = [];

beforeAll(async () => {
  logs = mkdtempSync(join(tmpdir(), "mcpd-ext-"));
  d = await startTestDaemon({
    shared: fixture("shared", ["--log", join(logs, "shared.jsonl")]),
    own: fixture("own", ["--log", join(logs, "own.jsonl")], { sharing: "per-client" }),
  });
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await d?.stop();
  rmSync(logs, { recursive: true, force: true });
});

async function clientWithExtension(server: string): Promise<Client> {
  const client = new Client({ name: "ext-client", version: "1" }, { capabilities: { extensions: { [EXT]: EXT_SETTINGS } } as never });
  clients.push(client);
  await client.connect(new StdioClientTransport(connectCommand(d, [server])));
  return client;
}

const initializeOf = (file: string) => readLog(join(logs, file)).filter((m) => m.method === "initialize");

describe("an extension mcpd does not know", () => {
  it("reaches a per-client server's own session exactly as the client declared it", async () => {
    const c = await clientWithExtension("own");
    await c.listTools();
    const inits = await until(() => {
      const all = initializeOf("own.jsonl");
      return all.length > 0 ? all : undefined;
    }, "the per-client session's initialize");
    expect(inits.at(-1).params.capabilities.extensions).toEqual({ [EXT]: EXT_SETTINGS });
  });

  it("is never claimed on a shared session, which every client uses", async () => {
    const c = await clientWithExtension("shared");
    await c.listTools();
    const inits = initializeOf("shared.jsonl");
    expect(inits.length).toBeGreaterThan(0);
    for (const init of inits) expect(init.params.capabilities.extensions?.[EXT]).toBeUndefined();
  });
});
