/**
 * A client and a daemon of different releases. The daemon's `mcpd/select` answer names the MCP revisions it
 * serves; `mcpd connect` and `McpdTransport` (of this release) meeting a daemon of the release before MCP
 * 2026-07-28 (tests/fixtures/servers/older-daemon.mjs replays its socket: no `protocolVersions`, "Not
 * initialized" for a 2026-era request) answer 2026-era requests themselves with -32022 saying to restart the
 * daemon: the official v2 SDK client negotiating (`auto`) falls back to 2025-11-25 and works, one pinned to
 * 2026-07-28 fails saying why. The reverse: a client of the older release (its `mcpd connect` piped bytes
 * after its own select) works with this daemon, in both eras. And `McpdTransport` carries the v2 SDK client
 * as it carries v1's.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { type Socket, connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpdTransport } from "@mcpd/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as V1StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectCommand, fixture, ROOT, startTestDaemon, until, type TestDaemon } from "./harness.js";
import { firstText, v2Client } from "../helpers/modern.js";

const OLDER_DAEMON = join(ROOT, "tests/fixtures/servers/older-daemon.mjs");
type Mode = "pin" | "auto";
const text = firstText;
const v2 = (mode: Mode) => v2Client("release-test", mode);

let d: TestDaemon;
let olderHome: string;
let older: ChildProcess;
const clients: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  d = await startTestDaemon({ fx: fixture("fx") });
  olderHome = mkdtempSync(join(tmpdir(), "mcpd-older-"));
  older = spawn(process.execPath, [OLDER_DAEMON, join(olderHome, "mcpd.sock")], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  older.stdout?.on("data", (c: Buffer) => {
    out += c.toString();
  });
  await until(() => out.includes("ready"), "the older daemon listening");
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await d?.stop();
  if (older?.exitCode === null) {
    const exited = new Promise((r) => older.once("exit", r));
    older.kill("SIGTERM");
    await exited;
  }
  rmSync(olderHome, { recursive: true, force: true });
});

/** `mcpd connect` (this release) onto the older daemon's socket. */
function connectToOlder(): ReturnType<typeof connectCommand> {
  const c = connectCommand({ home: olderHome, configFile: join(olderHome, "none.json") });
  c.env.MCPD_SOCKET = join(olderHome, "mcpd.sock");
  return c;
}

describe("this daemon", () => {
  it("names the revisions it serves in its mcpd/select answer", async () => {
    const raw = await d.raw();
    const r = await raw.request("mcpd/select", {});
    expect(r.result.protocolVersions).toEqual(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]);
    raw.close();
  });

  it.each(["pin", "auto"] as const)("carries the v2 SDK client (%s) through McpdTransport in the 2026 era", async (mode) => {
    const client = v2(mode);
    clients.push(client);
    await client.connect(new McpdTransport({ socketPath: d.socketPath }) as never);
    expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    expect(text(await client.callTool({ name: "fx__echo", arguments: { text: "v2 over McpdTransport" } }))).toBe("v2 over McpdTransport");
  });

  it("serves a client of the older release: its connect's select, then the bytes of a v2 client pinned to 2026-07-28", async () => {
    const client = v2("pin");
    clients.push(client);
    await client.connect(olderConnectTransport(d.socketPath) as never);
    expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    expect(text(await client.callTool({ name: "fx__echo", arguments: { text: "older connect" } }))).toBe("older connect");
  });
});

describe("a daemon of the release before MCP 2026-07-28", () => {
  it("mcpd connect: a v2 client pinned to 2026-07-28 is told to restart the daemon", async () => {
    const client = v2("pin");
    clients.push(client);
    await expect(client.connect(new StdioClientTransport(connectToOlder()))).rejects.toThrow(
      /older release that serves MCP 2025 revisions only; restart it \(`mcpd stop`/,
    );
  });

  it("mcpd connect: answers a 2026-era request -32022 with the 2025 revisions, and says so on stderr", async () => {
    const c = connectToOlder();
    const bridge = spawn(c.command, c.args, { env: c.env, stdio: ["pipe", "pipe", "pipe"] });
    let [stdout, stderr] = ["", ""];
    bridge.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
    bridge.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
    const exited = new Promise((r) => bridge.once("exit", r));
    const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28" };
    bridge.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: meta } })}\n`);
    bridge.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" })}\n`);
    await until(() => stdout.split("\n").length > 2, "both answers");
    const [discover, ping] = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(discover).toMatchObject({
      id: 1,
      error: { code: -32022, data: { supported: ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"], requested: "2026-07-28" } },
    });
    expect(ping).toEqual({ jsonrpc: "2.0", id: 2, result: {} }); // the daemon's own answer: everything else passes through
    bridge.stdin.end();
    await exited;
    expect(stderr).toContain("mcpd connect: the running mcpd daemon is an older release that serves MCP 2025 revisions only; restart it");
  });

  it("mcpd connect: a v2 client negotiating falls back to 2025-11-25 and works; so does the v1 client", async () => {
    const client = v2("auto");
    clients.push(client);
    await client.connect(new StdioClientTransport(connectToOlder()));
    expect(client.getNegotiatedProtocolVersion()).toBe("2025-11-25");
    expect(text(await client.callTool({ name: "fx__echo", arguments: { text: "fell back" } }))).toBe("fell back");
    const v1 = new V1Client({ name: "v1", version: "1" });
    clients.push(v1);
    await v1.connect(new V1StdioClientTransport(connectToOlder()));
    expect(text(await v1.callTool({ name: "fx__echo", arguments: { text: "v1" } }))).toBe("v1");
  });

  it("McpdTransport: pinned is told to restart the daemon; negotiating falls back to 2025-11-25", async () => {
    const socketPath = join(olderHome, "mcpd.sock");
    const pinned = v2("pin");
    clients.push(pinned);
    await expect(pinned.connect(new McpdTransport({ socketPath }) as never)).rejects.toThrow(/restart it \(`mcpd stop`, then `mcpd start`/);
    const auto = v2("auto");
    clients.push(auto);
    await auto.connect(new McpdTransport({ socketPath }) as never);
    expect(auto.getNegotiatedProtocolVersion()).toBe("2025-11-25");
    expect(text(await auto.callTool({ name: "fx__echo", arguments: { text: "auto" } }))).toBe("auto");
  });
});

/**
 * The transport an MCP client had through the older release's `mcpd connect`: it sent its own select (the
 * same line), dropped the answer without reading it, and piped every line after it both ways.
 */
function olderConnectTransport(socketPath: string) {
  let socket: Socket;
  let selected = false;
  let buffered = "";
  const t = {
    onmessage: undefined as ((m: unknown) => void) | undefined,
    onclose: undefined as (() => void) | undefined,
    onerror: undefined as ((e: Error) => void) | undefined,
    start: () =>
      new Promise<void>((resolve, reject) => {
        socket = connect(socketPath);
        socket.once("error", reject);
        socket.once("connect", () => {
          socket.write(`${JSON.stringify({ jsonrpc: "2.0", id: "mcpd-connect-select", method: "mcpd/select", params: {} })}\n`);
          resolve();
        });
        socket.on("close", () => t.onclose?.());
        socket.setEncoding("utf8");
        socket.on("data", (chunk: string) => {
          buffered += chunk;
          for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n")) {
            const line = buffered.slice(0, nl);
            buffered = buffered.slice(nl + 1);
            if (!selected) {
              selected = true; // the select's answer: dropped unread
              continue;
            }
            t.onmessage?.(JSON.parse(line));
          }
        });
      }),
    send: async (m: unknown) => void socket.write(`${JSON.stringify(m)}\n`),
    close: async () => void socket.destroy(),
  };
  return t;
}
