/**
 * Every upstream server in its own era (issue 32): a server that speaks only MCP 2026-07-28 (the official
 * v2 SDK with `legacy: "reject"`, over stdio and over HTTP) is probed with `server/discover` and spoken to
 * in the 2026 era, while 2025 servers keep their `initialize`; the official v1 SDK Client, through
 * `mcpd connect`, uses both alike.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { fixturePath } from "../helpers/process.js";
import { MCPD_BIN, fixture, startTestDaemon, until, type TestDaemon, connectCommand } from "./harness.js";

const MODERN = fixturePath("modern-fixture.mjs");
const EXITS = fixturePath("exit-before-initialize.mjs");

let daemon: TestDaemon | undefined;
const sdkClients: Client[] = [];
const children: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const c of sdkClients.splice(0)) await c.close().catch(() => {});
  await daemon?.stop();
  daemon = undefined;
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await until(() => child.exitCode !== null || child.signalCode !== null, "HTTP fixture exit").catch(() => child.kill("SIGKILL"));
    }
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const modernStdio = (extra: Record<string, unknown> = {}) => ({ command: process.execPath, args: [MODERN, "--name", "ms"], ...extra });

/** Starts the HTTP modern fixture (killed by afterEach) and returns its URL. */
async function modernHttp(): Promise<string> {
  const child = spawn(process.execPath, [MODERN, "--http", "--name", "mh"], { stdio: ["ignore", "pipe", "inherit"] });
  children.push(child);
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  return until(() => /LISTENING (\S+)/.exec(out)?.[1], "modern HTTP fixture listening");
}

/** The official v1 SDK client through `mcpd connect` (the aggregate view). */
async function sdkClient(d: TestDaemon, info = { name: "era-e2e", version: "3.1.4" }): Promise<Client> {
  const transport = new StdioClientTransport(connectCommand(d));
  const client = new Client(info, { capabilities: { roots: {} } });
  sdkClients.push(client);
  await client.connect(transport);
  return client;
}

async function statusOf(d: TestDaemon, name: string): Promise<any> {
  const ctl = await d.control();
  const servers = (await ctl.request("mcpd/status")).result.servers;
  ctl.close();
  return servers.find((s: any) => s.name === name);
}

const readyAll = (d: TestDaemon, names: string[]) =>
  until(
    async () => {
      for (const n of names) if ((await statusOf(d, n))?.state !== "ready") return false;
      return true;
    },
    `${names.join(", ")} ready`,
  );

const textOf = (r: any): string => r.content?.[0]?.text ?? "";

describe("2026-only upstream servers", () => {
  it("a v2 SDK server that speaks only 2026-07-28, over stdio and over HTTP, is ready and serves a v1 client; status shows each server's era (bug: restarted on -32022 until its breaker tripped)", async () => {
    const url = await modernHttp();
    const d = (daemon = await startTestDaemon({ ms: modernStdio(), mh: { type: "http", url }, fx: fixture("fx") }));
    await readyAll(d, ["ms", "mh", "fx"]);
    const client = await sdkClient(d);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["ms__hello", "ms__whoami", "mh__hello", "fx__echo"]));
    for (const s of ["ms", "mh"]) {
      expect(textOf(await client.callTool({ name: `${s}__hello`, arguments: {} }))).toBe(`hello from ${s}`);
      const prompt = await client.getPrompt({ name: `${s}__greet` });
      expect(prompt.messages[0]?.content).toMatchObject({ type: "text", text: `greetings from ${s}` });
    }
    const resources = (await client.listResources()).resources.map((r) => r.uri);
    expect(resources.filter((u) => u.includes("fixture://modern/readme"))).toHaveLength(2);
    for (const uri of resources.filter((u) => u.includes("fixture://modern/readme"))) {
      expect((await client.readResource({ uri })).contents[0]).toMatchObject({ text: "modern readme" });
    }
    expect(textOf(await client.callTool({ name: "fx__echo", arguments: { text: "old" } }))).toContain("old");

    for (const [name, era] of [
      ["ms", "2026"],
      ["mh", "2026"],
      ["fx", "2025"],
    ]) {
      const s = await statusOf(d, name);
      expect(s.era, name).toBe(era);
      expect(s.restarts, name).toBe(0);
    }
    const { stdout } = await promisify(execFile)(process.execPath, [MCPD_BIN, "status", "--json"], {
      env: { ...process.env, MCPD_HOME: d.home, MCPD_CONFIG: d.configFile },
    });
    const json = JSON.parse(stdout);
    expect(Object.fromEntries(json.servers.map((s: any) => [s.name, s.era]))).toEqual({ ms: "2026", mh: "2026", fx: "2025" });
  });

  it("a list change on a 2026 server reaches the v1 client as notifications/tools/list_changed (through subscriptions/listen)", async () => {
    const url = await modernHttp();
    const d = (daemon = await startTestDaemon({ ms: modernStdio(), mh: { type: "http", url } }));
    await readyAll(d, ["ms", "mh"]);
    const client = await sdkClient(d);
    let changes = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes++;
    });
    for (const s of ["ms", "mh"]) {
      const before = changes;
      expect(textOf(await client.callTool({ name: `${s}__add_tool`, arguments: {} }))).toMatch(/^added extra_/);
      await until(() => changes > before, `tools/list_changed from ${s}`);
      await until(async () => (await client.listTools()).tools.some((t) => t.name.startsWith(`${s}__extra_`)), `${s}'s new tool listed`);
    }
  });

  it("a request relayed to a 2026 server carries the calling client's capabilities and clientInfo in its _meta", async () => {
    const url = await modernHttp();
    const d = (daemon = await startTestDaemon({ ms: modernStdio(), mh: { type: "http", url } }));
    await readyAll(d, ["ms", "mh"]);
    const client = await sdkClient(d, { name: "caller-one", version: "7.7.7" });
    for (const s of ["ms", "mh"]) {
      const envelope = JSON.parse(textOf(await client.callTool({ name: `${s}__whoami`, arguments: {} })));
      expect(envelope["io.modelcontextprotocol/protocolVersion"]).toBe("2026-07-28");
      expect(envelope["io.modelcontextprotocol/clientInfo"]).toMatchObject({ name: "caller-one", version: "7.7.7" });
      expect(envelope["io.modelcontextprotocol/clientCapabilities"]).toEqual({ roots: {} });
    }
  });
});

describe("protocolEra", () => {
  it('"2025" on a server that speaks only 2026 fails it at once with a clear reason; "2026" skips the probe', async () => {
    const d = (daemon = await startTestDaemon({
      old: modernStdio({ protocolEra: "2025" }),
      forced: modernStdio({ protocolEra: "2026" }),
      auto: modernStdio(),
    }));
    await until(async () => (await statusOf(d, "old"))?.state === "failed", "old failed");
    const old = await statusOf(d, "old");
    expect(old.stateReason).toMatch(/speaks only MCP 2026-07-28.*"protocolEra": "2025"/);
    expect(old.restarts).toBe(0);
    await readyAll(d, ["forced", "auto"]);
    expect((await statusOf(d, "forced")).era).toBe("2026");
    const probes = d
      .stderr()
      .split("\n")
      .filter((l) => l.includes("probing the server's era"));
    expect(probes.some((l) => l.includes('"auto"'))).toBe(true);
    expect(probes.some((l) => l.includes('"forced"') || l.includes('"old"'))).toBe(false);
  });
});

describe("a server that exits on a request before initialize", () => {
  it("is probed once, started again in the 2025 era without a restart counted, and a second daemon start does not probe it (the era is remembered)", async () => {
    const home = mkdtempSync(join(tmpdir(), "mcpd-"));
    dirs.push(home);
    const log = join(home, "received.log");
    const servers = { strict: { command: process.execPath, args: [EXITS, "--log", log] } };
    let d = (daemon = await startTestDaemon(servers, { home }));
    await readyAll(d, ["strict"]);
    const first = await statusOf(d, "strict");
    expect(first).toMatchObject({ era: "2025", restarts: 0 });
    const client = await sdkClient(d);
    expect(textOf(await client.callTool({ name: "strict__echo", arguments: { text: "alive" } }))).toBe("echo: alive");
    const lines = () => readFileSync(log, "utf8").split("\n").filter(Boolean);
    expect(lines().filter((l) => l.endsWith("server/discover"))).toHaveLength(1);
    await sdkClients.pop()?.close();
    await d.stop();

    const seen = lines().length;
    d = daemon = await startTestDaemon(servers, { home });
    await readyAll(d, ["strict"]);
    expect(await statusOf(d, "strict")).toMatchObject({ era: "2025", restarts: 0 });
    const second = lines().slice(seen);
    expect(second[0]).toMatch(/ initialize$/);
    expect(second.filter((l) => l.endsWith("server/discover"))).toEqual([]);
  });
});
