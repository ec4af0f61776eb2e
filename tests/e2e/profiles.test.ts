/**
 * Tool selection: each agent sees the tools it should. Profiles (`mcpd.profiles`) and one-off tool globs
 * narrow the aggregate view per connection, by globs over the aggregate names; a server's own `tools`
 * filter hides tools from every client, in the aggregate and the transparent view. Hidden tools are absent
 * from `tools/list` and refused when called (-32075 `MCPD_HIDDEN`, naming the profile, the selection or
 * the server's filter). Shown with the official SDK Client behind `mcpd connect --profile/--tools`.
 */
import { SOCKET_PROTOCOL_VERSIONS } from "@mcpd/protocol";
import { spawn } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { MCPD_BIN, fixture, startTestDaemon, until, type TestDaemon, connectCommand } from "./harness.js";

let d: TestDaemon;
const sdkClients: Client[] = [];

const PROFILES = {
  // Over aggregate names: a glob with a prefix, an exact name, and an exclude.
  coding: { servers: ["a"], tools: { include: ["a__ec*", "a__add", "a__fail"], exclude: ["a__fail"] } },
  // One glob across every server's prefix.
  echoes: { tools: { include: ["*__echo"] } },
  // Prompts and resources (by the server's own URI, whatever the aggregate view lists it as).
  reading: { prompts: { include: ["b__*"] }, resources: { include: ["fixture://static/two"] } },
};

beforeAll(async () => {
  d = await startTestDaemon(
    {
      a: fixture("a"),
      // A server-level filter: hidden from every client, whatever its view.
      b: fixture("b", [], { tools: { exclude: ["fail", "cra*"] } }),
    },
    { settings: { profiles: PROFILES } },
  );
  const ctl = await d.control();
  await until(async () => {
    const servers = (await ctl.request("mcpd/servers")).result.servers as Array<{ state: string }>;
    return servers.every((s) => s.state === "ready");
  }, "both servers ready");
});
afterAll(async () => {
  await d?.stop();
});
afterEach(async () => {
  for (const c of sdkClients.splice(0)) await c.close().catch(() => {});
});

/** The official SDK Client behind `mcpd connect ARGS...` (no autostart: the test's daemon is running). */
async function sdkClient(...args: string[]): Promise<Client> {
  const transport = new StdioClientTransport(connectCommand(d, args));
  const client = new Client({ name: "profiles-e2e", version: "1.0.0" });
  sdkClients.push(client);
  await client.connect(transport);
  return client;
}

const names = async (c: Client): Promise<string[]> => (await c.listTools()).tools.map((t) => t.name).sort();

async function refusal(p: Promise<unknown>): Promise<McpError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof McpError) return err;
    throw err;
  }
  throw new Error("expected the call to be refused");
}

/** Runs the built `mcpd` command against the test's daemon. */
function cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [MCPD_BIN, ...args], {
      env: { ...process.env, MCPD_HOME: d.home, MCPD_CONFIG: d.configFile },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
    p.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
    p.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("a profile through `mcpd connect --profile`", () => {
  it("lists only the tools the profile's globs select over the aggregate names, and refuses the others naming the profile", async () => {
    const c = await sdkClient("--profile", "coding");
    expect(await names(c)).toEqual(["a__add", "a__echo"]);
    const ok = await c.callTool({ name: "a__echo", arguments: { text: "hi" } });
    expect(ok.content).toEqual([{ type: "text", text: "hi" }]);

    // A tool of a server the profile leaves out.
    const other = await refusal(c.callTool({ name: "b__echo", arguments: { text: "x" } }));
    expect(other.code).toBe(-32075);
    expect(other.message).toContain('Tool "b__echo" is hidden by profile "coding": its server "b" is not one of the profile\'s servers');
    expect(other.data).toMatchObject({
      mcpdCode: "MCPD_HIDDEN",
      kind: "tool",
      name: "b__echo",
      by: "profile",
      profile: "coding",
      server: "b",
    });
    // A tool of its server that its globs exclude.
    const excluded = await refusal(c.callTool({ name: "a__fail", arguments: {} }));
    expect(excluded.code).toBe(-32075);
    expect(excluded.message).toContain(`the profile's "tools" filter leaves it out`);
    // A name that exists nowhere is still unknown, with suggestions only among what the profile offers.
    const unknown = await refusal(c.callTool({ name: "a__ech", arguments: {} }));
    expect(unknown.code).toBe(-32602);
    expect(unknown.message).toContain("a__echo");
    expect(unknown.message).not.toContain("b__echo");
  });

  it("a glob across every server's prefix (`*__echo`) selects that tool of each server", async () => {
    const c = await sdkClient("--profile", "echoes");
    expect(await names(c)).toEqual(["a__echo", "b__echo"]);
    const r = await refusal(c.callTool({ name: "a__add", arguments: { a: 1, b: 2 } }));
    expect(r.message).toMatch(/hidden by profile "echoes"/);
  });

  it("one-off tool globs (`--tools`) narrow the view, alone or within a profile", async () => {
    const oneOff = await sdkClient("--tools", "*__add,a__echo");
    expect(await names(oneOff)).toEqual(["a__add", "a__echo", "b__add"]);
    const r = await refusal(oneOff.callTool({ name: "b__echo", arguments: { text: "x" } }));
    expect(r.code).toBe(-32075);
    expect(r.message).toContain("hidden by this connection's tools selection (*__add, a__echo)");
    expect(r.data).toMatchObject({ by: "selection" });
    const both = await sdkClient("--profile", "echoes", "--tools", "b__*");
    expect(await names(both)).toEqual(["b__echo"]);
  });

  it("a profile's prompts and resources globs filter the aggregate listings and refuse the rest", async () => {
    const c = await sdkClient("--profile", "reading");
    expect((await c.listPrompts()).prompts.map((p) => p.name)).toEqual(["b__greet"]);
    // Both servers list the URI, so the aggregate view namespaces it; the glob matched the server's own form.
    expect((await c.listResources()).resources.map((r) => r.uri).sort()).toEqual([
      "mcpd://a/fixture://static/two",
      "mcpd://b/fixture://static/two",
    ]);
    const prompt = await refusal(c.getPrompt({ name: "a__greet", arguments: { name: "x" } }));
    expect(prompt.code).toBe(-32075);
    expect(prompt.message).toContain(`Prompt "a__greet" is hidden by profile "reading": the profile's "prompts" filter leaves it out`);
    const resource = await refusal(c.readResource({ uri: "mcpd://a/fixture://static/one" }));
    expect(resource.code).toBe(-32075);
    expect(JSON.stringify((await c.readResource({ uri: "mcpd://b/fixture://static/two" })).contents)).toContain("two");
    // The profile has no tools filter: every tool of every server.
    expect((await names(c)).length).toBeGreaterThan(20);
  });

  it("an unknown profile ends `mcpd connect` with the configured profiles named", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MCPD_BIN, "connect", "--profile", "codng", "--no-autostart"],
      env: { ...(process.env as Record<string, string>), MCPD_HOME: d.home, MCPD_CONFIG: d.configFile },
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (b: Buffer) => (stderr += b.toString()));
    const client = new Client({ name: "profiles-e2e", version: "1.0.0" });
    sdkClients.push(client);
    await expect(client.connect(transport)).rejects.toThrow();
    await until(() => stderr.includes("Unknown profile"), "the bridge's error on stderr");
    expect(stderr).toContain('mcpd connect: Unknown profile "codng"; configured (mcpd.profiles): coding, echoes, reading');
  });
});

describe("a profile knows only its own servers", () => {
  it("regression: a URI a hidden server also lists resolves to the profile's server, and errors count and name only what the profile sees (bug: ambiguous between a and b, suggestions naming b)", async () => {
    const c = await d.raw();
    await c.request("mcpd/select", { profile: "coding" });
    await c.initialize();
    // Listed as the profile's one server gives them: nothing says another server has them too.
    const listed = (await c.request("resources/list")).result.resources.map((r: { uri: string }) => r.uri).sort();
    expect(listed).toEqual(["fixture://static/one", "fixture://static/two"]);
    const templates = (await c.request("resources/templates/list")).result.resourceTemplates.map(
      (t: { uriTemplate: string }) => t.uriTemplate,
    );
    expect(templates).toEqual(["fixture://items/{id}"]);
    const read = await c.request("resources/read", { uri: "fixture://static/one" });
    expect(read.result?.contents?.[0]?.text, JSON.stringify(read)).toBe("one");
    expect(read.result.contents[0].uri).toBe("fixture://static/one");
    expect((await c.request("resources/read", { uri: "fixture://items/7" })).result?.contents?.[0]?.text).toBe("item 7");
    expect((await c.request("resources/subscribe", { uri: "fixture://static/two" })).result).toEqual({});
    const completion = await c.request("completion/complete", {
      ref: { type: "ref/resource", uri: "fixture://items/{id}" },
      argument: { name: "id", value: "a" },
    });
    expect(completion.result?.completion?.values, JSON.stringify(completion)).toEqual(["alpha", "beta"]);

    const leaks = (r: any): void => {
      expect(JSON.stringify(r.error)).not.toMatch(/"b"|mcpd:\/\/b\/|b__|, b\b/);
    };
    // An unknown URI: counted and suggested among the profile's own resources.
    const unknown = await c.request("resources/read", { uri: "fixture://static/onee" });
    expect(unknown.error?.data?.mcpdCode, JSON.stringify(unknown)).toBe("MCPD_UNKNOWN_RESOURCE");
    expect(unknown.error.message).toContain("did you mean fixture://static/one?");
    expect(unknown.error.message).toContain("(2 resources; resources/list lists them)");
    leaks(unknown);
    // An unknown template in a completion ref: the profile's one template.
    const badRef = await c.request("completion/complete", {
      ref: { type: "ref/resource", uri: "fixture://itemz/{id}" },
      argument: { name: "id", value: "" },
    });
    expect(badRef.error?.data?.mcpdCode, JSON.stringify(badRef)).toBe("MCPD_UNKNOWN_RESOURCE");
    expect(badRef.error.message).toContain("(1 resource template;");
    leaks(badRef);
    // An unknown prompt in a completion ref: suggestions only among the profile's prompts.
    const badPrompt = await c.request("completion/complete", {
      ref: { type: "ref/prompt", name: "a__gret" },
      argument: { name: "name", value: "" },
    });
    expect(badPrompt.error?.data?.mcpdCode, JSON.stringify(badPrompt)).toBe("MCPD_UNKNOWN_PROMPT");
    expect(badPrompt.error.message).toContain("did you mean a__greet?");
    expect(badPrompt.error.message).toContain("(1 prompt;");
    leaks(badPrompt);
    const badGet = await c.request("prompts/get", { name: "greet", arguments: {} });
    expect(badGet.error?.data?.mcpdCode).toBe("MCPD_UNKNOWN_PROMPT");
    leaks(badGet);
    // The aggregate view without a profile still sees both copies, and refuses the plain URI as ambiguous.
    const all = await d.raw();
    await all.initialize();
    const both = await all.request("resources/read", { uri: "fixture://static/one" });
    expect(both.error?.data?.mcpdCode).toBe("MCPD_AMBIGUOUS_RESOURCE");
    expect(both.error.message).toContain("offered by 2 servers (a, b)");
  });
});

describe("a selection only narrows", () => {
  it("regression: a client behind `mcpd connect --profile` cannot undo its profile with an mcpd/select of its own before initialize (it saw every tool)", async () => {
    const c = await d.raw();
    // What the bridge sends first, then what the client behind it could send before its initialize.
    expect((await c.request("mcpd/select", { profile: "coding" })).result).toEqual({
      view: "aggregate",
      profile: "coding",
      protocolVersions: SOCKET_PROTOCOL_VERSIONS,
    });
    const undo = await c.request("mcpd/select", {});
    expect(undo.error?.code).toBe(-32600);
    expect(undo.error.message).toBe(`mcpd/select: this connection's selection (profile "coding") is already made and cannot be changed`);
    const widen = await c.request("mcpd/select", { tools: ["*"] });
    expect(widen.error?.code).toBe(-32600);
    await c.initialize();
    const tools = (await c.request("tools/list")).result.tools.map((t: { name: string }) => t.name).sort();
    expect(tools).toEqual(["a__add", "a__echo"]);
  });
});

describe("a server's own tools filter", () => {
  it("hides the tools from the aggregate view and from the server's transparent view, and refuses them by name", async () => {
    const agg = await sdkClient();
    const all = await names(agg);
    expect(all).toContain("b__echo");
    expect(all).toContain("a__fail");
    expect(all).not.toContain("b__fail");
    expect(all.filter((n) => n.startsWith("b__cra"))).toEqual([]);
    const hidden = await refusal(agg.callTool({ name: "b__fail", arguments: {} }));
    expect(hidden.code).toBe(-32075);
    expect(hidden.message).toBe('MCP error -32075: Tool "b__fail" is hidden by the "tools" filter of server "b" in mcpd\'s config');
    expect(hidden.data).toMatchObject({ mcpdCode: "MCPD_HIDDEN", by: "server", server: "b" });

    const transparent = await sdkClient("b");
    const own = await names(transparent);
    expect(own).toContain("echo");
    expect(own).not.toContain("fail");
    expect(own).not.toContain("crash");
    const refused = await refusal(transparent.callTool({ name: "crash", arguments: {} }));
    expect(refused.code).toBe(-32075);
    expect(refused.message).toContain('Tool "crash" is hidden by the "tools" filter of server "b"');
    // The server was never asked: it is still up.
    expect((await transparent.callTool({ name: "echo", arguments: { text: "alive" } })).content).toEqual([{ type: "text", text: "alive" }]);
  });
});

describe("status and the mcpd command", () => {
  it("`mcpd status --json` shows each client's profile and one-off globs", async () => {
    const c1 = await sdkClient("--profile", "coding");
    const c2 = await sdkClient("--tools", "a__*");
    await names(c1);
    await names(c2);
    const st = await cli("status", "--json");
    expect(st.code, st.stderr).toBe(0);
    const clients = JSON.parse(st.stdout).clients as Array<{ profile: string | null; tools: string[] | null }>;
    expect(clients.map((c) => [c.profile, c.tools])).toEqual(
      expect.arrayContaining([
        ["coding", null],
        [null, ["a__*"]],
      ]),
    );
    const table = await cli("status");
    expect(table.stdout).toMatch(/PROFILE/);
    expect(table.stdout).toMatch(/ coding /);
  });

  it("`mcpd tools --profile NAME` lists exactly what that profile sees; an unknown one names the configured ones", async () => {
    const r = await cli("tools", "--profile", "coding", "--json");
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as Array<{ exposedName: string }>).map((t) => t.exposedName).sort()).toEqual(["a__add", "a__echo"]);
    const globs = await cli("tools", "--tools", "*__echo", "--json");
    expect((JSON.parse(globs.stdout) as Array<{ exposedName: string }>).map((t) => t.exposedName).sort()).toEqual(["a__echo", "b__echo"]);
    const bad = await cli("tools", "--profile", "nope");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('Unknown profile "nope"; configured (mcpd.profiles): coding, echoes, reading');
  });
});
