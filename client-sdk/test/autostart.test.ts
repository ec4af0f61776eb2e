import { describe, expect, it } from "vitest";
import type { McpdError } from "@mcpd/protocol";
import { autostartCommand, runAutostart } from "../src/autostart.js";

describe("autostart", () => {
  it("runs $MCPD_BIN (default mcpd) start, and .js commands with the current node", () => {
    expect(autostartCommand(false)).toBeUndefined();
    expect(autostartCommand(true, {})).toEqual({ command: "mcpd", args: ["start"] });
    expect(autostartCommand(true, { MCPD_BIN: "/opt/mcpd/bin/mcpd.js" })).toEqual({
      command: process.execPath,
      args: ["/opt/mcpd/bin/mcpd.js", "start"],
    });
    expect(autostartCommand({ command: "/usr/bin/mcpd", args: ["start", "-q"] })).toEqual({
      command: "/usr/bin/mcpd",
      args: ["start", "-q"],
    });
    expect(() => autostartCommand({ command: "", args: [] })).toThrow(/autostart must be/);
  });

  it("resolves when the command exits 0, passing MCPD_SOCKET when a socket path was chosen", async () => {
    const script = "if (process.env.MCPD_SOCKET !== '/tmp/x.sock') process.exit(9)";
    await runAutostart({ command: process.execPath, args: ["-e", script] }, { socketPath: "/tmp/x.sock" });
  });

  it("fails with MCPD_DAEMON_UNAVAILABLE and the command's output when it exits non-zero", async () => {
    const err = (await runAutostart({
      command: process.execPath,
      args: ["-e", "console.error('config is broken'); process.exit(2)"],
    }).catch((e: unknown) => e)) as McpdError;
    expect(err.code).toBe("MCPD_DAEMON_UNAVAILABLE");
    expect(err.message).toContain("exited with code 2");
    expect(err.message).toContain("config is broken");
  });

  it("fails with MCPD_DAEMON_UNAVAILABLE naming the command when it does not exist", async () => {
    const err = (await runAutostart(true, { env: { MCPD_BIN: "/nonexistent/mcpd-xyz" } }).catch((e: unknown) => e)) as McpdError;
    expect(err.code).toBe("MCPD_DAEMON_UNAVAILABLE");
    expect(err.message).toContain("command not found: /nonexistent/mcpd-xyz");
  });

  it("stops a command that does not finish in time", async () => {
    const err = (await runAutostart({ command: process.execPath, args: ["-e", "setInterval(() => {}, 1000)"] }, { timeoutMs: 300 }).catch(
      (e: unknown) => e,
    )) as McpdError;
    expect(err.code).toBe("MCPD_DAEMON_UNAVAILABLE");
    expect(err.message).toContain("did not finish within 300ms");
  });
});
