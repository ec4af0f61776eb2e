/** `mcpd config import`: regressions from the config review (transport type names, project directories). */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/parse-config.js";
import { importConfig, type ImportOptions } from "../../src/config-import/import-config.js";

let root: string;
let home: string;
let project: string;
let configFile: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "mcpd-imprev-"));
  home = join(root, "home");
  project = join(root, "project");
  configFile = join(home, ".config", "mcpd", "config.json");
  mkdirSync(home, { recursive: true });
  mkdirSync(project, { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function put(file: string, doc: unknown): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(doc));
}

function opts(from: ImportOptions["from"]): ImportOptions {
  return { from, home, cwd: project, platform: "linux", configFile, dryRun: false, env: {} };
}

const written = (): { mcpServers: Record<string, Record<string, unknown>> } => JSON.parse(readFileSync(configFile, "utf8"));

describe("regression: transport type names mcpd's own config accepts", () => {
  it('regression: "streamable_http" and "websocket" entries are imported, not skipped', async () => {
    put(join(home, ".claude.json"), {
      mcpServers: {
        a: { type: "streamable_http", url: "https://a.example.com/mcp", headers: { Authorization: "Bearer ${A_TOKEN}" } },
        b: { type: "websocket", url: "wss://b.example.com/mcp" },
        c: { type: "streamable-http", url: "https://c.example.com/mcp" },
      },
    });
    const report = await importConfig(opts("claude-code"));
    expect(report.scan.unusable).toEqual([]);
    const cfg = written();
    expect(cfg.mcpServers.a).toEqual({ type: "http", url: "https://a.example.com/mcp", headers: { Authorization: "Bearer ${A_TOKEN}" } });
    expect(cfg.mcpServers.b).toEqual({ type: "ws", url: "wss://b.example.com/mcp" });
    expect(cfg.mcpServers.c).toEqual({ type: "http", url: "https://c.example.com/mcp" });
    const loaded = parseConfig(readFileSync(configFile, "utf8"), configFile, { A_TOKEN: "t" });
    expect(loaded.servers.map((s) => [s.name, s.transport.type])).toEqual([
      ["a", "http"],
      ["b", "ws"],
      ["c", "http"],
    ]);
  });
});

describe("regression: Claude Code's project-scoped servers run in their project's directory", () => {
  it("regression: projects.<dir>.mcpServers and .mcp.json stdio entries get that directory as cwd unless they have one", async () => {
    const other = join(root, "elsewhere");
    put(join(home, ".claude.json"), {
      mcpServers: { user: { command: "node", args: ["user.js"] } },
      projects: {
        [other]: {
          mcpServers: {
            g: { command: "node", args: ["tools/mcp.js"] },
            own: { command: "node", args: ["x.js"], cwd: "/srv/own" },
            remote: { type: "http", url: "https://r.example.com/mcp", headers: { Authorization: "Bearer ${R_TOKEN}" } },
          },
        },
      },
    });
    put(join(project, ".mcp.json"), { mcpServers: { local: { command: "node", args: ["./server.js"] } } });
    const report = await importConfig(opts("claude-code"));
    const cfg = written();
    expect(cfg.mcpServers.user).toEqual({ command: "node", args: ["user.js"] });
    expect(cfg.mcpServers.g).toEqual({ command: "node", args: ["tools/mcp.js"], cwd: other });
    expect(cfg.mcpServers.own).toEqual({ command: "node", args: ["x.js"], cwd: "/srv/own" });
    expect(cfg.mcpServers.remote).not.toHaveProperty("cwd");
    expect(cfg.mcpServers.local).toEqual({ command: "node", args: ["./server.js"], cwd: project });
    const notes = Object.fromEntries(report.outcomes.map((o) => [o.name, o.notes.join(" | ")]));
    expect(notes.g).toContain(`runs in its project's directory ${other}`);
    // The daemon loads it with that directory.
    const loaded = parseConfig(readFileSync(configFile, "utf8"), configFile, { R_TOKEN: "t" });
    const g = loaded.servers.find((s) => s.name === "g")?.transport;
    expect(g && "cwd" in g ? g.cwd : undefined).toBe(other);
  });
});
