/**
 * Helpers for the StdioTransport tests: start fixture servers as real processes, track every process and
 * temp dir a test creates, and tear them down (asserting nothing is left running).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import type { CallToolResult, InitializeResult, JsonObject } from "@mcpd/protocol";
import { StdioTransport, type StdioTransportOptions } from "../../src/stdio/stdio-transport.js";
import type { StdioServerConfig, TransportRequestOptions } from "../../src/transport.js";
import { createTempDir, fixturePath, isAlive, waitFor, type TempDir } from "../../../tests/helpers/process.js";

export const FIXTURE = fixturePath("mcp-fixture.mjs");
export const NODE = process.execPath;

/** One message line of a fixture's --log file. */
export type Logged = { id?: number | string; method?: string; params?: JsonObject; result?: JsonObject; error?: { code: number } };

/** Every message the fixture logged so far (the file may not exist yet). */
export function readLog(file: string): Logged[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Logged);
}

/** The pid a fixture wrote to `file`, once it is there. */
export function readPid(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  const n = Number(readFileSync(file, "utf8"));
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

export function textOf(result: unknown): string {
  const content = (result as CallToolResult).content;
  return String(content?.[0]?.text ?? "");
}

export class Harness {
  readonly transports: StdioTransport[] = [];
  /** Extra pids (grandchildren) that must be gone after cleanup. */
  readonly pids: number[] = [];
  private readonly dirs: TempDir[] = [];

  async tempDir(): Promise<string> {
    const dir = await createTempDir("mcpd-stdio-");
    this.dirs.push(dir);
    return dir.path;
  }

  /** A transport (not connected) for any config, tracked for cleanup. */
  make(config: StdioServerConfig, options: StdioTransportOptions = {}): StdioTransport {
    const t = new StdioTransport(config, { closeGraceMs: 500, ...options });
    this.transports.push(t);
    return t;
  }

  /** A connected transport to mcp-fixture with `args`; `log` is the path of its --log file. */
  async fixture(
    args: string[] = [],
    options: StdioTransportOptions = {},
    config: Partial<StdioServerConfig> = {},
  ): Promise<{ t: StdioTransport; log: string }> {
    const log = join(await this.tempDir(), "received.jsonl");
    const t = this.make({ command: NODE, args: [FIXTURE, "--log", log, ...args], ...config }, options);
    await t.connect();
    return { t, log };
  }

  /** Closes every transport, then asserts that none of their processes (nor tracked extra pids) lives. */
  async cleanup(): Promise<void> {
    const transports = this.transports.splice(0);
    await Promise.all(transports.map((t) => t.close()));
    for (const t of transports) {
      expect(t.connected).toBe(false);
      if (t.pid !== undefined) expect(isAlive(t.pid), `server pid ${t.pid} still alive`).toBe(false);
    }
    for (const pid of this.pids.splice(0)) expect(isAlive(pid), `pid ${pid} still alive`).toBe(false);
    await Promise.all(this.dirs.splice(0).map((d) => d.remove()));
  }
}

export const CLIENT_CAPABILITIES = { roots: { listChanged: true }, sampling: {}, elicitation: {} };

/** The MCP handshake: initialize, then notifications/initialized. */
export async function initialize(t: StdioTransport, options: TransportRequestOptions = {}): Promise<InitializeResult> {
  const params = { protocolVersion: "2025-11-25", capabilities: CLIENT_CAPABILITIES, clientInfo: { name: "stdio-test", version: "0.0.0" } };
  const result = await t.request<InitializeResult>("initialize", params, options);
  await t.notify("notifications/initialized");
  return result;
}

export function callTool(
  t: StdioTransport,
  name: string,
  args: JsonObject = {},
  options: TransportRequestOptions = {},
): Promise<CallToolResult> {
  return t.request<CallToolResult>("tools/call", { name, arguments: args }, options);
}

/** Waits until the fixture has logged a message matching `match`, and returns it. */
export function waitForLogged(log: string, match: (m: Logged) => boolean, message = "logged message"): Promise<Logged> {
  return waitFor(() => readLog(log).find(match), { message });
}

export { isAlive, waitFor };
