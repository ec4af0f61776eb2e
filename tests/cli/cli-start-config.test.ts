/**
 * `mcpd start` and the config file it is told to use: a file named with `--config` or `MCPD_CONFIG`
 * must exist (a typo must not start an empty daemon); the default location may be absent.
 */
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CliWorld } from "./cli-harness.js";

let world: CliWorld;
beforeEach(() => {
  world = new CliWorld();
});
afterEach(async () => {
  await world.dispose();
});

/** Nothing of a daemon: no process of this world, no socket, no pid file. */
function expectNoDaemon(what: string): void {
  expect(world.processes(), `${what}: processes`).toEqual([]);
  expect(existsSync(join(world.mcpdHome, "mcpd.sock")), `${what}: socket`).toBe(false);
  expect(existsSync(join(world.mcpdHome, "mcpd.pid")), `${what}: pid file`).toBe(false);
}

describe("mcpd start with a config file that does not exist", () => {
  it("regression: --config naming a missing file exits 1 naming it, detached and --foreground, and starts nothing", async () => {
    const missing = join(world.root, "nonexist.json");
    for (const args of [
      ["start", "--config", missing],
      ["start", "--foreground", "--config", missing],
    ]) {
      const r = await world.run(args);
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.stderr, args.join(" ")).toContain(missing);
      expect(r.stderr, args.join(" ")).toMatch(/not found/);
      expectNoDaemon(args.join(" "));
    }
    // A relative --config is named as the absolute path it resolved to.
    const rel = await world.run(["start", "--config", "typo.json"]);
    expect(rel.code).toBe(1);
    expect(rel.stderr).toContain(join(world.root, "typo.json"));
    expectNoDaemon("relative --config");
  });

  it("regression: MCPD_CONFIG naming a missing file exits 1 naming it, and starts nothing", async () => {
    // CliWorld's MCPD_CONFIG names world.configFile, which no test here has written.
    expect(existsSync(world.configFile)).toBe(false);
    for (const args of [["start"], ["start", "--foreground"]]) {
      const r = await world.run(args);
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.stderr, args.join(" ")).toContain(world.configFile);
      expect(r.stderr, args.join(" ")).toMatch(/MCPD_CONFIG/);
      expectNoDaemon(args.join(" "));
    }
    // `config validate` agrees with the daemon: that file is not "valid, no servers".
    const validate = await world.run(["config", "validate"]);
    expect(validate.code).toBe(1);
    expect(validate.stdout).toContain(`invalid: ${world.configFile}: cannot read config file: config file not found`);
  });

  it("the default location may be absent: the daemon starts with zero servers", async () => {
    const env: NodeJS.ProcessEnv = { ...world.env, MCPD_CONFIG_DIR: join(world.root, "cfg") };
    delete env.MCPD_CONFIG;
    mkdirSync(join(world.root, "cfg"));
    const r = await world.run(["start"], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/mcpd started/);
    const status = await world.run(["status", "--json"], { env });
    const json = JSON.parse(status.stdout);
    expect(json.daemon).toMatchObject({ configFile: join(world.root, "cfg", "config.json") });
    expect(json.servers).toEqual([]);
    expect((await world.run(["stop"], { env })).code).toBe(0);
    expect(readdirSync(join(world.root, "cfg"))).toEqual([]);
  });
});
