/** End-to-end regressions from the config review, through the real `mcpd` CLI. */
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CliWorld } from "./cli-harness.js";
import { parsePlist } from "./plist-parse.js";

let world: CliWorld;
beforeEach(() => {
  world = new CliWorld();
});
afterEach(async () => {
  await world.dispose();
});

describe("regression: mcpd install-service with relative MCPD_* paths", () => {
  // The service runs in another directory: relative paths written as they are would name other files.
  const relative = { MCPD_HOME: "h1", MCPD_CONFIG: "./c1.json", MCPD_SOCKET: "run/mcpd.sock", MCPD_CONFIG_DIR: "../cfgdir" };

  it("regression: the systemd unit holds them resolved against the current directory", async () => {
    const r = await world.run(["install-service", "--print", "--systemd"], { env: { ...world.env, ...relative } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Environment="MCPD_HOME=${join(world.root, "h1")}"`);
    expect(r.stdout).toContain(`Environment="MCPD_CONFIG=${join(world.root, "c1.json")}"`);
    expect(r.stdout).toContain(`Environment="MCPD_SOCKET=${join(world.root, "run", "mcpd.sock")}"`);
    expect(r.stdout).toContain(`Environment="MCPD_CONFIG_DIR=${join(world.root, "..", "cfgdir")}"`);
  });

  it("regression: so does the launchd plist; ~/ and absolute paths and other variables are kept as meant", async () => {
    const env = { ...world.env, ...relative, MCPD_CONFIG: "~/mcpd/c.json", MCPD_SOCKET: "/abs/mcpd.sock", MCPD_HTTP_PORT: "0" };
    const r = await world.run(["install-service", "--print", "--launchd"], { env });
    expect(r.code).toBe(0);
    const vars = (parsePlist(r.stdout) as { EnvironmentVariables: Record<string, string> }).EnvironmentVariables;
    expect(vars).toMatchObject({
      MCPD_HOME: join(world.root, "h1"),
      MCPD_CONFIG: join(world.home, "mcpd", "c.json"),
      MCPD_SOCKET: "/abs/mcpd.sock",
      MCPD_HTTP_PORT: "0",
    });
  });
});
