import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parsePlist } from "../../../tests/cli/plist-parse.js";
import { serviceEnvironment } from "../../src/service/service-env.js";
import { systemdQuote, systemdUnit } from "../../src/service/systemd-unit.js";
import { launchdPlist } from "../../src/service/launchd-plist.js";
import { defaultServiceKind, installService, serviceFilePath, uninstallService } from "../../src/service/service-install.js";

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "mcpd-svc-"));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function hasCommand(cmd: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${cmd}`]).status === 0;
}

describe("serviceEnvironment", () => {
  it("keeps PATH and MCPD_* variables only, sorted, then the daemon's allocator settings", () => {
    expect(
      serviceEnvironment({ PATH: "/a:/b", HOME: "/h", MCPD_SOCKET: "/s", MCPD_HOME: "/m", MCPD_EMPTY: "", SECRET: "x" }, "/w"),
    ).toEqual([
      ["PATH", "/a:/b"],
      ["MCPD_HOME", "/m"],
      ["MCPD_SOCKET", "/s"],
      ["MALLOC_MMAP_THRESHOLD_", "65536"],
      ["MALLOC_TRIM_THRESHOLD_", "131072"],
    ]);
  });

  it("keeps the installing shell's own allocator settings", () => {
    expect(serviceEnvironment({ MALLOC_MMAP_THRESHOLD_: "16384" }, "/w")).toEqual([
      ["MALLOC_MMAP_THRESHOLD_", "16384"],
      ["MALLOC_TRIM_THRESHOLD_", "131072"],
    ]);
  });
});

describe("systemd unit", () => {
  it("quotes words the way systemd reads them", () => {
    expect(systemdQuote('a "b" 50% \\', false)).toBe('"a \\"b\\" 50%% \\\\"');
    expect(systemdQuote("$HOME", true)).toBe('"$$HOME"');
  });

  it("runs node with the absolute bin, restarts on failure and carries the installing PATH", () => {
    const unit = systemdUnit({
      nodePath: "/usr/bin/node",
      nodeFlags: ["--max-semi-space-size=2"],
      binPath: "/opt/mcpd/bin/mcpd.js",
      env: [
        ["PATH", "/x/bin:/usr/bin"],
        ["MCPD_HOME", "/m h"],
      ],
    });
    expect(unit).toContain('ExecStart="/usr/bin/node" "--max-semi-space-size=2" "/opt/mcpd/bin/mcpd.js" start --foreground');
    expect(unit).toContain("Restart=on-failure");
    expect(unit).toContain('Environment="PATH=/x/bin:/usr/bin"');
    expect(unit).toContain('Environment="MCPD_HOME=/m h"');
    expect(unit).toContain("WantedBy=default.target");
  });

  it("passes systemd-analyze verify (where systemd-analyze exists; else a structural check)", () => {
    const dir = tempDir();
    const bin = join(dir, "with space", "mcpd.js");
    mkdirSync(join(dir, "with space"));
    writeFileSync(bin, "");
    const file = join(dir, "mcpd.service");
    writeFileSync(
      file,
      systemdUnit({
        nodePath: process.execPath,
        nodeFlags: ["--max-semi-space-size=2"],
        binPath: bin,
        env: serviceEnvironment({ PATH: "/usr/bin:/bin", MCPD_HOME: "/tmp/x%y" }, "/w"),
      }),
    );
    const text = readFileSync(file, "utf8");
    // Every non-comment line is a section header, a Key=value or blank: systemd's own grammar.
    for (const line of text.split("\n")) expect(line).toMatch(/^(#.*|\[[A-Za-z]+\]|[A-Za-z]+=.*|)$/);
    expect(text).toContain('Environment="MCPD_HOME=/tmp/x%%y"');
    if (!hasCommand("systemd-analyze")) return;
    const r = spawnSync("systemd-analyze", ["verify", file], { encoding: "utf8" });
    expect(r.stderr).not.toMatch(/ignoring|Unknown|Failed/i);
    expect(r.status).toBe(0);
  });
});

describe("launchd plist", () => {
  it("is a well-formed plist with the program, KeepAlive, log paths and PATH", () => {
    const xml = launchdPlist(
      {
        nodePath: "/usr/local/bin/node",
        nodeFlags: ["--max-semi-space-size=2"],
        binPath: "/Users/a b/mcpd & co/bin/mcpd.js",
        env: [
          ["PATH", "/usr/bin:<odd>"],
          ["MCPD_HOME", "/m"],
        ],
      },
      { stdoutPath: "/s/out.log", stderrPath: "/s/err.log" },
    );
    const plist = parsePlist(xml) as Record<string, unknown>;
    expect(plist.Label).toBe("dev.mcpd");
    expect(plist.ProgramArguments).toEqual([
      "/usr/local/bin/node",
      "--max-semi-space-size=2",
      "/Users/a b/mcpd & co/bin/mcpd.js",
      "start",
      "--in-process",
    ]);
    expect(plist.KeepAlive).toEqual({ SuccessfulExit: false });
    expect(plist.RunAtLoad).toBe(true);
    expect(plist.StandardOutPath).toBe("/s/out.log");
    expect(plist.StandardErrorPath).toBe("/s/err.log");
    expect(plist.EnvironmentVariables).toEqual({ PATH: "/usr/bin:<odd>", MCPD_HOME: "/m" });
  });

  it("the checker itself rejects broken XML", () => {
    expect(() => parsePlist("<plist><dict><key>a</key><string>x</dict></plist>")).toThrow(/expected <\/string>/);
    expect(() => parsePlist("<plist><string>a & b</string></plist>")).toThrow(/bare &/);
  });
});

describe("install and uninstall", () => {
  it("picks the platform's manager and path", () => {
    expect(defaultServiceKind("darwin")).toBe("launchd");
    expect(defaultServiceKind("linux")).toBe("systemd");
    expect(serviceFilePath("systemd", "/h")).toBe("/h/.config/systemd/user/mcpd.service");
    expect(serviceFilePath("launchd", "/h")).toBe("/h/Library/LaunchAgents/dev.mcpd.plist");
  });

  it("writes the systemd unit and removes it with its enable link", async () => {
    const home = tempDir();
    const r = await installService({
      kind: "systemd",
      home,
      nodePath: "/n",
      binPath: "/b",
      env: { PATH: "/p" },
      cwd: home,
      logFile: join(home, "s", "mcpd.log"),
    });
    expect(r.file).toBe(join(home, ".config/systemd/user/mcpd.service"));
    expect(readFileSync(r.file, "utf8")).toContain('Environment="PATH=/p"');
    expect(r.commands).toEqual(["systemctl --user daemon-reload && systemctl --user enable --now mcpd"]);
    const wants = join(home, ".config/systemd/user/default.target.wants");
    mkdirSync(wants);
    symlinkSync(r.file, join(wants, "mcpd.service"));
    const u = await uninstallService("systemd", home);
    expect(u.removed).toHaveLength(2);
    expect(existsSync(r.file)).toBe(false);
    expect((await uninstallService("systemd", home)).removed).toEqual([]);
  });

  it("writes the launchd plist", async () => {
    const home = tempDir();
    const r = await installService({
      kind: "launchd",
      home,
      nodePath: "/n",
      binPath: "/b",
      env: { PATH: "/p" },
      cwd: home,
      logFile: join(home, "s", "mcpd.log"),
    });
    expect(r.file).toBe(join(home, "Library/LaunchAgents/dev.mcpd.plist"));
    expect(r.commands[0]).toBe(`launchctl bootstrap gui/$(id -u) ${r.file}`);
    const plist = parsePlist(readFileSync(r.file, "utf8")) as Record<string, unknown>;
    expect(plist.StandardErrorPath).toBe(join(home, "s", "launchd.stderr.log"));
  });
});
