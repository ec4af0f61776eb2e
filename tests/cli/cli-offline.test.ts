import { spawnSync } from "node:child_process";
import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CliWorld, MCPD_BIN } from "./cli-harness.js";
import { parsePlist } from "./plist-parse.js";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "fixtures");
const COMMANDS = [
  "start",
  "stop",
  "status",
  "restart",
  "enable",
  "disable",
  "reload",
  "logs",
  "tools",
  "prompts",
  "resources",
  "call",
  "connect",
  "http",
  "config",
  "install-service",
  "uninstall-service",
];

let world: CliWorld;
beforeEach(() => {
  world = new CliWorld();
});
afterEach(async () => {
  await world.dispose();
});

describe("help, version and usage errors", () => {
  it("--version prints the package version", async () => {
    const version = JSON.parse(readFileSync(join(dirname(MCPD_BIN), "..", "package.json"), "utf8")).version;
    expect(await world.run(["--version"])).toMatchObject({ code: 0, stdout: `${version}\n` });
  });

  it("help lists every command; help COMMAND and --help on every command print its usage", async () => {
    const help = await world.run(["help"]);
    expect(help.code).toBe(0);
    for (const c of COMMANDS) expect(help.stdout).toMatch(new RegExp(`^  ${c} `, "m"));
    expect(help.stdout).toContain("3 daemon not running");
    const runs: Array<[string, string[]]> = [
      ...COMMANDS.map((c): [string, string[]] => [c, [c, "--help"]]),
      ["call", ["help", "call"]],
      ["config", ["help", "config"]],
    ];
    const results = await Promise.all(runs.map(([, args]) => world.run(args)));
    results.forEach((r, i) => {
      const [c, args] = runs[i] as [string, string[]];
      expect(r.code, args.join(" ")).toBe(0);
      expect(r.stdout, args.join(" ")).toMatch(new RegExp(`^Usage: mcpd ${c}`));
    });
  });

  it("usage errors exit 2 with a hint", async () => {
    const cases: Array<[string[], RegExp, string]> = [
      [["strat"], /unknown command "strat" \(did you mean 'start'\?\)/, "Run 'mcpd help' for usage."],
      [["status", "--jsno"], /unknown option --jsno/, "Run 'mcpd help status' for usage."],
      [["enable"], /missing argument/, "Run 'mcpd help enable' for usage."],
      [["stop", "now"], /unexpected argument: now/, "Run 'mcpd help stop' for usage."],
      [["logs", "-n", "x"], /--lines needs a whole number \(0 or more\), got "x"/, "Run 'mcpd help logs' for usage."],
      [["start", "--log-level", "loud"], /--log-level must be one of/, "Run 'mcpd help start' for usage."],
      [["config", "frob"], /unknown config subcommand "frob"/, "Run 'mcpd help config' for usage."],
      [
        ["config", "import", "--from", "emacs"],
        /--from must be one of claude-desktop, claude-code, cursor, vscode/,
        "Run 'mcpd help config' for usage.",
      ],
      [["config", "import"], /needs --from/, "Run 'mcpd help config' for usage."],
      [["install-service", "--systemd", "--launchd"], /not both/, "Run 'mcpd help install-service' for usage."],
      [["help", "nope"], /unknown command "nope"/, "Run 'mcpd help' for usage."],
    ];
    const runs = await Promise.all(cases.map(([args]) => world.run(args)));
    runs.forEach((r, i) => {
      const [args, message, hint] = cases[i] as [string[], RegExp, string];
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr, args.join(" ")).toMatch(message);
      expect(r.stderr, args.join(" ")).toContain(hint);
      expect(r.stdout, args.join(" ")).toBe("");
    });
    const bare = await world.run([]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain("Usage: mcpd <command>");
  });

  it("an MCPD_LOG_LEVEL that is not a level stops the daemon's start, naming the variable and the levels", async () => {
    world.writeConfig({});
    const r = await world.run(["start", "--foreground"], { env: { ...world.env, MCPD_LOG_LEVEL: "loud" } });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('MCPD_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"');
    expect(existsSync(join(world.mcpdHome, "mcpd.sock"))).toBe(false);
    // --log-level, when given, is the setting that counts.
    const named = await world.run(["start", "--foreground", "--log-level", "warn"], {
      env: { ...world.env, MCPD_LOG_LEVEL: "loud", MCPD_CONFIG: join(world.root, "missing.json") },
    });
    expect(named.stderr).not.toContain("MCPD_LOG_LEVEL");
  });
});

describe("mcpd config", () => {
  it("path prints every resolved path", async () => {
    const r = await world.run(["config", "path"]);
    expect(r.code).toBe(0);
    for (const [key, value] of [
      ["configFile", world.configFile],
      ["socketPath", join(world.mcpdHome, "mcpd.sock")],
      ["pidFile", join(world.mcpdHome, "mcpd.pid")],
      ["logFile", join(world.mcpdHome, "mcpd.log")],
      ["stateDir", world.mcpdHome],
    ]) {
      expect(r.stdout).toMatch(new RegExp(`^${key} +${value}$`, "m"));
    }
  });

  it("validate: valid (secrets redacted), invalid (exit 1, names the problem), named file missing", async () => {
    world.writeConfig({
      a: { command: "node", args: ["x.js", "--token=s3cr3t"], env: { K: "s3cr3t-env" } },
      r: { url: "https://u:s3cr3t-pw@example.com/mcp" },
    });
    const ok = await world.run(["config", "validate"]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`valid: ${world.configFile} (2 servers)`);
    expect(ok.stdout).toMatch(/^a +stdio +yes +node x\.js/m);
    expect(ok.stdout).not.toContain("s3cr3t");

    const bad = join(world.root, "bad.json");
    writeFileSync(bad, '{"mcpServers": {"x": {"command": 5}}}');
    const invalid = await world.run(["config", "validate", bad]);
    expect(invalid.code).toBe(1);
    expect(invalid.stdout).toMatch(/invalid: .*bad\.json/);
    expect(invalid.stdout).toMatch(/command/);

    const missing = await world.run(["config", "validate", join(world.root, "nope.json")]);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toMatch(/not found/);
  });

  describe("import", () => {
    let project: string;
    beforeEach(() => {
      cpSync(join(FIXTURES, "home"), world.home, { recursive: true });
      project = join(world.root, "project");
      cpSync(join(FIXTURES, "project"), project, { recursive: true });
    });

    const servers = (): Record<string, Record<string, unknown>> => JSON.parse(readFileSync(world.configFile, "utf8")).mcpServers;

    it("from Claude Desktop: adds, backs up, never overwrites, dry-run writes nothing", async () => {
      world.writeConfig({ github: { command: "my-own-github" } });
      const dry = await world.run(["config", "import", "--from", "claude-desktop", "--dry-run"], { cwd: project });
      expect(dry.code).toBe(0);
      expect(dry.stdout).toContain("would add filesystem");
      // Claude Desktop starts servers with a minimal environment, like mcpd's allowlist: nothing to say.
      expect(dry.stdout).not.toContain("whole environment");
      expect(dry.stdout).toContain("(dry run:");
      // Claude Desktop passes a minimal environment, as mcpd does: nothing to say.
      expect(dry.stdout).not.toContain("environment:");
      expect(Object.keys(servers())).toEqual(["github"]);

      const r = await world.run(["config", "import", "--from", "claude-desktop"], { cwd: project });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("added filesystem");
      expect(r.stdout).toMatch(/skipped github: a different "github" is already in mcpd's config/);
      expect(r.stdout).toMatch(/added weird-name .*\n +note: renamed from "weird.name"/);
      expect(r.stdout).toMatch(/2 added, 1 skipped, 0 unchanged; wrote .*\(backup: .*config\.json\.bak-\d{8}T\d{6}Z\)/);
      expect(servers().github).toEqual({ command: "my-own-github" });
      expect(Object.keys(servers())).toEqual(["github", "filesystem", "weird-name"]);
      const backups = readdirSync(world.root).filter((f) => f.startsWith("config.json.bak-"));
      expect(backups).toHaveLength(1);
      expect(JSON.parse(readFileSync(join(world.root, backups[0] as string), "utf8")).mcpServers).toEqual({
        github: { command: "my-own-github" },
      });

      // The imported file loads.
      expect((await world.run(["config", "validate"])).code).toBe(0);
      const again = await world.run(["config", "import", "--from", "claude-desktop"], { cwd: project });
      expect(again.stdout).toMatch(/0 added, 1 skipped, 2 unchanged; .* not changed/);
    });

    it("from Claude Code: ~/.claude.json (user and projects) and ./.mcp.json", async () => {
      const r = await world.run(["config", "import", "--from", "claude-code"], { cwd: project });
      expect(r.code).toBe(0);
      expect(Object.keys(servers()).sort()).toEqual(["db", "legacy", "memory", "sentry"]);
      expect(r.stdout).toMatch(/skipped memory: a different "memory" was imported from .*\.claude\.json/);
      expect(servers().sentry?.headers).toEqual({ Authorization: "Bearer ${SENTRY_TOKEN}" });
      // Unset in this environment: said, not fatal.
      expect(r.stdout).toMatch(/warning: with this shell's environment the daemon would refuse the file: .*SENTRY_TOKEN/);
      // Claude Code gives its servers its whole environment; mcpd's default is an allowlist: the import says
      // which local servers that concerns and how to pass a variable or inherit everything.
      expect(r.stdout).toMatch(/environment: Claude Code starts its local servers with its whole environment/);
      expect(r.stdout).toMatch(/If .*\bdb\b.* needs another variable you export/);
      expect(r.stdout).toContain('"envMode": "inherit"');
    });

    it("from Cursor: ~/.cursor/mcp.json and ./.cursor/mcp.json", async () => {
      const r = await world.run(["config", "import", "--from", "cursor"], { cwd: project });
      expect(r.code).toBe(0);
      expect(Object.keys(servers()).sort()).toEqual(["context7", "local-tools", "project-tools"]);
      expect(r.stdout).toMatch(/skipped needs-workspace: it uses \$\{workspaceFolder\}/);
      expect(servers()["project-tools"]?.args).toEqual([`${project}/scripts/mcp.js`]);
    });

    it("from VS Code: ./.vscode/mcp.json and user settings.json; inputs ignored with a warning", async () => {
      const r = await world.run(["config", "import", "--from", "vscode"], { cwd: project });
      expect(r.code).toBe(0);
      expect(Object.keys(servers()).sort()).toEqual(["fetch", "project", "time"]);
      expect(r.stdout).toMatch(/warning: .*mcp\.json: "inputs" ignored/);
      expect(r.stdout).toMatch(/skipped github: it uses \$\{input:gh-token\}/);
    });

    it("regression: a url with ${VAR:-default} imports with VAR unset; dry run and import run the same checks and show the entries they write", async () => {
      const source = join(world.root, "vars", ".mcp.json");
      cpSync(join(FIXTURES, "import-vars"), join(world.root, "vars"), { recursive: true });
      const env = { ...world.env };
      for (const k of ["API_BASE_URL", "API_TOKEN", "GATEWAY_URL", "TOOLS_BIN", "TOOLS_TOKEN", "DB_URL"]) delete env[k];
      const args = ["config", "import", "--from", "claude-code", "--file", source];
      const dry = await world.run([...args, "--dry-run"], { env });
      expect(dry.code, dry.stderr).toBe(0);
      expect(existsSync(world.configFile)).toBe(false);
      const real = await world.run(args, { env });
      expect(real.code, real.stderr).toBe(0);

      // The same verdict on every server, in the same words, and the same entries shown.
      const verdicts = (out: string): string[] =>
        out
          .split("\n")
          // Only the real import writes, and then checks the written file with this shell's variables.
          .filter(
            (l) =>
              !/^(warning: with this shell|Run 'mcpd reload')/.test(l) && !l.startsWith(world.configFile) && !/ (to add|added), /.test(l),
          )
          .map((l) => l.replace(/^would add /, "added "));
      expect(verdicts(dry.stdout)).toEqual(verdicts(real.stdout));
      expect(dry.stdout).toMatch(/5 to add, 1 skipped, 0 unchanged \(dry run: /);
      expect(real.stdout).toMatch(/5 added, 1 skipped, 0 unchanged; wrote /);
      for (const out of [dry.stdout, real.stdout]) {
        expect(out).toMatch(/^skipped broken: "url" is not a valid URL: "mcp\.example\.com\/mcp" \(from .*\.mcp\.json\)$/m);
        // The entry each server gets, as written: references kept, so the daemon resolves them when it loads.
        expect(out).toMatch(
          /^(would add|added) api \(from .*\)\n {4}note: no credentials in its entry: .* `mcpd auth api`\n {4}\{"type":"http","url":"\$\{API_BASE_URL:-https:\/\/api\.example\.com\}\/mcp"\}$/m,
        );
        expect(out).toContain(
          `{"type":"sse","url":"\${API_BASE_URL:-https://api.example.com}/sse","headers":{"Authorization":"Bearer \${API_TOKEN:-}","X-Team":"***"}}`,
        );
        expect(out).toContain(
          `{"command":"\${TOOLS_BIN:-/usr/local/bin/tools-mcp}","args":["--root","\${HOME}","--api-key=***"],"env":{"TOOLS_TOKEN":"\${TOOLS_TOKEN}","LITERAL_SECRET":"***"},"cwd":${JSON.stringify(dirname(source))}}`,
        );
        // Unset without a default: not an error here (the daemon's environment may have it), but said.
        expect(out).toMatch(
          /^(would add|added) gateway .*\n +note: no credentials in its entry: .*\n +note: "url" uses \$\{GATEWAY_URL\}, which is not set here: the daemon needs it in its environment$/m,
        );
        // Claude Code gave its servers its whole environment; mcpd does not: said, with the remedy.
        expect(out).toMatch(/^environment: Claude Code starts its local servers with its whole environment/m);
        expect(out).toMatch(/If tools, db needs another variable you export, add it to that server's "env"/);
        // Literal secrets are never printed.
        for (const secret of ["sk-live-abcdef1234567890", "sk-arg-secret-5566", "team-literal-9f8e7d"]) expect(out).not.toContain(secret);
      }

      const written = servers();
      expect(Object.keys(written)).toEqual(["api", "api-sse", "gateway", "tools", "db"]);
      expect(written.api).toEqual({ type: "http", url: "${API_BASE_URL:-https://api.example.com}/mcp" });
      // The daemon resolves the default when it loads the file (here with GATEWAY_URL and TOOLS_TOKEN set).
      const valid = await world.run(["config", "validate"], { env: { ...env, GATEWAY_URL: "https://gw.example.com", TOOLS_TOKEN: "t" } });
      expect(valid.code, valid.stdout).toBe(0);
      expect(valid.stdout).toMatch(/^api +http +yes +https:\/\/api\.example\.com\/mcp$/m);
      expect(valid.stdout).toMatch(/^gateway +http +yes +https:\/\/gw\.example\.com\/mcp$/m);
    });

    it("--file reads that file only; a missing --file is an error", async () => {
      const r = await world.run(["config", "import", "--from", "claude-code", "--file", "project/.mcp.json"]);
      expect(r.code).toBe(0);
      expect(Object.keys(servers()).sort()).toEqual(["db", "memory"]);
      const missing = await world.run(["config", "import", "--from", "cursor", "--file", "nope.json"]);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain("nope.json: no such file");
    });
  });
});

describe("mcpd install-service", () => {
  const hasSystemdAnalyze = spawnSync("sh", ["-c", "command -v systemd-analyze"]).status === 0;

  it("--print --systemd: a unit with absolute node and mcpd, the daemon's node flags, Restart=on-failure and the installing PATH", async () => {
    const env = { ...world.env, PATH: `/opt/special/bin:${process.env.PATH}` };
    const r = await world.run(["install-service", "--print", "--systemd"], { env });
    expect(r.code).toBe(0);
    // The daemon's node flags, as for the daemon `mcpd start` launches (docs/operations.md): node already
    // has them, so the foreground start runs the daemon in place, as systemd's main process.
    expect(r.stdout).toContain(`ExecStart="${process.execPath}" "--max-semi-space-size=2" "--expose-gc" "${MCPD_BIN}" start --foreground`);
    expect(r.stdout).toContain("Restart=on-failure");
    expect(r.stdout).toContain(`Environment="PATH=/opt/special/bin:`);
    expect(r.stdout).toContain(`Environment="MCPD_HOME=${world.mcpdHome}"`);
    expect(existsSync(join(world.home, ".config"))).toBe(false);
    // Verified by systemd itself where it is installed.
    if (hasSystemdAnalyze) {
      const unit = join(world.root, "mcpd.service");
      writeFileSync(unit, r.stdout);
      const v = spawnSync("systemd-analyze", ["verify", unit], { encoding: "utf8" });
      expect(v.stderr).not.toMatch(/ignoring|Unknown|Failed/i);
      expect(v.status).toBe(0);
    }
  });

  it("--print --launchd: a well-formed plist, with the daemon's node flags", async () => {
    const r = await world.run(["install-service", "--print", "--launchd"], {
      env: { ...world.env, PATH: "/opt/special/bin:/usr/bin:/bin" },
    });
    expect(r.code).toBe(0);
    const plist = parsePlist(r.stdout) as Record<string, unknown>;
    expect(plist.Label).toBe("dev.mcpd");
    expect(plist.ProgramArguments).toEqual([process.execPath, "--max-semi-space-size=2", "--expose-gc", MCPD_BIN, "start", "--in-process"]);
    expect(plist.KeepAlive).toEqual({ SuccessfulExit: false });
    expect((plist.EnvironmentVariables as Record<string, string>).PATH).toBe("/opt/special/bin:/usr/bin:/bin");
    expect(plist.StandardErrorPath).toBe(join(world.mcpdHome, "launchd.stderr.log"));
    const plutil = spawnSync("sh", ["-c", "command -v plutil"]).status === 0;
    if (plutil) {
      const file = join(world.root, "dev.mcpd.plist");
      writeFileSync(file, r.stdout);
      expect(spawnSync("plutil", ["-lint", file]).status).toBe(0);
    }
  });

  it("writes the unit under HOME, prints the enable commands; uninstall removes it", async () => {
    const r = await world.run(["install-service", "--systemd"]);
    expect(r.code).toBe(0);
    const unit = join(world.home, ".config/systemd/user/mcpd.service");
    expect(r.stdout).toContain(`wrote ${unit}`);
    expect(r.stdout).toContain("systemctl --user daemon-reload && systemctl --user enable --now mcpd");
    expect(readFileSync(unit, "utf8")).toContain("start --foreground");

    const l = await world.run(["install-service", "--launchd"]);
    const plist = join(world.home, "Library/LaunchAgents/dev.mcpd.plist");
    expect(l.stdout).toContain(`launchctl bootstrap gui/$(id -u) ${plist}`);
    expect(existsSync(plist)).toBe(true);

    const u = await world.run(["uninstall-service", "--systemd"]);
    expect(u.code).toBe(0);
    expect(u.stdout).toContain(`removed ${unit}`);
    expect(u.stdout).toContain("systemctl --user stop mcpd");
    expect(existsSync(unit)).toBe(false);
    expect((await world.run(["uninstall-service", "--systemd"])).stdout).toContain("no systemd service installed");
    expect((await world.run(["uninstall-service", "--launchd"])).stdout).toContain("launchctl bootout gui/$(id -u)/dev.mcpd");
    expect(existsSync(plist)).toBe(false);
  });
});
