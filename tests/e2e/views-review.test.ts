/**
 * Regressions found reviewing views: a profile keeps every method off the servers it leaves out (a request
 * naming no item went through, per-request routed), a reload that narrows a profile stops the updates of
 * what it now hides, and a server whose name holds `__` never shares an exposed tool name with another's.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type RawClient, type TestDaemon, fixture, readLog, startTestDaemon, until } from "./harness.js";

let d: TestDaemon | undefined;
afterEach(async () => {
  await d?.stop();
  d = undefined;
});

/** A connection that selected `profile`, initialized. */
async function withProfile(daemon: TestDaemon, profile: string): Promise<RawClient> {
  const c = await daemon.raw();
  expect((await c.request("mcpd/select", { profile })).result).toBeDefined();
  await c.initialize();
  return c;
}

describe("views", () => {
  it("regression: a profile refuses a request naming no item routed to a server it leaves out (it reached the server, and started it)", async () => {
    d = await startTestDaemon(
      { a: fixture("a"), secret: fixture("secret", [], { startup: "lazy" }) },
      { settings: { profiles: { onlyA: { servers: ["a"] } } } },
    );
    const p = await withProfile(d, "onlyA");
    const routed = { _meta: { "mcpd/server": "secret" } };
    for (const [method, params] of [
      ["completion/complete", { ref: { type: "ref/x" }, argument: { name: "q", value: "" }, ...routed }],
      ["fixture/anything", routed],
    ] as const) {
      const r = await p.request(method, params);
      expect(r.error?.data?.mcpdCode, `${method}: ${JSON.stringify(r)}`).toBe("MCPD_HIDDEN");
      expect(r.error.message).toContain('server "secret" is not one of profile "onlyA"');
    }
    // Its own server still serves such a request.
    expect((await p.request("fixture/anything", { _meta: { "mcpd/server": "a" } })).error?.data?.mcpdCode).not.toBe("MCPD_HIDDEN");
    const control = await d.control();
    const secret = (await control.request("mcpd/status")).result.servers.find((s: any) => s.name === "secret");
    expect(secret.state).toBe("stopped");
    control.close();
  });

  it("regression: after a reload narrows a connection's profile, it gets no update of a resource the profile now hides (its subscription went on being served)", async () => {
    const servers = { a: fixture("a"), b: fixture("b") };
    d = await startTestDaemon(servers, { settings: { profiles: { p: { servers: ["a"] } } } });
    const uri = "fixture://static/one";
    const p = await withProfile(d, "p");
    // Once a lists it (a resource nobody lists yet is unknown to the view).
    await until(
      async () => (await p.request("resources/list")).result?.resources?.some((r: any) => r.uri === uri),
      "a to list the resource",
    );
    const subscribed = await p.request("resources/subscribe", { uri });
    expect(subscribed.result, JSON.stringify(subscribed)).toEqual({});
    const config = JSON.parse(readFileSync(d.configFile, "utf8"));
    config.mcpd.profiles.p.servers = ["b"];
    writeFileSync(d.configFile, JSON.stringify(config));
    const control = await d.control();
    expect((await control.request("mcpd/reload")).result).toBeDefined();
    control.close();
    const other = await d.raw();
    await other.initialize();
    expect((await other.request("tools/call", { name: "a__touch", arguments: { uri } })).result?.content?.[0]?.text).toBe("touched");
    // a's update came before its answer; the profile's connection would have it before its own answer here.
    await p.request("ping");
    expect(p.messages.filter((m) => m.method === "notifications/resources/updated")).toEqual([]);
  });

  it("regression: a profile's request for a resource waits for its own server while servers start, not only until any server lists the URI (a server outside the profile came up first, and the request was refused as unknown)", async () => {
    const gates = mkdtempSync(join(tmpdir(), "mcpd-gates-"));
    try {
      const gate = (name: string): string => join(gates, name);
      d = await startTestDaemon(
        { a: fixture("a", ["--init-wait-file", gate("a")]), b: fixture("b", ["--init-wait-file", gate("b")]) },
        { settings: { profiles: { p: { servers: ["a"] } } } },
      );
      const p = await withProfile(d, "p");
      const uri = "fixture://static/one";
      const subscribed = p.request("resources/subscribe", { uri });
      await p.request("ping"); // answered after the subscribe began to wait
      // b, outside the profile, comes up first and lists the URI too; then a.
      const control = await d.control();
      const state = async (name: string): Promise<string> =>
        (await control.request("mcpd/status")).result.servers.find((x: any) => x.name === name).state;
      writeFileSync(gate("b"), "");
      await until(async () => (await state("b")) === "ready", "b to come up");
      writeFileSync(gate("a"), "");
      const answer = await subscribed;
      expect(answer.result, JSON.stringify(answer)).toEqual({});
      control.close();
    } finally {
      rmSync(gates, { recursive: true, force: true });
    }
  });

  it("regression: a server whose name holds __ gets hashed tool names, so server a's b__c and server a__b's c are two tools (both were a__b__c, one unreachable)", async () => {
    const logs = mkdtempSync(join(tmpdir(), "mcpd-views-"));
    try {
      const log = (name: string): string => join(logs, `${name}.jsonl`);
      d = await startTestDaemon({
        a: fixture("a", ["--tool", "b__c", "--log", log("a")]),
        a__b: fixture("a__b", ["--tool", "c", "--log", log("a__b")]),
      });
      const c = await d.raw();
      await c.initialize();
      const names: string[] = (await c.request("tools/list")).result.tools.map((t: any) => t.name);
      expect(new Set(names).size).toBe(names.length);
      expect(names).toContain("a__b__c");
      const other = names.filter((n) => n.startsWith("a__b__c_"));
      expect(other).toHaveLength(1);
      // Each name reaches its own server.
      for (const name of ["a__b__c", other[0] as string])
        expect((await c.request("tools/call", { name, arguments: {} })).result).toBeDefined();
      const called = (server: string) =>
        readLog(log(server))
          .filter((m) => m.method === "tools/call")
          .map((m) => m.params.name);
      expect(called("a")).toEqual(["b__c"]);
      expect(called("a__b")).toEqual(["c"]);
    } finally {
      rmSync(logs, { recursive: true, force: true });
    }
  });
});
