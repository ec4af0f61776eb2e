/**
 * Translation between the eras (issue 32, part 4), the other way: a 2025-era server's mid-call request
 * (the fixture's `elicit`, `sample`, `roots` tools ask the client) for a 2026-era client becomes an
 * `input_required` answer with a `requestState` mcpd seals; the client's retry answers the server and gets
 * the call's result. The official v2 SDK Client pinned to 2026-07-28 (which fulfils `input_required` itself)
 * through `mcpd connect`, and raw 2026-era requests on the socket for what a well-behaved client never does.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterEach, describe, expect, it } from "vitest";
import { fixturePath } from "../helpers/process.js";
import { fixture, readLog, startTestDaemon, until, type RawClient, type TestDaemon, connectCommand } from "./harness.js";
import { modernEnvelope } from "../helpers/modern.js";

let daemon: TestDaemon | undefined;
const clients: Client[] = [];
const raws: RawClient[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  for (const r of raws.splice(0)) r.close();
  await daemon?.stop();
  if (daemon) rmSync(daemon.home, { recursive: true, force: true });
  daemon = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A daemon with the 2025 fixture `fx` (logging what it receives to the returned file), ready. */
async function legacyDaemon(settings?: Record<string, unknown>): Promise<{ d: TestDaemon; log: string }> {
  const dir = mkdtempSync(join(tmpdir(), "mcpd-fxlog-"));
  dirs.push(dir);
  const log = join(dir, "fx.log");
  const d = (daemon = await startTestDaemon({ fx: fixture("fx", ["--log", log]) }, settings ? { settings } : {}));
  const probe = await raw(d);
  await until(async () => (await probe.request("tools/list", { _meta: envelope() })).result?.tools?.length > 0, "fx ready");
  return { d, log };
}

async function raw(d: TestDaemon): Promise<RawClient> {
  const r = await d.raw();
  raws.push(r);
  return r;
}

const envelope = (capabilities: Record<string, unknown> = {}) => modernEnvelope(capabilities);

/** The v2 SDK client pinned to 2026-07-28 through `mcpd connect`. */
async function modernClient(d: TestDaemon, name: string): Promise<Client> {
  const transport = new StdioClientTransport(connectCommand(d));
  const client = new Client(
    { name, version: "1.0.0" },
    { capabilities: { elicitation: {}, sampling: {} }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  clients.push(client);
  await client.connect(transport);
  return client;
}

const textOf = (r: any): string => r.content?.[0]?.text ?? "";

/** A raw 2026-era `tools/call` of fx__elicit, answered input_required; returns its requestState. */
async function askedState(r: RawClient, id: number): Promise<string> {
  const first = await r.request("tools/call", { name: "fx__elicit", arguments: {}, _meta: envelope({ elicitation: {} }) }, id);
  expect(first.result?.resultType).toBe("input_required");
  const ask = Object.values(first.result.inputRequests as Record<string, any>)[0];
  expect(ask).toMatchObject({ method: "elicitation/create", params: { message: "Please provide a name" } });
  return first.result.requestState as string;
}

const retry = (r: RawClient, id: number, requestState: string) =>
  r.request(
    "tools/call",
    {
      name: "fx__elicit",
      arguments: {},
      inputResponses: { mcpd: { action: "accept", content: { name: "Raw" } } },
      requestState,
      _meta: envelope({ elicitation: {} }),
    },
    id,
  );

describe("between two 2026-era peers", () => {
  it("a 2026 server's input_required reaches the v2 client as it is, and its retry reaches the server with the requestState untouched", async () => {
    const d = (daemon = await startTestDaemon({
      ms: { command: process.execPath, args: [fixturePath("modern-fixture.mjs"), "--name", "ms"] },
    }));
    const client = await modernClient(d, "modern-peer");
    await until(async () => (await client.listTools()).tools.some((t) => t.name === "ms__ask_name"), "ms ready");
    client.setRequestHandler("elicitation/create", async () => ({ action: "accept", content: { name: "Peer" } }));
    const r = await client.callTool({ name: "ms__ask_name", arguments: {} });
    expect(textOf(r)).toBe('hello Peer (state asked:ms:\u00e9")');
  });
});

describe("a 2025 server's mid-call request for a 2026-era client", () => {
  it("the v2 client pinned to 2026-07-28 is asked through input_required and its call completes with the elicited answer (and a sampled one)", async () => {
    const { d } = await legacyDaemon();
    const client = await modernClient(d, "modern-asker");
    const asked: string[] = [];
    client.setRequestHandler("elicitation/create", async (req) => {
      asked.push(String((req.params as { message?: string }).message));
      return { action: "accept", content: { name: "Ada" } };
    });
    client.setRequestHandler("sampling/createMessage", async () => ({
      role: "assistant",
      content: { type: "text", text: "sampled words" },
      model: "m",
    }));
    const r = await client.callTool({ name: "fx__elicit", arguments: {} });
    expect(JSON.parse(textOf(r))).toEqual({ action: "accept", content: { name: "Ada" } });
    expect(asked).toEqual(["Please provide a name"]);
    expect(textOf(await client.callTool({ name: "fx__sample", arguments: { prompt: "hi" } }))).toBe("sampled words");
  });

  it("a 2025 server's roots/list during the v2 client's call is asked through input_required, and the client's own roots come back to the server (not the configured ones)", async () => {
    const { d, log } = await legacyDaemon();
    const transport = new StdioClientTransport(connectCommand(d));
    const client = new Client(
      { name: "modern-roots", version: "1.0.0" },
      { capabilities: { roots: {} }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    clients.push(client);
    await client.connect(transport);
    let asked = 0;
    client.setRequestHandler("roots/list", async () => {
      asked++;
      return { roots: [{ uri: "file:///work/client-root", name: "client root" }] };
    });
    const r = await client.callTool({ name: "fx__roots", arguments: {} });
    expect(JSON.parse(textOf(r))).toEqual({ roots: [{ uri: "file:///work/client-root", name: "client root" }] });
    expect(asked).toBe(1);
    // The fixture's own request and the answer it got, as it logged them: the client's roots.
    const answer = readLog(log).find((m) => m.method === undefined && m.result?.roots !== undefined);
    expect(answer?.result).toEqual({ roots: [{ uri: "file:///work/client-root", name: "client root" }] });
  });

  it("a tampered requestState and one from another connection are refused (-32602, MCPD_REQUEST_STATE_INVALID); the genuine retry completes", async () => {
    const { d } = await legacyDaemon();
    const r = await raw(d);
    const state = await askedState(r, 1);
    const flipped = state.slice(0, -2) + (state.at(-2) === "A" ? "B" : "A") + state.at(-1);
    const tampered = await retry(r, 2, flipped);
    expect(tampered.error).toMatchObject({ code: -32602, data: { mcpdCode: "MCPD_REQUEST_STATE_INVALID" } });
    expect(tampered.error.message).toMatch(/not issued by mcpd, or was altered/);
    const other = await raw(d);
    const foreign = await retry(other, 3, state);
    expect(foreign.error?.message).toMatch(/issued to another connection/);
    const done = await retry(r, 4, state);
    expect(JSON.parse(textOf(done.result))).toEqual({ action: "accept", content: { name: "Raw" } });
    expect(done.result.resultType).toBe("complete");
    // Used once: the same state again is refused.
    const again = await retry(r, 5, state);
    expect(again.error?.message).toMatch(/expired or was used already/);
  });

  it("a server that cancels its request held for the client's retry: the request is dropped (never answered), a retry with its requestState is refused saying so, and the call is cancelled upstream", async () => {
    const { d, log } = await legacyDaemon();
    const r = await raw(d);
    const first = await r.request("tools/call", { name: "fx__elicit_cancel", arguments: {}, _meta: envelope({ elicitation: {} }) }, 1);
    expect(first.result?.resultType).toBe("input_required");
    expect(first.result.inputRequests.mcpd).toMatchObject({ method: "elicitation/create", params: { message: "Never mind" } });
    // The server wrote its cancellation before it read this call: mcpd has handled it once the echo is answered.
    expect(textOf((await r.request("tools/call", { name: "fx__echo", arguments: { text: "after" }, _meta: envelope() }, 2)).result)).toBe(
      "after",
    );
    const late = await r.request(
      "tools/call",
      {
        name: "fx__elicit_cancel",
        arguments: {},
        inputResponses: { mcpd: { action: "accept", content: {} } },
        requestState: first.result.requestState,
        _meta: envelope({ elicitation: {} }),
      },
      3,
    );
    expect(late.error).toMatchObject({ code: -32602, data: { mcpdCode: "MCPD_REQUEST_STATE_INVALID" } });
    expect(late.error.message).toBe(
      "the server cancelled the elicitation/create this requestState answers (the fixture no longer needs it); call again without it",
    );
    const call = readLog(log).find((m) => m.method === "tools/call" && m.params?.name === "elicit_cancel");
    await until(
      () => readLog(log).some((m) => m.method === "notifications/cancelled" && m.params?.requestId === call.id),
      "the call cancelled upstream",
    );
    // Its cancelled request got no answer (a message without a method is an answer to one of the server's requests).
    expect(readLog(log).filter((m) => m.method === undefined)).toEqual([]);
  });

  it("a server that cancels one of the requests gathered in one input_required: the retry is refused, the other request fails, neither is answered as the client said", async () => {
    const { d, log } = await legacyDaemon();
    const r = await raw(d);
    const params = { name: "fx__elicit_cancel", arguments: { roots: true }, _meta: envelope({ elicitation: {}, roots: {} }) };
    const first = await r.request("tools/call", params, 1);
    expect(first.result?.resultType).toBe("input_required");
    const asked = first.result.inputRequests as Record<string, { method: string }>;
    expect(Object.fromEntries(Object.entries(asked).map(([key, req]) => [key, req.method]))).toEqual({
      mcpd: "elicitation/create",
      "mcpd-2": "roots/list",
    });
    // The server wrote its cancellation before it read this call: mcpd has handled it once the echo is answered.
    await r.request("tools/call", { name: "fx__echo", arguments: { text: "after" }, _meta: envelope() }, 2);
    const inputResponses = { mcpd: { action: "accept", content: {} }, "mcpd-2": { roots: [] } };
    const late = await r.request("tools/call", { ...params, inputResponses, requestState: first.result.requestState }, 3);
    expect(late.error).toMatchObject({ code: -32602, data: { mcpdCode: "MCPD_REQUEST_STATE_INVALID" } });
    expect(late.error.message).toMatch(/^the server cancelled the elicitation\/create this requestState answers/);
    const call = readLog(log).find((m) => m.method === "tools/call" && m.params?.name === "elicit_cancel");
    await until(
      () => readLog(log).some((m) => m.method === "notifications/cancelled" && m.params?.requestId === call.id),
      "the call cancelled upstream",
    );
    // The roots/list got an error, not the client's roots; the cancelled elicitation got no answer at all.
    // (mcpd writes that error and the call's cancellation in no set order: wait for the answer, then make
    // one more round trip, so that whatever mcpd wrote to the server before it has been read and logged.)
    await until(() => readLog(log).some((m) => m.method === undefined), "the roots/list answered");
    await r.request("tools/call", { name: "fx__echo", arguments: { text: "flush" }, _meta: envelope() }, 4);
    const answers = readLog(log).filter((m) => m.method === undefined);
    expect(answers).toHaveLength(1);
    expect(answers[0].error).toBeDefined();
  });

  it("two 2026-era calls of one connection in flight to the server: its request cannot be matched to one, and is refused with -32066 (never a guess)", async () => {
    const { d } = await legacyDaemon();
    const r = await raw(d);
    const call = (id: number) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "fx__elicit", arguments: {}, _meta: envelope({ elicitation: {} }) },
    });
    // One write: both calls are in flight before the server's first request comes back.
    r.writeLine(`${JSON.stringify(call(1))}\n${JSON.stringify(call(2))}`);
    const answers = await Promise.all([1, 2].map((id) => r.waitFor((m) => m.id === id && m.result !== undefined, `call ${id}`)));
    for (const a of answers) {
      expect(a.result.resultType).toBe("complete");
      expect(textOf(a.result)).toMatch(/client error -32066: .*2 calls in flight to it/);
    }
  });

  it("a client that never retries: after mcpd.requestStateTtlMs the server's request is answered with an error and the call cancelled; a late retry is refused", async () => {
    const { d, log } = await legacyDaemon({ requestStateTtlMs: 300 });
    const r = await raw(d);
    const state = await askedState(r, 1);
    const elicitId = () => readLog(log).find((m) => m.method === undefined && m.error !== undefined && typeof m.id === "number");
    const answered = await until(elicitId, "the fixture's elicitation answered with an error");
    expect(answered.error.message).toMatch(/did not retry with its requestState in time/);
    await until(() => readLog(log).some((m) => m.method === "notifications/cancelled"), "the call cancelled upstream");
    const late = await retry(r, 2, state);
    expect(late.error?.data?.mcpdCode).toBe("MCPD_REQUEST_STATE_INVALID");
  });
});
