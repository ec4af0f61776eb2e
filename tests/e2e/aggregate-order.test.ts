/**
 * The aggregate view's tools/list is in a deterministic order (MCP 2026-07-28, server/tools: it SHOULD be;
 * 2026 clients cache it): the servers' configuration order, each server's tools in its own order, whatever
 * order the servers became ready in.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fixture, startTestDaemon, until, type TestDaemon } from "./harness.js";

let d: TestDaemon | undefined;
let dir: string | undefined;
afterEach(async () => {
  await d?.stop();
  d = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const ENVELOPE = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} };

describe("aggregate tools/list order", () => {
  it.each([
    ["the first configured server ready first", ["alpha", "beta", "gamma"]],
    ["the last configured server ready first", ["gamma", "beta", "alpha"]],
    ["the middle one first", ["beta", "gamma", "alpha"]],
  ])("is the configuration order with %s", async (_what, readyOrder) => {
    dir = mkdtempSync(join(tmpdir(), "mcpd-order-"));
    const wait = (name: string): string => join(dir as string, `${name}.go`);
    d = await startTestDaemon({
      alpha: fixture("alpha", ["--init-wait-file", wait("alpha"), "--tool", "zeta", "--tool", "aardvark"]),
      beta: fixture("beta", ["--init-wait-file", wait("beta"), "--tool", "middle"]),
      gamma: fixture("gamma", ["--init-wait-file", wait("gamma")]),
    });
    const ctl = await d.control();
    const state = async (name: string): Promise<string | undefined> =>
      (await ctl.request("mcpd/status")).result.servers.find((s: any) => s.name === name)?.state;
    for (const name of readyOrder) {
      writeFileSync(wait(name), "");
      await until(async () => (await state(name)) === "ready", `${name} ready`);
    }
    const raw = await d.raw();
    const listed = (await raw.request("tools/list", { _meta: ENVELOPE })).result.tools.map((t: { name: string }) => t.name) as string[];
    const servers = listed.map((n) => n.split("__")[0]);
    expect(servers).toEqual([...servers].sort((a, b) => ["alpha", "beta", "gamma"].indexOf(a) - ["alpha", "beta", "gamma"].indexOf(b)));
    expect(new Set(servers)).toEqual(new Set(["alpha", "beta", "gamma"]));
    const alpha = listed.filter((n) => n.startsWith("alpha__"));
    // Each server's own order: its built-in tools, then zeta before aardvark as it lists them.
    expect(alpha.indexOf("alpha__zeta")).toBeLessThan(alpha.indexOf("alpha__aardvark"));
  });
});
