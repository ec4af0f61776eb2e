/**
 * Defects a review of the translation between the eras found (a 2025-era server's mid-call requests for a
 * 2026-era client, answered `input_required` and held for the retry), each with the test that failed
 * first. The server is tests/fixtures/servers/era-review-server.mjs, a real process.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fixturePath } from "../helpers/process.js";
import { modernEnvelope } from "../helpers/modern.js";
import { httpFront, post, type HttpFrontInfo } from "../http/http-harness.js";
import { readLog, startTestDaemon, until, type RawClient, type TestDaemon } from "./harness.js";

let daemon: TestDaemon | undefined;
const dirs: string[] = [];

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const SERVER = fixturePath("era-review-server.mjs");

/** A daemon with the review server `s` (logging what it receives to `log`), and a raw client that selected it, ready. */
async function start(
  extra: Record<string, unknown> = {},
  settings?: Record<string, unknown>,
): Promise<{ d: TestDaemon; r: RawClient; log: string }> {
  const dir = mkdtempSync(join(tmpdir(), "mcpd-era-"));
  dirs.push(dir);
  const log = join(dir, "s.log");
  const d = (daemon = await startTestDaemon(
    { s: { command: process.execPath, args: [SERVER, log], ...extra } },
    settings ? { settings } : {},
  ));
  const r = await d.raw();
  await r.request("mcpd/select", { server: "s" }, "sel");
  await until(async () => (await r.request("tools/list", { _meta: modernEnvelope() })).result?.tools?.length > 0, "s ready");
  return { d, r, log };
}

/** The answers the server got to its own requests (ids `s1`, `s2`, ...) after it received its `tools/call` of `tool`. */
function answersAfter(log: string, tool: string): any[] {
  const got = readLog(log);
  const from = got.findIndex((m) => m.method === "tools/call" && m.params?.name === tool);
  return from < 0 ? [] : got.slice(from + 1).filter((m) => m.method === undefined && typeof m.id === "string");
}

/** The JSON-RPC answer to a 2026-era POST, whether it came as JSON or on an SSE stream; and what came before it. */
async function answerOf(res: Response): Promise<{ answer: any; messages: any[] }> {
  const body = await res.text();
  const messages = (res.headers.get("content-type") ?? "").includes("text/event-stream")
    ? body
        .split("\n")
        .filter((l) => l.startsWith("data: "))
        .map((l) => JSON.parse(l.slice(6)))
    : [JSON.parse(body)];
  return { answer: messages.find((m) => m.id !== undefined && m.method === undefined), messages };
}

/** A 2026-era `tools/call` of `name` POSTed to `/servers/s/mcp`. */
const postCall = async (front: HttpFrontInfo, id: number, name: string, params: Record<string, unknown>) =>
  answerOf(
    await post(
      front,
      "/servers/s/mcp",
      { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: {}, ...params } },
      { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": name },
    ),
  );

describe("era translation: review defects", () => {
  it("regression: a call the server answers while its request is being gathered gets one response, and the server's request is answered", async () => {
    // A long state lifetime: the held request would outlive the test.
    const { r, log } = await start({}, { requestStateTtlMs: 600_000 });
    const answer = await r.request("tools/call", { name: "fire_and_answer", arguments: {}, _meta: modernEnvelope({ roots: {} }) }, "F1");
    expect(answer.result?.content?.[0]?.text).toBe("answered without waiting");
    // The server's roots/list is answered (its call has ended: there is no call to ask the client for).
    const [got] = await until(() => {
      const answers = answersAfter(log, "fire_and_answer");
      return answers.length > 0 ? answers : undefined;
    }, "the server's roots/list answered");
    expect(got.result ?? got.error).toBeDefined();
    // A request after it: its answer comes after anything the daemon sent for F1 (one connection, in order).
    await r.request("tools/call", { name: "plain", arguments: {}, _meta: modernEnvelope() }, "P1");
    expect(r.messages.filter((m) => m.id === "F1")).toHaveLength(1);
  });

  it("regression: a server's request during a 2026-era call that may not be answered input_required gets the 2025 rules (roots/list: the configured roots)", async () => {
    const roots = [{ uri: "file:///configured", name: "cfg" }];
    const { r } = await start({ roots });
    const env = modernEnvelope({ roots: {}, elicitation: {} });
    const calls: Array<[string, string, Record<string, unknown>]> = [
      ["resources/list", "B1", {}],
      ["prompts/list", "B2", {}],
      ["completion/complete", "B3", { ref: { type: "ref/resource", uri: "x://roots" }, argument: { name: "a", value: "" } }],
    ];
    const configured = JSON.stringify({ roots });
    for (const [method, id, params] of calls) {
      const answer = await r.request(method, { ...params, _meta: env }, id);
      expect(answer.result?.resultType, method).not.toBe("input_required");
      expect(JSON.stringify(answer.result), method).toContain(JSON.stringify(configured).slice(1, -1));
    }
    // prompts/get may be answered input_required: the client is asked.
    const got = await r.request("prompts/get", { name: "p", _meta: env }, "G1");
    expect(got.result?.resultType).toBe("input_required");
    expect(Object.values(got.result.inputRequests)).toEqual([{ method: "roots/list", params: {} }]);
    // The retry ends the call (held, it would keep the daemon's stop waiting for it).
    const inputResponses = { mcpd: { roots: [{ uri: "file:///client", name: "mine" }] } };
    const done = await r.request("prompts/get", { name: "p", inputResponses, requestState: got.result.requestState, _meta: env }, "G2");
    expect(JSON.stringify(done.result?.messages)).toContain("file:///client");
  });

  it("regression: a requestState is refused on a request other than the one it was issued for (method or name), and still serves that one", async () => {
    const { r } = await start();
    const env = modernEnvelope({ elicitation: {} });
    const first = await r.request("tools/call", { name: "ask_progress", arguments: {}, _meta: env }, "A1");
    expect(first.result?.resultType).toBe("input_required");
    const requestState = first.result.requestState as string;
    const inputResponses = { mcpd: { action: "accept", content: { name: "Ada" } } };
    const onPrompt = await r.request("prompts/get", { name: "whatever", inputResponses, requestState, _meta: env }, "A2");
    expect(onPrompt.error?.code).toBe(-32602);
    expect(onPrompt.error?.message).toContain("tools/call");
    expect(onPrompt.error?.message).toContain("prompts/get");
    const onOtherTool = await r.request("tools/call", { name: "plain", arguments: {}, inputResponses, requestState, _meta: env }, "A3");
    expect(onOtherTool.error?.code).toBe(-32602);
    expect(onOtherTool.error?.message).toContain('"ask_progress"');
    expect(onOtherTool.error?.message).toContain('"plain"');
    const retry = await r.request("tools/call", { name: "ask_progress", arguments: {}, inputResponses, requestState, _meta: env }, "A4");
    expect(retry.result?.content?.[0]?.text).toContain("Ada");
  });

  it("regression: progress of a call after its retry goes to the retry's own progress token", async () => {
    const { r } = await start();
    const env = modernEnvelope({ elicitation: {} });
    const first = await r.request(
      "tools/call",
      { name: "ask_progress", arguments: {}, _meta: { ...env, progressToken: "tok-first" } },
      "A1",
    );
    expect(first.result?.resultType).toBe("input_required");
    const retry = await r.request(
      "tools/call",
      {
        name: "ask_progress",
        arguments: {},
        inputResponses: { mcpd: { action: "accept", content: { name: "Ada" } } },
        requestState: first.result.requestState,
        _meta: { ...env, progressToken: "tok-retry" },
      },
      "A2",
    );
    expect(retry.result?.content?.[0]?.text).toContain("Ada");
    // The server reports its progress before it answers, and one connection keeps the order.
    const progress = r.messages.filter((m) => m.method === "notifications/progress").map((m) => m.params);
    expect(progress.map((p) => [p.progressToken, p.progress])).toEqual([
      ["tok-retry", 1],
      ["tok-retry", 2],
      ["tok-retry", 3],
    ]);
  });

  it('regression: a "per-client" server keeps the call a 2026-era HTTP client was asked for until its retry, in another POST', async () => {
    const { d } = await start({ sharing: "per-client" });
    const front = await httpFront(d);
    const env = modernEnvelope({ elicitation: {} });
    const first = await postCall(front, 1, "ask_progress", { _meta: { ...env, progressToken: "tok-first" } });
    expect(first.answer.result?.resultType).toBe("input_required");
    const retry = await postCall(front, 2, "ask_progress", {
      inputResponses: { mcpd: { action: "accept", content: { name: "Ada" } } },
      requestState: first.answer.result.requestState,
      _meta: { ...env, progressToken: "tok-retry" },
    });
    expect(retry.answer.error).toBeUndefined();
    expect(retry.answer.result?.content?.[0]?.text).toContain("Ada");
    const progress = retry.messages.filter((m) => m.method === "notifications/progress").map((m) => m.params.progressToken);
    expect(progress).toEqual(["tok-retry", "tok-retry", "tok-retry"]);
    // The private session went to the retry's POST, and ended with it: the socket client's alone is left.
    const control = await d.control();
    await until(
      async () => (await control.request("mcpd/status")).result.servers.find((s: any) => s.name === "s").sessions === 1,
      "the retry's private session ended",
    );
  });

  it('a "per-client" server\'s private session kept for a 2026-era HTTP retry ends when the requestState expires unused', async () => {
    const { d, log } = await start({ sharing: "per-client" }, { requestStateTtlMs: 1_000 });
    const front = await httpFront(d);
    const control = await d.control();
    const sessions = async (): Promise<number> =>
      (await control.request("mcpd/status")).result.servers.find((s: any) => s.name === "s").sessions;
    expect(await sessions()).toBe(1); // the socket client's
    const first = await postCall(front, 1, "ask_progress", { _meta: modernEnvelope({ elicitation: {} }) });
    expect(first.answer.result?.resultType).toBe("input_required");
    // The POST has ended; its private session stays for the retry.
    expect(await sessions()).toBe(2);
    // No retry: the state expires, the call is cancelled upstream, and the private session ends.
    await until(() => readLog(log).some((m) => m.method === "notifications/cancelled"), "the held call cancelled");
    await until(async () => (await sessions()) === 1, "the kept private session ended");
  });
});
