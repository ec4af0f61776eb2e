import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, statSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { backupName, importConfig, type ImportOptions } from "../../src/config-import/import-config.js";
import { mergeServers } from "../../src/config-import/merge-servers.js";
import { NEEDS_AUTH_NOTE, convertEntry, sanitizeServerName } from "../../src/config-import/normalize-entry.js";
import { emptyScan } from "../../src/config-import/import-types.js";

const FIXTURES = fileURLToPath(new URL("../../../tests/cli/fixtures/", import.meta.url));

let root: string;
let home: string;
let project: string;
let configFile: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "mcpd-imp-"));
  home = join(root, "home");
  project = join(root, "project");
  cpSync(join(FIXTURES, "home"), home, { recursive: true });
  cpSync(join(FIXTURES, "project"), project, { recursive: true });
  configFile = join(home, ".config", "mcpd", "config.json");
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function opts(from: ImportOptions["from"], extra: Partial<ImportOptions> = {}): ImportOptions {
  return { from, home, cwd: project, platform: "linux", configFile, dryRun: false, now: new Date("2025-01-02T03:04:05.678Z"), ...extra };
}

function written(): { mcpServers: Record<string, Record<string, unknown>> } {
  return JSON.parse(readFileSync(configFile, "utf8"));
}

function actions(report: Awaited<ReturnType<typeof importConfig>>): Record<string, string> {
  return Object.fromEntries(report.outcomes.map((o) => [`${o.name}@${o.origin.replace(root, "")}`, o.action]));
}

describe("import from Claude Desktop", () => {
  it("adds every server into a new config file, renaming invalid names, keeping env values", async () => {
    const report = await importConfig(opts("claude-desktop"));
    expect(report.scan.read).toEqual([join(home, ".config/Claude/claude_desktop_config.json")]);
    expect(report.outcomes.map((o) => [o.name, o.action])).toEqual([
      ["filesystem", "added"],
      ["github", "added"],
      ["weird-name", "added"],
    ]);
    expect(report.outcomes[2]?.notes[0]).toMatch(/renamed from "weird.name"/);
    expect(report.written).toBe(true);
    expect(report.backup).toBeUndefined();
    const cfg = written();
    expect(cfg.mcpServers.github).toEqual({
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-github"],
      env: { GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_desktopSecret123" },
    });
    expect(statSync(configFile).mode & 0o777).toBe(0o600);
  });

  it("reads the macOS location on darwin", async () => {
    const mac = join(home, "Library", "Application Support", "Claude");
    mkdirSync(mac, { recursive: true });
    writeFileSync(join(mac, "claude_desktop_config.json"), JSON.stringify({ mcpServers: { mac: { command: "x" } } }));
    const report = await importConfig(opts("claude-desktop", { platform: "darwin" }));
    expect(report.outcomes.map((o) => o.name)).toEqual(["mac"]);
  });

  it("backs up an existing config, never overwrites a different server, and accepts identical ones", async () => {
    mkdirSync(join(home, ".config", "mcpd"), { recursive: true });
    const before = JSON.stringify({
      mcpd: { logLevel: "debug" },
      mcpServers: { filesystem: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/Documents"] } },
      servers: { github: { command: "my-github" } },
    });
    writeFileSync(configFile, before);
    const report = await importConfig(opts("claude-desktop"));
    expect(report.outcomes.map((o) => [o.name, o.action])).toEqual([
      ["filesystem", "identical"],
      ["github", "skipped"],
      ["weird-name", "added"],
    ]);
    expect(report.outcomes[1]?.reason).toMatch(/a different "github" is already in mcpd's config/);
    expect(report.backup).toBe(`${configFile}.bak-20250102T030405Z`);
    expect(readFileSync(report.backup as string, "utf8")).toBe(before);
    const cfg = written() as unknown as Record<string, Record<string, unknown>>;
    expect(cfg.mcpd).toEqual({ logLevel: "debug" });
    expect(cfg.servers).toEqual({ github: { command: "my-github" } });
    expect(Object.keys(cfg.mcpServers as object)).toEqual(["filesystem", "weird-name"]);
  });

  it("writes nothing on --dry-run or when nothing is new", async () => {
    const dry = await importConfig(opts("claude-desktop", { dryRun: true }));
    expect(dry.written).toBe(false);
    expect(readdirSync(home)).not.toContain("mcpd");
    await importConfig(opts("claude-desktop"));
    const again = await importConfig(opts("claude-desktop"));
    expect(again.written).toBe(false);
    expect(again.outcomes.every((o) => o.action === "identical")).toBe(true);
    expect(readdirSync(join(home, ".config", "mcpd")).filter((f) => f.includes(".bak-"))).toEqual([]);
  });

  it("refuses to merge into a config file mcpd would refuse as it is, on a dry run too; nothing written", async () => {
    mkdirSync(join(home, ".config", "mcpd"), { recursive: true });
    const before = JSON.stringify({ mcpServers: { mine: { command: "x", timeout: "slow" } } });
    writeFileSync(configFile, before);
    for (const dryRun of [true, false]) {
      await expect(importConfig(opts("claude-desktop", { dryRun, env: {} }))).rejects.toThrow(
        /config file is not valid as it is; fix it before importing:\n.*server "mine": "timeout" must be a positive integer/,
      );
    }
    expect(readFileSync(configFile, "utf8")).toBe(before);
    expect(readdirSync(join(home, ".config", "mcpd"))).toEqual(["config.json"]);
  });

  it("regression: an entry mcpd would refuse is skipped with the reason, the same on a dry run; the others are imported", async () => {
    const file = join(root, "mixed.json");
    writeFileSync(
      file,
      JSON.stringify({
        mcpServers: {
          api: { url: "${API_BASE_URL:-https://api.example.com}/mcp" },
          bad: { url: "mcp.example.com/mcp" },
          later: { url: "${LATER_URL}/mcp" },
          badenv: { command: "x", env: { "A=B": "1" } },
        },
      }),
    );
    const dry = await importConfig(opts("claude-desktop", { file, dryRun: true, env: {} }));
    const real = await importConfig(opts("claude-desktop", { file, env: {} }));
    for (const r of [dry, real]) {
      expect(r.outcomes.map((o) => [o.name, o.action, o.notes, o.entry])).toEqual([
        ["api", "added", [NEEDS_AUTH_NOTE("api")], { url: "${API_BASE_URL:-https://api.example.com}/mcp" }],
        [
          "later",
          "added",
          [NEEDS_AUTH_NOTE("later"), '"url" uses ${LATER_URL}, which is not set here: the daemon needs it in its environment'],
          { url: "${LATER_URL}/mcp" },
        ],
      ]);
      expect(r.scan.unusable).toEqual([
        { name: "bad", origin: file, reason: '"url" is not a valid URL: "mcp.example.com/mcp"' },
        { name: "badenv", origin: file, reason: '"env" has an invalid name "A=B"' },
      ]);
    }
    expect(dry.written).toBe(false);
    expect(real.written).toBe(true);
    expect(written().mcpServers).toEqual({
      api: { url: "${API_BASE_URL:-https://api.example.com}/mcp" },
      later: { url: "${LATER_URL}/mcp" },
    });
  });
});

describe("import from Claude Code", () => {
  it("reads user, per-project and .mcp.json servers; first of a name wins", async () => {
    const report = await importConfig(opts("claude-code"));
    expect(actions(report)).toEqual({
      "memory@/home/.claude.json": "added",
      "sentry@/home/.claude.json (project /home/me/proj-a)": "added",
      "memory@/home/.claude.json (project /home/me/proj-b)": "skipped",
      "legacy@/home/.claude.json (project /home/me/proj-b)": "added",
      "db@/project/.mcp.json": "added",
      // Project-scoped: it runs in /project (its cwd), so it differs from the user-scope one.
      "memory@/project/.mcp.json": "skipped",
    });
    const cfg = written();
    expect(cfg.mcpServers.sentry).toEqual({
      type: "http",
      url: "https://mcp.sentry.dev/mcp",
      headers: { Authorization: "Bearer ${SENTRY_TOKEN}" },
    });
    expect(cfg.mcpServers.legacy).toEqual({ type: "sse", url: "http://127.0.0.1:9/sse" });
    expect(cfg.mcpServers.db?.args).toContain("${DB_URL:-postgres://localhost/dev}");
    expect(cfg.mcpServers.memory).toEqual({ command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"] });
  });

  it("reads only --file when given", async () => {
    const report = await importConfig(opts("claude-code", { file: join(project, ".mcp.json") }));
    expect(report.scan.read).toEqual([join(project, ".mcp.json")]);
    expect(report.outcomes.map((o) => o.name)).toEqual(["db", "memory"]);
  });
});

describe("import from Cursor", () => {
  it("reads the global and project files, substitutes Cursor's variables, reports what it cannot use", async () => {
    const report = await importConfig(opts("cursor"));
    expect(report.outcomes.map((o) => [o.name, o.action])).toEqual([
      ["context7", "added"],
      ["local-tools", "added"],
      ["project-tools", "added"],
    ]);
    expect(report.scan.unusable).toEqual([
      { name: "needs-workspace", origin: join(home, ".cursor/mcp.json"), reason: expect.stringMatching(/\$\{workspaceFolder\}/) },
    ]);
    const local = report.outcomes.find((o) => o.name === "local-tools");
    expect(local?.notes.join(" ")).toMatch(/"envFile" is not supported/);
    const cfg = written();
    expect(cfg.mcpServers.context7).toEqual({ url: "https://mcp.context7.com/mcp", headers: { CONTEXT7_API_KEY: "${env:CONTEXT7_KEY}" } });
    expect(cfg.mcpServers["local-tools"]).toEqual({ command: "node", args: [`${home}/tools/server.js`] });
    expect(cfg.mcpServers["project-tools"]).toEqual({ command: "node", args: [`${project}/scripts/mcp.js`] });
  });
});

describe("import from VS Code", () => {
  it("reads .vscode/mcp.json (JSONC) and settings.json mcp.servers; inputs are ignored with a warning", async () => {
    const report = await importConfig(opts("vscode"));
    expect(report.outcomes.map((o) => [o.name, o.action])).toEqual([
      ["fetch", "added"],
      ["project", "added"],
      ["time", "added"],
    ]);
    expect(report.scan.warnings.join("\n")).toMatch(/"inputs" ignored/);
    expect(report.scan.unusable.map((u) => u.name)).toEqual(["github"]);
    expect(report.scan.unusable[0]?.reason).toMatch(/\$\{input:gh-token\}/);
    const cfg = written();
    expect(cfg.mcpServers.fetch).toEqual({ command: "uvx", args: ["mcp-server-fetch"] });
    expect(cfg.mcpServers.project).toEqual({ command: "node", args: [`${project}/server.js`], env: { DEBUG: "1" } });
    expect(cfg.mcpServers.time?.args).toEqual(["mcp-server-time", "--local-timezone=Europe/Paris"]);
  });

  it("names the file, line and column of a syntax error", async () => {
    writeFileSync(join(project, ".vscode", "mcp.json"), '{\n  "servers": {\n    "a": { "command": x }\n  }\n}');
    await expect(importConfig(opts("vscode"))).rejects.toThrow(/\.vscode\/mcp\.json:3:\d+/);
  });
});

describe("pieces", () => {
  it("sanitizes names", () => {
    expect(sanitizeServerName("ok_name-1")).toBe("ok_name-1");
    expect(sanitizeServerName("a.b c")).toBe("a-b-c");
    expect(sanitizeServerName("x".repeat(60))).toHaveLength(48);
  });

  it("rejects entries that say nothing about how to reach a server", () => {
    const scan = emptyScan();
    const rules = { vars: {}, bareIsEnv: true };
    convertEntry("a", { foo: 1 }, "f", rules, scan);
    convertEntry("b", "str", "f", rules, scan);
    convertEntry("c", { type: "carrier-pigeon", url: "x" }, "f", rules, scan);
    convertEntry("d", { command: "x", args: "notarray" }, "f", rules, scan);
    convertEntry("e", { command: "x", disabled: true, autoApprove: ["t"], weird: 1 }, "f", rules, scan);
    expect(scan.unusable.map((u) => [u.name, u.reason])).toEqual([
      ["a", 'it has neither "command" nor "url"'],
      ["b", "its entry is not an object"],
      ["c", 'its type "carrier-pigeon" is not one mcpd knows'],
      ["d", '"args" is not an array'],
    ]);
    expect(scan.servers[0]?.entry).toEqual({ command: "x", enabled: false });
    expect(scan.servers[0]?.notes).toEqual(['ignored "weird"']);
  });

  it("marks an imported URL-only server as needing `mcpd auth`, not one with headers, a ws server or a local one", () => {
    const scan = emptyScan();
    const rules = { vars: {}, bareIsEnv: true };
    convertEntry("linear", { type: "http", url: "https://mcp.linear.app/mcp" }, "f", rules, scan);
    convertEntry("legacy", { type: "sse", url: "https://mcp.example.com/sse" }, "f", rules, scan);
    convertEntry("keyed", { url: "https://api.example.com/mcp", headers: { Authorization: "Bearer ${TOKEN}" } }, "f", rules, scan);
    convertEntry("socket", { type: "ws", url: "wss://ws.example.com/mcp" }, "f", rules, scan);
    convertEntry("local", { command: "x" }, "f", rules, scan);
    expect(scan.servers.map((s) => [s.name, s.notes])).toEqual([
      ["linear", [NEEDS_AUTH_NOTE("linear")]],
      ["legacy", [NEEDS_AUTH_NOTE("legacy")]],
      ["keyed", []],
      ["socket", []],
      ["local", []],
    ]);
    expect(NEEDS_AUTH_NOTE("linear")).toContain("`mcpd auth linear`");
  });

  it("merge refuses a config whose mcpServers is not an object", () => {
    expect(() => mergeServers({ mcpServers: [] }, [])).toThrow(/"mcpServers" is not an object/);
  });

  it("backup names sort by time", () => {
    expect(backupName("/c/config.json", new Date("2025-11-30T01:02:03.004Z"))).toBe("/c/config.json.bak-20251130T010203Z");
  });
});
