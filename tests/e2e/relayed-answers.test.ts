/**
 * A server's answer reaches the client as the server wrote it: the daemon rewrites only the id (to the
 * client's own) and passes the result's text on untouched, instead of parsing and encoding it again.
 * Where the text cannot go on as written (a raw CR in it, a member name written with an escape), or a
 * view rewrote the answer, the client gets it encoded afresh. The fixture's `raw_answer` tool writes
 * exactly the line a test gives it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, beforeAll, afterAll, describe, expect, it } from "vitest";
import { PROTOCOL_DEFAULTS } from "@mcpd/protocol";
import { writeScriptedServer } from "../helpers/scripted-server.js";
import { MCPD_BIN, fixture, startTestDaemon, type RawClient, type TestDaemon } from "./harness.js";
import { modernEnvelope } from "../helpers/modern.js";

let daemon: TestDaemon;
const clients: RawClient[] = [];

beforeAll(async () => {
  daemon = await startTestDaemon({ fx: fixture("fx", ["--tool", "raw_answer"]) });
});
afterAll(async () => {
  await daemon.stop();
});
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

async function agent(server?: string): Promise<RawClient> {
  const c = await daemon.raw();
  clients.push(c);
  if (server !== undefined) await c.request("mcpd/select", { server });
  await c.initialize();
  return c;
}

/** Calls `raw_answer` so the server answers with `line`; returns the line the client received for it. */
async function relayed(c: RawClient, line: string, tool = "raw_answer", id = `call-${Math.random()}`): Promise<string> {
  await c.request("tools/call", { name: tool, arguments: { line } }, id);
  const got = c.lines.find((l) => {
    const m = JSON.parse(l);
    return m.id === id && ("result" in m || "error" in m);
  });
  if (got === undefined) throw new Error(`no line for ${id}`);
  return got;
}

// The result as a server may write it: spacing, a \u escape, 1.0 and a number past 2^53. Parsed and
// encoded again, it would read "é", 1 and 12345678901234567000. Padded past the size below which an
// answer is encoded again anyway (as cheap as finding its text, for a small one).
const PAD = "p".repeat(PROTOCOL_DEFAULTS.keepResultMinChars);
const RESULT = `{ "content" : [ { "type" : "text", "text" : "caf\\u00e9" } ], "n" : 1.0, "big" : 12345678901234567890, "pad": "${PAD}" }`;

describe("answers relayed as the server wrote them", () => {
  it("a tool's answer goes on byte for byte, with only the id the client's (regression: every answer was parsed and encoded again)", async () => {
    const c = await agent("fx");
    const line = await relayed(c, `{"result":${RESULT},"jsonrpc":"2.0","id":$ID}`, "raw_answer", "mine-1");
    expect(line).toBe(`{"jsonrpc":"2.0","id":"mine-1","result":${RESULT}}`);
  });

  it("the same in the aggregate view, and whatever the server's member order", async () => {
    const c = await agent();
    const line = await relayed(c, `{ "jsonrpc" : "2.0" , "id" : $ID , "result" : ${RESULT} }`, "fx__raw_answer", "agg-1");
    expect(line).toBe(`{"jsonrpc":"2.0","id":"agg-1","result":${RESULT}}`);
  });

  it("a line with a raw CR in it is encoded afresh: some JSONL readers take a CR for a line break", async () => {
    const c = await agent("fx");
    const line = await relayed(c, `{"result":{"content":[],\r"n":1.0,"pad":"${PAD}"},"jsonrpc":"2.0","id":$ID}`, "raw_answer", "cr-1");
    expect(line).toBe(`{"jsonrpc":"2.0","id":"cr-1","result":{"content":[],"n":1,"pad":"${PAD}"}}`);
  });

  it("duplicate results and an escaped member name mean what JSON.parse makes of them, and nothing of the server's id survives", async () => {
    const c = await agent("fx");
    const dup = await relayed(
      c,
      `{"result":{"n":1},"jsonrpc":"2.0","id":$ID,"result":{"n":2.0,"pad":"${PAD}"},"id":$ID}`,
      "raw_answer",
      "dup-1",
    );
    expect(dup).toBe(`{"jsonrpc":"2.0","id":"dup-1","result":{"n":2.0,"pad":"${PAD}"}}`);
    const esc = await relayed(c, `{"res\\u0075lt":{"n":3.0},"jsonrpc":"2.0","id":$ID,"pad":"${PAD}"}`, "raw_answer", "esc-1");
    expect(esc).toBe('{"jsonrpc":"2.0","id":"esc-1","result":{"n":3}}');
  });

  it("a small answer goes on as the server wrote it too, only its id's value rewritten (regression: it was encoded again)", async () => {
    const c = await agent("fx");
    const line = await relayed(c, '{"result":{"content":[],"n":1.0},"jsonrpc":"2.0","id":$ID}', "raw_answer", "small-1");
    expect(line).toBe('{"result":{"content":[],"n":1.0},"jsonrpc":"2.0","id":"small-1"}');
    // One with a \u escape (it might spell a second "id") is encoded afresh.
    const esc = await relayed(c, '{"result":{"content":[],"t":"caf\\u00e9"},"jsonrpc":"2.0","id":$ID}', "raw_answer", "small-2");
    expect(esc).toBe('{"jsonrpc":"2.0","id":"small-2","result":{"content":[],"t":"café"}}');
  });

  it("a resource read in the aggregate view, whose URIs the view rewrites, is encoded afresh with them rewritten", async () => {
    const c = await agent();
    const r = await c.request("resources/read", { uri: "mcpd://fx/fixture://static/one" }, "read-1");
    expect(r.result.contents[0]).toMatchObject({ uri: "mcpd://fx/fixture://static/one", text: "one" });
  });

  it("the official SDK Client reads the relayed answer through mcpd connect", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MCPD_BIN, "connect", "fx"],
      env: { ...process.env, MCPD_HOME: daemon.home, MCPD_CONFIG: daemon.configFile, MCPD_SOCKET: daemon.socketPath } as Record<
        string,
        string
      >,
      stderr: "pipe",
    });
    const client = new Client({ name: "relayed", version: "1.0.0" });
    await client.connect(transport);
    try {
      const r = await client.callTool({ name: "raw_answer", arguments: { line: `{"result":${RESULT},"jsonrpc":"2.0","id":$ID}` } });
      expect(r.content).toEqual([{ type: "text", text: "café" }]);
      expect(r.n).toBe(1);
    } finally {
      await client.close();
    }
  });
});

describe("answers to 2026-era requests", () => {
  const ENVELOPE = modernEnvelope();
  const SERVER_INFO = '"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fx","version":"1.0.0"}}';

  /** Calls `raw_answer` as a 2026-era client (no initialize, the envelope in `_meta`); the line received for it. */
  async function modernRelayed(line: string, id: string): Promise<string> {
    const c = await daemon.raw();
    clients.push(c);
    await c.request("mcpd/select", { server: "fx" });
    await c.request("tools/call", { name: "raw_answer", arguments: { line }, _meta: ENVELOPE }, id);
    const got = c.lines.find((l) => JSON.parse(l).id === id);
    if (got === undefined) throw new Error(`no line for ${id}`);
    return got;
  }

  it("the server's text goes on after the members the era adds (regression: every such answer was encoded again, 3x the CPU for 100 KB)", async () => {
    const line = await modernRelayed(`{"result":${RESULT},"jsonrpc":"2.0","id":$ID}`, "modern-1");
    expect(line).toBe(`{"jsonrpc":"2.0","id":"modern-1","result":{"resultType":"complete",${SERVER_INFO},${RESULT.slice(1).trimStart()}}`);
    // A small one is encoded again, with the members added: cheaper than finding its text.
    const small = await modernRelayed('{"result":{ "content":[],"n":1.0},"jsonrpc":"2.0","id":$ID}', "modern-2");
    expect(small).toBe(`{"jsonrpc":"2.0","id":"modern-2","result":{"content":[],"n":1,"resultType":"complete",${SERVER_INFO}}}`);
  });

  it("a result with its own _meta or resultType is encoded afresh, its _meta kept and its resultType as the server gave it", async () => {
    const meta = await modernRelayed('{"result":{"content":[],"n":1.0,"_meta":{"k":"v"}},"jsonrpc":"2.0","id":$ID}', "modern-4");
    expect(JSON.parse(meta).result).toEqual({
      content: [],
      n: 1,
      resultType: "complete",
      _meta: { k: "v", "io.modelcontextprotocol/serverInfo": { name: "fx", version: "1.0.0" } },
    });
    expect(meta).toContain('"n":1,'); // encoded again
    const typed = await modernRelayed('{"result":{"content":[],"resultType":"complete","n":1.0},"jsonrpc":"2.0","id":$ID}', "modern-5");
    expect(JSON.parse(typed).result).toMatchObject({ resultType: "complete", n: 1 });
  });
});

describe("answers a view judged", () => {
  let judged: TestDaemon;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "mcpd-judged-"));
    // A server whose tools/list answer gives "tools" twice: first a list holding the hidden tool, then
    // (the member JSON.parse keeps) something that is not a list. Over 1 KB, so its text would be kept.
    const server = writeScriptedServer(
      dir,
      "dup",
      `if (m.method === "tools/list") return '{"jsonrpc":"2.0","id":' + m.id + ',"result":{"tools":[{"name":"hidden","description":"' + "d".repeat(2000) + '","inputSchema":{"type":"object"}}],"tools":{}}}';`,
    );
    judged = await startTestDaemon({
      dup: { command: process.execPath, args: [server], tools: { exclude: ["hidden"] }, healthCheckIntervalMs: 0 },
    });
  });
  afterAll(async () => {
    await judged?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a filtered list is encoded afresh even when it was not a list to filter (regression: its text went on, and a first-wins parser read the hidden tool from it)", async () => {
    const c = await judged.raw();
    clients.push(c);
    await c.request("mcpd/select", { server: "dup" });
    await c.initialize();
    await c.request("tools/list", {}, "list-1");
    const line = c.lines.find((l) => l.startsWith('{"jsonrpc":"2.0","id":"list-1",'));
    expect(line).toBe('{"jsonrpc":"2.0","id":"list-1","result":{"tools":{}}}');
  });
});
