import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { checkSocketPath, maxSocketPathBytes, resolvePaths } from "../src/paths.js";

// Fixed OS facts so every rule is checked independently of the machine running the test.
const os_ = { homedir: "/home/ann", tmpdir: "/tmp", uid: 1000, cwd: "/work/dir" };

describe("resolvePaths", () => {
  it("falls back to tmpdir, ~/.local/state and ~/.config when nothing is set", () => {
    expect(resolvePaths({}, os_)).toEqual({
      runtimeDir: "/tmp/mcpd-1000",
      socketPath: "/tmp/mcpd-1000/mcpd.sock",
      pidFile: "/tmp/mcpd-1000/mcpd.pid",
      stateDir: "/home/ann/.local/state/mcpd",
      logFile: "/home/ann/.local/state/mcpd/mcpd.log",
      cacheDir: "/home/ann/.local/state/mcpd/cache",
      childrenFile: "/home/ann/.local/state/mcpd/children.json",
      configDir: "/home/ann/.config/mcpd",
      configFile: "/home/ann/.config/mcpd/config.json",
    });
  });

  it("uses the XDG directories when set", () => {
    const p = resolvePaths({ XDG_RUNTIME_DIR: "/run/user/1000", XDG_STATE_HOME: "/s", XDG_CONFIG_HOME: "/c" }, os_);
    expect(p.runtimeDir).toBe("/run/user/1000/mcpd");
    expect(p.socketPath).toBe("/run/user/1000/mcpd/mcpd.sock");
    expect(p.pidFile).toBe("/run/user/1000/mcpd/mcpd.pid");
    expect(p.stateDir).toBe("/s/mcpd");
    expect(p.logFile).toBe("/s/mcpd/mcpd.log");
    expect(p.cacheDir).toBe("/s/mcpd/cache");
    expect(p.childrenFile).toBe("/s/mcpd/children.json");
    expect(p.configDir).toBe("/c/mcpd");
    expect(p.configFile).toBe("/c/mcpd/config.json");
  });

  it("ignores relative and empty XDG values, as the XDG spec asks", () => {
    const p = resolvePaths({ XDG_RUNTIME_DIR: "run", XDG_STATE_HOME: "", XDG_CONFIG_HOME: "./c" }, os_);
    expect(p.runtimeDir).toBe("/tmp/mcpd-1000");
    expect(p.stateDir).toBe("/home/ann/.local/state/mcpd");
    expect(p.configDir).toBe("/home/ann/.config/mcpd");
  });

  it("MCPD_HOME wins over XDG for runtime and state, but not for config", () => {
    const p = resolvePaths({ MCPD_HOME: "/h", XDG_RUNTIME_DIR: "/run/user/1000", XDG_STATE_HOME: "/s", XDG_CONFIG_HOME: "/c" }, os_);
    expect(p.runtimeDir).toBe("/h");
    expect(p.socketPath).toBe("/h/mcpd.sock");
    expect(p.pidFile).toBe("/h/mcpd.pid");
    expect(p.stateDir).toBe("/h");
    expect(p.logFile).toBe("/h/mcpd.log");
    expect(p.cacheDir).toBe("/h/cache");
    expect(p.childrenFile).toBe("/h/children.json");
    expect(p.configFile).toBe("/c/mcpd/config.json");
  });

  it("MCPD_SOCKET wins over MCPD_HOME, and the pid file sits beside the socket", () => {
    const p = resolvePaths({ MCPD_HOME: "/h", MCPD_SOCKET: "/sock/dir/x.sock" }, os_);
    expect(p.socketPath).toBe("/sock/dir/x.sock");
    expect(p.pidFile).toBe("/sock/dir/mcpd.pid");
    expect(p.runtimeDir).toBe("/h");
    expect(p.stateDir).toBe("/h");
  });

  it("MCPD_CONFIG_DIR wins over XDG_CONFIG_HOME; MCPD_CONFIG wins over the directory; --config wins over both", () => {
    const env = { MCPD_CONFIG_DIR: "/cd", XDG_CONFIG_HOME: "/c" };
    expect(resolvePaths(env, os_).configDir).toBe("/cd");
    expect(resolvePaths(env, os_).configFile).toBe("/cd/config.json");
    const withFile = { ...env, MCPD_CONFIG: "/f/my.json" };
    expect(resolvePaths(withFile, os_).configFile).toBe("/f/my.json");
    expect(resolvePaths(withFile, os_).configDir).toBe("/cd");
    expect(resolvePaths(withFile, { ...os_, configFile: "/cli.json" }).configFile).toBe("/cli.json");
  });

  it("resolves relative and ~ MCPD values and --config to absolute paths", () => {
    const p = resolvePaths({ MCPD_HOME: "rel/home", MCPD_SOCKET: "~/s.sock", MCPD_CONFIG_DIR: "~" }, { ...os_, configFile: "conf/c.json" });
    expect(p.runtimeDir).toBe("/work/dir/rel/home");
    expect(p.socketPath).toBe("/home/ann/s.sock");
    expect(p.configDir).toBe("/home/ann");
    expect(p.configFile).toBe("/work/dir/conf/c.json");
    expect(resolvePaths({}, { ...os_, configFile: "~/x.json" }).configFile).toBe("/home/ann/x.json");
  });

  it("treats empty MCPD values as unset", () => {
    const p = resolvePaths({ MCPD_HOME: "", MCPD_SOCKET: "", MCPD_CONFIG: "", MCPD_CONFIG_DIR: "" }, os_);
    expect(p).toEqual(resolvePaths({}, os_));
  });

  it("takes the home directory from env.HOME when no override is given", () => {
    const p = resolvePaths({ HOME: "/home/bob" }, { tmpdir: "/tmp", uid: 7 });
    expect(p.stateDir).toBe("/home/bob/.local/state/mcpd");
    expect(p.configDir).toBe("/home/bob/.config/mcpd");
    expect(p.runtimeDir).toBe("/tmp/mcpd-7");
  });

  it("uses the real OS directories and uid by default, and returns only absolute paths", () => {
    const p = resolvePaths({});
    for (const value of Object.values(p)) expect(path.isAbsolute(value)).toBe(true);
    const uid = typeof process.getuid === "function" ? process.getuid() : os.userInfo().username;
    expect(p.runtimeDir).toBe(path.join(path.resolve(os.tmpdir()), `mcpd-${uid}`));
    expect(p.stateDir).toBe(path.join(os.homedir(), ".local", "state", "mcpd"));
  });
});

describe("socket path limits", () => {
  it("knows the sun_path limits of Linux and macOS", () => {
    expect(maxSocketPathBytes("linux")).toBe(107);
    expect(maxSocketPathBytes("darwin")).toBe(103);
  });

  it("accepts a path at the limit and names the path, its size and the fix when over it", () => {
    const at = "/" + "a".repeat(106);
    expect(checkSocketPath(at, "linux")).toBeUndefined();
    const over = at + "b";
    const message = checkSocketPath(over, "linux");
    expect(message).toContain("108 bytes");
    expect(message).toContain("107-byte limit");
    expect(message).toContain(over);
    expect(message).toContain("MCPD_SOCKET");
    expect(checkSocketPath("/" + "a".repeat(103), "darwin")).toContain("103-byte limit");
    expect(checkSocketPath("/" + "a".repeat(102), "darwin")).toBeUndefined();
  });

  it("counts bytes, not characters", () => {
    // 53 two-byte characters + "/" = 107 bytes: fits; one more character does not.
    expect(checkSocketPath("/" + "é".repeat(53), "linux")).toBeUndefined();
    expect(checkSocketPath("/" + "é".repeat(54), "linux")).toContain("109 bytes");
  });
});
