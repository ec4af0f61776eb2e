/**
 * Profiles and server filters are hot-reloadable: a reload that changes what a connection sees sends it
 * `notifications/<kind>/list_changed` for the kinds that changed, and sends nothing to a connection whose
 * view did not change. Shown with the official SDK Client behind `mcpd connect --profile` and with
 * `@mcpd/client`'s `profile` option, side by side with clients of other profiles and of none. A
 * connection that got nothing is proved so by a ping answered after the reload: the daemon writes a
 * connection's notifications before anything it answers later on that same connection.
 */
import { writeFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  McpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { connect, type McpdClient, type McpdError } from "@mcpd/client";
import { afterEach, describe, expect, it } from "vitest";
import { MCPD_BIN, fixture, startTestDaemon, until, type RawClient, type TestDaemon } from "./harness.js";

let d: TestDaemon | undefined;
const closers: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const close of closers.splice(0)) await close().catch(() => {});
  await d?.stop();
  d = undefined;
});

type Kind = "tools" | "prompts" | "resources";

/** list_changed notifications one client received, by kind. */
type Seen = Record<Kind, number>;
const none = (): Seen => ({ tools: 0, prompts: 0, resources: 0 });

interface Agent {
  seen: Seen;
  ping(): Promise<unknown>;
  tools(): Promise<string[]>;
}

/** The official SDK Client behind `mcpd connect ARGS...`, counting the list_changed it receives. */
async function sdkAgent(daemon: TestDaemon, ...args: string[]): Promise<Agent & { client: Client }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MCPD_BIN, "connect", ...args, "--no-autostart"],
    env: { ...(process.env as Record<string, string>), MCPD_HOME: daemon.home, MCPD_CONFIG: daemon.configFile },
    stderr: "pipe",
  });
  const client = new Client({ name: "reload-e2e", version: "1.0.0" });
  closers.push(() => client.close());
  const seen = none();
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => void seen.tools++);
  client.setNotificationHandler(PromptListChangedNotificationSchema, async () => void seen.prompts++);
  client.setNotificationHandler(ResourceListChangedNotificationSchema, async () => void seen.resources++);
  await client.connect(transport);
  return {
    client,
    seen,
    ping: () => client.ping(),
    tools: async () => (await client.listTools()).tools.map((t) => t.name).sort(),
  };
}

/** An `@mcpd/client` with a profile, counting its `listChanged` events. */
async function sdkPackageAgent(daemon: TestDaemon, profile: string): Promise<Agent & { client: McpdClient }> {
  const env = { ...process.env, MCPD_HOME: daemon.home, MCPD_CONFIG: daemon.configFile };
  const client = await connect({ env, profile, clientInfo: { name: "reload-e2e-pkg", version: "1.0.0" }, reconnect: false });
  closers.push(() => client.close());
  const seen = none();
  client.on("listChanged", ({ kind }) => void seen[kind as Kind]++);
  return {
    client,
    seen,
    ping: () => client.ping(),
    tools: async () => (await client.listTools()).map((t) => t.exposedName ?? t.name).sort(),
  };
}

function writeConfig(daemon: TestDaemon, servers: Record<string, unknown>, profiles: Record<string, unknown>): void {
  writeFileSync(daemon.configFile, JSON.stringify({ mcpd: { profiles }, mcpServers: servers }, null, 2));
}

async function reload(ctl: RawClient): Promise<{ warnings: string[] }> {
  const r = await ctl.request("mcpd/reload");
  if (!r.result) throw new Error(`reload failed: ${JSON.stringify(r.error)}`);
  return r.result;
}

const SERVERS = { a: fixture("a"), b: fixture("b") };
const PROFILES = { coding: { servers: ["a"], tools: { include: ["a__echo"] } }, echoes: { tools: { include: ["*__echo"] } } };

describe("reloading profiles and server filters", () => {
  it("sends list_changed to exactly the clients whose view changed, for the kinds that changed", async () => {
    const daemon = (d = await startTestDaemon(SERVERS, { settings: { profiles: PROFILES } }));
    const ctl = await daemon.control();
    await until(
      async () => ((await ctl.request("mcpd/servers")).result.servers as Array<{ state: string }>).every((s) => s.state === "ready"),
      "servers ready",
    );
    const coding = await sdkAgent(daemon, "--profile", "coding");
    const codingPkg = await sdkPackageAgent(daemon, "coding");
    const echoes = await sdkPackageAgent(daemon, "echoes");
    const plain = await sdkAgent(daemon);
    const all = [coding, codingPkg, echoes, plain];
    expect(await coding.tools()).toEqual(["a__echo"]);
    expect(await codingPkg.tools()).toEqual(["a__echo"]);
    expect(await echoes.tools()).toEqual(["a__echo", "b__echo"]);

    // 1. Profile "coding" gains a tool: its two clients hear of it (tools only); nobody else does.
    writeConfig(daemon, SERVERS, { ...PROFILES, coding: { servers: ["a"], tools: { include: ["a__echo", "a__add"] } } });
    await reload(ctl);
    await until(() => coding.seen.tools === 1 && codingPkg.seen.tools === 1, "coding's clients told");
    await Promise.all(all.map((a) => a.ping()));
    expect(all.map((a) => a.seen)).toEqual([
      { tools: 1, prompts: 0, resources: 0 },
      { tools: 1, prompts: 0, resources: 0 },
      none(),
      none(),
    ]);
    expect(await coding.tools()).toEqual(["a__add", "a__echo"]);
    expect(await codingPkg.tools()).toEqual(["a__add", "a__echo"]);

    // 2. Server b's own filter hides its echo: the clients that view b hear of it; "coding" (only a) does not.
    const bFiltered = { ...SERVERS, b: fixture("b", [], { tools: { exclude: ["echo"] } }) };
    writeConfig(daemon, bFiltered, { ...PROFILES, coding: { servers: ["a"], tools: { include: ["a__echo", "a__add"] } } });
    await reload(ctl);
    await until(() => echoes.seen.tools === 1 && plain.seen.tools === 1, "b's viewers told");
    await Promise.all(all.map((a) => a.ping()));
    expect(all.map((a) => a.seen.tools)).toEqual([1, 1, 1, 1]);
    expect(await echoes.tools()).toEqual(["a__echo"]);
    expect(await plain.tools()).not.toContain("b__echo");

    // 3. Profile "coding" is removed: its clients are told every list changed, and now see nothing (never more).
    writeConfig(daemon, bFiltered, { echoes: PROFILES.echoes });
    await reload(ctl);
    await until(() => coding.seen.resources === 1 && codingPkg.seen.resources === 1, "coding's clients told again");
    await Promise.all(all.map((a) => a.ping()));
    expect(all.map((a) => a.seen)).toEqual([
      { tools: 2, prompts: 1, resources: 1 },
      { tools: 2, prompts: 1, resources: 1 },
      { tools: 1, prompts: 0, resources: 0 },
      { tools: 1, prompts: 0, resources: 0 },
    ]);
    expect(await coding.tools()).toEqual([]);
    const gone = await coding.client.callTool({ name: "a__echo", arguments: { text: "x" } }).catch((e: McpError) => e);
    expect(gone).toBeInstanceOf(McpError);
    expect((gone as McpError).code).toBe(-32075);
    expect((gone as McpError).message).toContain(`profile "coding" is no longer in mcpd's config`);
    const pkgGone = await codingPkg.client.callTool({ name: "a__echo", arguments: { text: "x" } }).catch((e: McpdError) => e);
    expect((pkgGone as McpdError).code).toBe("MCPD_HIDDEN");
  });

  it("a glob that matches nothing is a warning naming it: logged once the servers are up, returned by a reload; an invalid profile keeps the old config", async () => {
    const startProfiles = { ...PROFILES, coding: { servers: ["a"], tools: { include: ["a__echo", "a__nothing_at_start"] } } };
    const daemon = (d = await startTestDaemon(SERVERS, { settings: { profiles: startProfiles } }));
    const ctl = await daemon.control();
    await until(
      async () => ((await ctl.request("mcpd/servers")).result.servers as Array<{ state: string }>).every((s) => s.state === "ready"),
      "servers ready",
    );
    const logged = await until(
      () =>
        daemon
          .stderr()
          .split("\n")
          .find((l) => l.includes("a__nothing_at_start") && l.includes("matches none")),
      "the start-up warning in the daemon's log",
    );
    expect(logged).toContain(`profile \\"coding\\": tools.include glob \\"a__nothing_at_start\\" matches none of the`);
    expect(logged).toContain(`"level":40`);
    writeConfig(
      daemon,
      { ...SERVERS, b: fixture("b", [], { tools: { exclude: ["delte_*"] } }) },
      {
        ...PROFILES,
        echoes: { tools: { include: ["*__echo", "*__nothing_*"] } },
      },
    );
    const { warnings } = await reload(ctl);
    expect(warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/profile "echoes": tools\.include glob "\*__nothing_\*" matches none of the \d+ tool names offered now$/),
        expect.stringMatching(/server "b": tools\.exclude glob "delte_\*" matches none of the \d+ tool names offered now$/),
      ]),
    );
    expect(warnings.join("\n")).not.toContain('"*__echo"');

    writeConfig(daemon, SERVERS, { coding: { servers: ["a", "c"] } });
    const bad = await ctl.request("mcpd/reload");
    expect(bad.error?.code).toBe(-32602);
    expect(bad.error.message).toContain(`profile "coding": "servers" names "c", which is not a configured server`);
    expect(bad.error.message).toContain("; configured: a, b");
    // The old profiles still hold.
    const agent = await sdkAgent(daemon, "--profile", "echoes");
    expect(await agent.tools()).toEqual(["a__echo", "b__echo"]);
  });
});
