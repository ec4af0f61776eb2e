/**
 * A shared 2025-era app server's UI session, end to end (issue 34): the second upstream session that serves
 * the clients that declared the MCP Apps UI extension (the app server written for the tests,
 * tests/fixtures/servers/app-server.mjs, offers its UI tool only to such a client). `mcpd status` shows it
 * under its server; it is made only for a server a UI client uses, and ends with the last UI client using
 * it; while only UI clients use the server, the shared session is parked, so that two processes run only
 * while both kinds of client use the server.
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { MCPD_BIN, ROOT, connectCommand, fixture, startTestDaemon, until, type TestDaemon } from "./harness.js";

const APP = join(ROOT, "tests/fixtures/servers/app-server.mjs");
const UI = "io.modelcontextprotocol/ui";

let d: TestDaemon;
const clients: Client[] = [];

beforeAll(async () => {
  d = await startTestDaemon(
    { app: { command: process.execPath, args: [APP, "--name", "solo"] }, other: fixture("other") },
    { settings: { profiles: { rest: { servers: ["other"] } } } },
  );
  await until(async () => (await appStatus()).state === "ready" && (await appStatus("other")).state === "ready", "servers ready");
});
afterAll(async () => {
  await d?.stop();
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
});

/** The official SDK Client behind `mcpd connect ARGS...`, declaring the UI extension when `ui`. */
async function client(ui: boolean, ...args: string[]): Promise<Client> {
  const capabilities = ui ? { extensions: { [UI]: { mimeTypes: ["text/html;profile=mcp-app"] } } } : {};
  const c = new Client({ name: ui ? "ui-host" : "text-host", version: "1.0.0" }, { capabilities });
  clients.push(c);
  await c.connect(new StdioClientTransport(connectCommand(d, args)));
  return c;
}

/** The pids of the app server's processes (their command lines, from /proc). */
function appPids(): number[] {
  const pids: number[] = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(`${APP}\0--name\0solo\0`)) pids.push(Number(pid));
    } catch {
      // gone meanwhile
    }
  }
  return pids.sort((a, b) => a - b);
}

/** `mcpd ARGS...` run against the test daemon. */
function cli(args: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MCPD_BIN, ...args],
      { env: { ...process.env, MCPD_HOME: d.home, MCPD_CONFIG: d.configFile, NO_COLOR: "1" }, timeout: 60_000 },
      (err, stdout) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout }),
    );
  });
}

type UiSession = { state: string; pid: number | null; requests: number; tools: number };
type AppStatus = { name: string; state: string; stateReason: string; pid: number | null; uiSession: UiSession | null };

/** A server (the app server by default) in `mcpd status --json`. */
async function appStatus(name = "app"): Promise<AppStatus> {
  const r = await cli(["status", "--json"]);
  expect(r.code).toBe(0);
  return (JSON.parse(r.stdout) as { servers: AppStatus[] }).servers.find((s) => s.name === name) as AppStatus;
}

/** Waits until the app server has no UI session and one process. */
async function noUiSession(what: string): Promise<void> {
  await until(async () => (await appStatus()).uiSession === null && appPids().length === 1, what);
}

const callText = async (c: Client, name: string): Promise<unknown> => (await c.callTool({ name, arguments: { to: "c3" } })).content;

describe("a shared app server's UI session", () => {
  it("is shown by mcpd status under its server (state, pid, its tools), in JSON and in the table", async () => {
    const ui = await client(true, "app");
    const text = await client(false, "app");
    expect(await callText(ui, "show-board")).toContainEqual({ type: "text", text: "board of solo" });
    expect(await callText(text, "board-text")).toEqual([{ type: "text", text: "board of solo (text)" }]);
    const s = await until(async () => {
      const v = await appStatus();
      return v.state === "ready" && v.uiSession?.state === "ready" ? v : undefined;
    }, "the server and its UI session ready");
    const pids = appPids();
    expect(pids).toHaveLength(2);
    expect([s.pid, s.uiSession?.pid].sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual(pids);
    // The UI session lists what the server offers a UI client: one tool more than the shared session.
    expect(s.uiSession?.tools).toBe(3);
    expect(s.uiSession?.requests).toBeGreaterThanOrEqual(1);
    const table = (await cli(["status"])).stdout;
    expect(table).toMatch(new RegExp(`^app \\(UI\\)\\s+ready\\s+stdio\\s+${s.uiSession?.pid}\\b`, "m"));
  });

  it("is made only for a server a UI client uses, and ends when the last UI client using it has gone: two sessions only while both kinds use it", async () => {
    await noUiSession("the UI session of the previous test ended with its client");
    // Clients without the extension: the shared session alone.
    const text = await client(false);
    expect(await callText(text, "app__board-text")).toEqual([{ type: "text", text: "board of solo (text)" }]);
    // A UI client whose view leaves the app server out opens no UI session of it (one of the server it does see).
    const elsewhere = await client(true, "--profile", "rest");
    expect((await elsewhere.listTools()).tools.map((t) => t.name)).toContain("other__echo");
    // Looked at before any other connection closes (a closing connection ends the UI sessions nobody uses).
    expect(appPids()).toHaveLength(1);
    await until(async () => (await appStatus("other")).uiSession?.state === "ready", "the other server's UI session");
    expect((await appStatus()).uiSession).toBeNull();
    // A UI client that uses the app server: its UI session, beside the shared one.
    const ui = await client(true, "app");
    expect(await callText(ui, "show-board")).toContainEqual({ type: "text", text: "board of solo" });
    expect((await appStatus()).uiSession?.state).toBe("ready");
    expect(appPids()).toHaveLength(2);
    // It goes: the UI session ends with it, while the other client keeps the shared session.
    await ui.close();
    await noUiSession("the UI session ended with its last UI client");
    expect((await appStatus()).state).toBe("ready");
    expect(await callText(text, "app__board-text")).toEqual([{ type: "text", text: "board of solo (text)" }]);
    await elsewhere.close();
    await until(async () => (await appStatus("other")).uiSession === null, "the other server's UI session ended");
  });

  it("serves UI clients alone with one process (the shared session parked), adds the shared one while a client without the extension uses the server, parks it again when that client has gone", async () => {
    await noUiSession("the UI sessions of the previous tests ended");
    // Only a UI client: its UI session serves it, and the shared session is parked (one process).
    const ui = await client(true, "app");
    expect(await callText(ui, "show-board")).toContainEqual({ type: "text", text: "board of solo" });
    const parked = await until(async () => {
      const v = await appStatus();
      return v.state === "stopped" && v.uiSession?.state === "ready" && appPids().length === 1 ? v : undefined;
    }, "the shared session parked, the UI session alone running");
    expect(parked.stateReason).toMatch(/^parked: only clients that declared the UI extension use the server/);
    expect(appPids()).toEqual([parked.uiSession?.pid]);
    expect((await ui.listTools()).tools.map((t) => t.name).sort()).toEqual(["board-text", "move", "show-board"]);
    // A UI client in the aggregate view: the UI session stands in for the parked one's resources; the app's view opens.
    const uiAggregate = await client(true);
    expect((await uiAggregate.listResources()).resources.map((r) => r.uri)).toContain("ui://app/board/view.html");
    const view = await uiAggregate.readResource({ uri: "ui://app/board/view.html" });
    expect(view.contents[0]).toMatchObject({ uri: "ui://app/board/view.html", text: expect.stringContaining('data-server="solo"') });
    expect(appPids()).toHaveLength(1);
    // A client without the extension comes (the aggregate view): the shared session starts again, two processes,
    // each kind of client offered its own.
    const aggregate = await client(false);
    const both = await until(async () => {
      const v = await appStatus();
      return v.state === "ready" && v.uiSession?.state === "ready" && appPids().length === 2 ? v : undefined;
    }, "both sessions running");
    const listed = (await aggregate.listTools()).tools.map((t) => t.name);
    expect(listed).toContain("app__board-text");
    expect(listed).not.toContain("app__show-board");
    expect(await callText(aggregate, "app__board-text")).toEqual([{ type: "text", text: "board of solo (text)" }]);
    expect(appPids()).toHaveLength(2);
    expect(appPids()).toEqual([both.pid, both.uiSession?.pid].sort((a, b) => (a ?? 0) - (b ?? 0)));
    expect((await ui.listTools()).tools.map((t) => t.name).sort()).toEqual(["board-text", "move", "show-board"]);
    expect((await aggregate.listTools()).tools.map((t) => t.name)).not.toContain("app__show-board");
    // It goes: the shared session is parked again.
    await aggregate.close();
    await until(async () => (await appStatus()).state === "stopped" && appPids().length === 1, "the shared session parked again");
    expect(await callText(ui, "show-board")).toContainEqual({ type: "text", text: "board of solo" });
    // The UI clients go: their session ends, and the (eager) shared session runs again.
    await uiAggregate.close();
    await ui.close();
    await until(async () => {
      const v = await appStatus();
      return v.uiSession === null && v.state === "ready" && appPids().length === 1;
    }, "the UI session ended, the shared session running again");
  });
});
