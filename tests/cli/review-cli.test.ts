/** End-to-end regressions from the config review, through the real `mcpd` CLI. */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CliWorld, FIXTURE, until } from "./cli-harness.js";
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

/** A server that prints its arguments and secret-looking env values to stderr, then runs the fixture. */
function leakServer(w: CliWorld): string {
  const file = join(w.root, "leak.mjs");
  writeFileSync(
    file,
    `import { spawn } from "node:child_process";
process.stderr.write("ARGS " + process.argv.slice(2).join(" ") + "\\n");
for (const [k, v] of Object.entries(process.env)) if (/^(DB|MY)_/.test(k)) process.stderr.write("ENV " + k + "=" + v + "\\n");
const c = spawn(process.execPath, [${JSON.stringify(FIXTURE)}, "--name", "leak"], { stdio: "inherit" });
c.on("exit", (code) => process.exit(code ?? 0));
`,
  );
  return file;
}

describe("regression: secrets in mcpd's logs and messages", () => {
  it("regression: a URL password with a stray % does not stop the server's other secrets being masked in mcpd logs", async () => {
    world.writeConfig({
      lk: {
        command: process.execPath,
        args: [leakServer(world), "--password", "argPassword99"],
        env: { [world.marker]: "1", MY_TOKEN: "abcdefSECRETvalue", DB_URL: "postgres://dbuser:pw%zzSecret@localhost/db" },
      },
    });
    expect((await world.run(["start"])).code).toBe(0);
    const logs = await until(
      async () => {
        const r = await world.run(["logs", "lk"]);
        return r.stdout.includes("ENV DB_URL=") && r.stdout.includes("ENV MY_TOKEN=") ? r.stdout : undefined;
      },
      "the server's stderr in mcpd logs",
      30_000,
    );
    for (const secret of ["argPassword99", "abcdefSECRETvalue", "pw%zzSecret"]) expect(logs).not.toContain(secret);
    expect(logs).toContain("ENV MY_TOKEN=***");
  });

  it("regression: mcpd reload and SIGHUP of a config whose env/headers/url hold secrets in the wrong shape say what is wrong without them", async () => {
    world.writeConfig({ ok: world.fixture("ok") });
    expect((await world.run(["start"])).code).toBe(0);
    world.writeConfig({
      a: { command: "x", env: "API_TOKEN=SECRETSTR123" },
      b: { url: "https://mcp.example.com/mcp", headers: "Authorization: Bearer SECRETHDR456" },
      c: { url: "https://bob:SECRETPW789@exa mple.com/mcp?token=SECRETQ000" },
    });
    const r = await world.run(["reload"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`server "a": "env" must be an object of string values, got a string`);
    expect(r.stderr).toContain(`server "b": "headers" must be an object of string values, got a string`);
    expect(r.stderr).toContain(`server "c": "url" is not a valid URL: "https://***@exa mple.com/mcp?***"`);
    // Each refused reload is in mcpd.log: `mcpd reload`'s (regression: only SIGHUP's was), then SIGHUP's (systemctl reload).
    const refusals = (n: number) => () => {
      const text = readFileSync(join(world.mcpdHome, "mcpd.log"), "utf8");
      return text.split("reload failed").length - 1 >= n ? text : undefined;
    };
    await until(refusals(1), "mcpd reload's refusal in mcpd.log");
    process.kill(world.daemonPid() as number, "SIGHUP");
    const log = await until(refusals(2), "SIGHUP's refusal in mcpd.log");
    expect(log).toContain("is not a valid URL");
    for (const secret of ["SECRETSTR123", "SECRETHDR456", "SECRETPW789", "SECRETQ000"]) {
      expect(r.stderr).not.toContain(secret);
      expect(log).not.toContain(secret);
    }
  });
});
