/**
 * Translation between the eras (issue 32, part 4): a 2026-era server's `input_required` answer to a call of
 * a 2025-era client (the official v1 SDK Client through `mcpd connect`) becomes 2025 server-to-client
 * requests to that client, and the call is retried upstream with their answers and the server's
 * `requestState`, byte for byte.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CreateMessageRequestSchema, ElicitRequestSchema, type ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { fixturePath } from "../helpers/process.js";
import { writeScriptedServer } from "../helpers/scripted-server.js";
import { startTestDaemon, until, type TestDaemon, connectCommand } from "./harness.js";

const MODERN = fixturePath("modern-fixture.mjs");

let daemon: TestDaemon | undefined;
const clients: Client[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  await daemon?.stop();
  if (daemon) rmSync(daemon.home, { recursive: true, force: true });
  daemon = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const modernStdio = () => ({ command: process.execPath, args: [MODERN, "--name", "ms"] });

/** The v1 SDK client through `mcpd connect` (the aggregate view), declaring `capabilities`. */
async function connect(d: TestDaemon, name: string, capabilities: ClientCapabilities): Promise<Client> {
  const transport = new StdioClientTransport(connectCommand(d));
  const client = new Client({ name, version: "1.0.0" }, { capabilities });
  clients.push(client);
  await client.connect(transport);
  return client;
}

/** A daemon with the 2026-only fixture `ms`, ready. */
async function modernDaemon(settings?: Record<string, unknown>, more: Record<string, unknown> = {}): Promise<TestDaemon> {
  const d = (daemon = await startTestDaemon({ ms: modernStdio(), ...more }, settings ? { settings } : {}));
  const probe = await connect(d, "probe", {});
  await until(async () => (await probe.listTools()).tools.some((t) => t.name === "ms__ask_name"), "ms ready");
  return d;
}

/** A 2026-era server that asks for elicitation whatever the client declared (against the rule). */
const RUDE_2026 = `
  const ok = (result) => JSON.stringify({ jsonrpc: "2.0", id: m.id, result });
  if (m.method === "server/discover")
    return ok({ resultType: "complete", supportedVersions: ["2026-07-28"], capabilities: { tools: {} }, serverInfo: { name: "rude", version: "1" } });
  if (m.method === "tools/list") return ok({ resultType: "complete", tools: [{ name: "ask", inputSchema: { type: "object" } }], ttlMs: 0, cacheScope: "public" });
  if (m.method === "tools/call")
    return ok({ resultType: "input_required", inputRequests: { who: { method: "elicitation/create", params: { message: "Name?", requestedSchema: { type: "object", properties: {} } } } } });
`;

const textOf = (r: any): string => r.content?.[0]?.text ?? "";

/** Answers elicitation with `{name}`, recording each request's message. */
function answerName(client: Client, name: string, seen: string[] = []): string[] {
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    seen.push(String(req.params.message));
    return { action: "accept", content: { name } };
  });
  return seen;
}

describe("a 2026 server's input_required for a 2025-era client", () => {
  it("the client is asked (elicitation, sampling) and the call completes with the retry's result, the requestState passed back byte for byte", async () => {
    const d = await modernDaemon();
    const client = await connect(d, "asker", { elicitation: {}, sampling: {} });
    const seen = answerName(client, "Ada");
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({
      role: "assistant",
      content: { type: "text", text: "hi there" },
      model: "test-model",
    }));
    const progress: number[] = [];
    const wire: number[] = [];
    const transport = client.transport as NonNullable<typeof client.transport>;
    const deliver = transport.onmessage;
    transport.onmessage = (m, extra) => {
      if ("method" in m && m.method === "notifications/progress") wire.push((m.params as { progress: number }).progress);
      deliver?.(m, extra);
    };
    const named = await client.callTool({ name: "ms__ask_name", arguments: {} }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    // Progress of both rounds reaches the client under its own token, before the answer. (The v1 SDK's
    // onprogress may miss the last step: it drops a call's progress handler as soon as it reads the answer,
    // and runs notification handlers a microtask later, so a step read together with the answer is lost.)
    expect(wire).toEqual([1, 2]);
    expect(progress).toEqual([1, 2].slice(0, progress.length));
    expect(textOf(named)).toBe('hello Ada (state asked:ms:\u00e9")');
    expect(seen).toEqual(["Your name?"]);
    expect(textOf(await client.callTool({ name: "ms__ask_sample", arguments: {} }))).toBe("sampled: hi there");
  });

  it("two clients calling at once each get their own requests and their own answer", async () => {
    const d = await modernDaemon();
    const a = await connect(d, "a", { elicitation: {} });
    const b = await connect(d, "b", { elicitation: {} });
    const seenA = answerName(a, "Alice");
    const seenB = answerName(b, "Bob");
    const [ra, rb] = await Promise.all([
      a.callTool({ name: "ms__ask_name", arguments: {} }),
      b.callTool({ name: "ms__ask_name", arguments: {} }),
    ]);
    expect(textOf(ra)).toContain("hello Alice");
    expect(textOf(rb)).toContain("hello Bob");
    expect(seenA).toHaveLength(1);
    expect(seenB).toHaveLength(1);
  });

  it("a server that keeps asking is given up after mcpd.maxInputRounds rounds (MCPD_INPUT_ROUNDS_EXCEEDED)", async () => {
    const d = await modernDaemon({ maxInputRounds: 3 });
    const client = await connect(d, "patient", { elicitation: {} });
    const seen = answerName(client, "x");
    const err: any = await client.callTool({ name: "ms__ask_forever", arguments: {} }).catch((e: unknown) => e);
    expect(err?.message).toMatch(/input_required more than 3 times \(mcpd\.maxInputRounds\)/);
    expect(err?.data?.mcpdCode).toBe("MCPD_INPUT_ROUNDS_EXCEEDED");
    expect(seen).toEqual(["Round 1?", "Round 2?", "Round 3?"]);
  });

  it("a client without the capability: the server is told (its -32021 reaches the client), and a server that asks anyway gets the client -32066 naming it", async () => {
    // The v2 SDK checks the envelope; a server that does not still gets the client no request it cannot answer.
    const dir = mkdtempSync(join(tmpdir(), "mcpd-rude-"));
    dirs.push(dir);
    const rude = writeScriptedServer(dir, "rude", RUDE_2026);
    const d = await modernDaemon(undefined, { rude: { command: process.execPath, args: [rude], protocolEra: "2026" } });
    const client = await connect(d, "plain", {});
    const refused: any = await client.callTool({ name: "ms__ask_name", arguments: {} }).catch((e: unknown) => e);
    expect(refused?.code).toBe(-32021);
    expect(refused?.message).toMatch(/do not declare the required capability/);
    await until(async () => (await client.listTools()).tools.some((t) => t.name === "rude__ask"), "rude ready");
    const err: any = await client.callTool({ name: "rude__ask", arguments: {} }).catch((e: unknown) => e);
    expect(err?.code).toBe(-32066);
    expect(err?.message).toMatch(/did not declare the "elicitation" capability/);
    expect(err?.data?.mcpdCode).toBe("MCPD_NO_CLIENT_FOR_REQUEST");
  });

  it("cancelling the call during a round cancels the request waiting at the client", async () => {
    const d = await modernDaemon();
    const client = await connect(d, "canceller", { elicitation: {} });
    let asked = false;
    let aborted = false;
    client.setRequestHandler(ElicitRequestSchema, (_req, extra) => {
      asked = true;
      return new Promise((_resolve, reject) => {
        extra.signal.addEventListener("abort", () => {
          aborted = true;
          reject(new Error("aborted"));
        });
      });
    });
    const controller = new AbortController();
    const call = client
      .callTool({ name: "ms__ask_name", arguments: {} }, undefined, { signal: controller.signal })
      .catch((e: unknown) => e);
    await until(() => asked, "the client is asked");
    controller.abort("user gave up");
    await call;
    await until(() => aborted, "the client's request is cancelled");
    // The connection is still usable, and nothing is left waiting.
    answerName(client, "Later");
    expect(textOf(await client.callTool({ name: "ms__ask_name", arguments: {} }))).toContain("hello Later");
  });
});
