/**
 * `mcpd config import` and the tools a client had switched off: a server's `disabledTools` list (the
 * files of Windsurf, Roo Code, Kiro and Cursor-compatible ones) and Claude Code's `permissions.deny` rules
 * for MCP tools become server-level `"tools": {"exclude": [...]}` filters, which the daemon loads; what
 * cannot be carried over (Cursor's and VS Code's own toggle stores, approval lists) is said.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/parse-config.js";
import { importConfig, type ImportOptions } from "../../src/config-import/import-config.js";
import { NameFilter } from "../../src/router/name-filter.js";

let root: string;
let home: string;
let project: string;
let configFile: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "mcpd-impf-"));
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

describe("a server's disabledTools", () => {
  it("becomes a tools exclude filter of exact names (wildcard characters escaped) that the daemon loads", async () => {
    put(join(home, ".cursor", "mcp.json"), {
      mcpServers: {
        gh: { command: "npx", args: ["-y", "gh-mcp"], disabledTools: ["delete_repo", "odd*name"] },
        plain: { command: "node", args: ["p.js"] },
        bad: { command: "node", args: ["b.js"], disabledTools: "delete_repo" },
      },
    });
    const report = await importConfig(opts("cursor"));
    const cfg = written();
    expect(cfg.mcpServers.gh).toEqual({ command: "npx", args: ["-y", "gh-mcp"], tools: { exclude: ["delete_repo", "odd\\*name"] } });
    expect(cfg.mcpServers.plain).toEqual({ command: "node", args: ["p.js"] });
    expect(cfg.mcpServers.bad).toEqual({ command: "node", args: ["b.js"] });
    const notes = Object.fromEntries(report.outcomes.map((o) => [o.name, o.notes.join(" | ")]));
    expect(notes.gh).toContain(`its switched-off tools (2) became "tools": {"exclude": [...]}: no mcpd client sees them`);
    expect(notes.bad).toContain(`ignored "disabledTools": not a list of tool names`);
    // Cursor's own per-tool toggles live elsewhere: said once.
    expect(report.scan.warnings).toEqual([
      expect.stringMatching(/^Cursor keeps the tools you switch off in its own settings store, not in mcp\.json/),
    ]);

    // The daemon loads it, and the filter hides exactly those names.
    const loaded = parseConfig(readFileSync(configFile, "utf8"), configFile, {});
    const filter = NameFilter.compile(loaded.servers.find((s) => s.name === "gh")?.filters?.tools) as NameFilter;
    expect(["delete_repo", "odd*name", "oddXname", "create_issue"].map((n) => filter.allows(n))).toEqual([false, false, true, true]);
  });

  it("VS Code: says its tool toggles are not imported", async () => {
    put(join(project, ".vscode", "mcp.json"), { servers: { time: { command: "uvx", args: ["mcp-server-time"] } } });
    const report = await importConfig(opts("vscode"));
    expect(report.scan.warnings.join("\n")).toMatch(
      /^VS Code keeps the tools you switch off in its own settings store, not in mcp\.json or settings\.json/m,
    );
  });
});

describe("Claude Code's permission rules", () => {
  it("deny rules for MCP tools become exclude filters of the servers they name; what cannot be carried over is said", async () => {
    put(join(home, ".claude.json"), {
      mcpServers: { github: { command: "npx", args: ["-y", "gh-mcp"] }, my_db: { command: "db-mcp" } },
      projects: { [project]: { allowedTools: ["mcp__github__list_issues", "Bash(git:*)"] } },
    });
    put(join(home, ".claude", "settings.json"), {
      permissions: { deny: ["mcp__github__delete_repo", "Bash(rm:*)", "mcp__gone__x"], allow: ["mcp__github__get_issue"] },
    });
    put(join(project, ".claude", "settings.local.json"), { permissions: { deny: ["mcp__github__admin_*", "mcp__my_db"] } });
    const report = await importConfig(opts("claude-code"));
    const cfg = written();
    expect(cfg.mcpServers.github?.tools).toEqual({ exclude: ["delete_repo", "admin_*"] });
    expect(cfg.mcpServers.my_db?.tools).toEqual({ exclude: ["*"] });
    const gh = report.outcomes.find((o) => o.name === "github");
    expect(gh?.notes.join(" ")).toContain(`Claude Code's deny rules (`);
    expect(gh?.notes.join(" ")).toContain(`became "tools": {"exclude": ["delete_repo","admin_*"]}`);
    expect(report.scan.warnings).toEqual([
      `Claude Code denies tools of "gone", which no imported server is: not carried over`,
      expect.stringMatching(
        /^Claude Code's 2 approved MCP tool rule\(s\) \(permissions\.allow, allowedTools\) are not carried over: they let calls run without asking and hide nothing/,
      ),
    ]);
    expect(report.scan.read).toEqual(
      expect.arrayContaining([join(home, ".claude", "settings.json"), join(project, ".claude", "settings.local.json")]),
    );
    const loaded = parseConfig(readFileSync(configFile, "utf8"), configFile, {});
    expect(loaded.servers.find((s) => s.name === "github")?.filters).toEqual({ tools: { exclude: ["delete_repo", "admin_*"] } });
  });
});
